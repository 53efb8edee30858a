"""What a worker is told, and how: its payload (the cells and the visible problems) in an unnamed file it
can only read, a problem's definition (sent with the command that asks for it), room in its control
pipe for the largest one, and the channels it speaks on."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
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


def channels() -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """A worker's channels, (the grader's ends, the worker's ends) of each: its messages, a socket (unlike a
    pipe, it cannot be opened again through /proc/self/fd, a path any library's file writer would take);
    what it prints, a pipe; its control pipe, with room for a hidden problem's inputs in one write."""
    messages, messages_w = (end.detach() for end in socket.socketpair())
    printed, output_w = os.pipe()
    control_r, control = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(control, F_SETPIPE_SZ, CONTROL_PIPE_BYTES)
    return (messages, printed, control), (messages_w, output_w, control_r)
