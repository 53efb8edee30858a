"""What a worker is told, and how: its payload (the cells and the visible problems) in an unnamed file it
can only read, a problem's definition (sent with the command that asks for it), and room in its control
pipe for the largest one."""

from __future__ import annotations

import json
import os
import tempfile

from autograder.sandbox.tasks import Measure

F_SETPIPE_SZ = 1031
# what an ordinary user may give a pipe (fs.pipe-max-size): a hidden problem's inputs fit in one write
CONTROL_PIPE_BYTES = 1 << 20


def problem(measure: Measure) -> dict:
    """What a worker is told of a problem: how to find and call it, and its inputs."""
    return dict(measure.spec, name=measure.name, cases=measure.cases)


def payload_file(payload: dict) -> int:
    """The payload in a file without a name (gone once closed), open for reading only: the worker reads
    it from this descriptor and can neither write to it nor find where it lies."""
    with tempfile.TemporaryFile("w") as f:
        json.dump(payload, f)
        f.flush()
        return os.open(f"/proc/self/fd/{f.fileno()}", os.O_RDONLY | os.O_CLOEXEC)
