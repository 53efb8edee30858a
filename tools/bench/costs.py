"""Where our grader's time goes, printed beside the benchmark's ratio: its fixed cost (a whole `grade` run
of one empty submission) and the CPU one right and one wrong submission cost in the sandbox (the workers'
CPU, read as each one is reaped: tools/bench_overhead.py's measurement)."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from tools.bench_overhead import EXAMPLES, _grade, _workers_cpu


def fixed_cost() -> tuple[float, float]:
    """Wall and CPU seconds of a `grade` run over one submission that only imports torch."""
    with tempfile.TemporaryDirectory(prefix="bench-fixed-") as work:
        (Path(work) / "empty.py").write_text("import torch\n")
        return _grade(Path(work), 1)


def submission_cpu(assignment, k: int = 8) -> dict[str, float]:
    """The median CPU seconds of one submission in the sandbox, right (alice.py) and wrong (bob.py), over
    k of each graded one at a time."""
    from autograder.intake.loader import Submission
    from autograder.pipeline import Pipeline

    found = {}
    with Pipeline(assignment, workers=1) as pipeline:
        contained = pipeline.isolation == "container"
        for kind, who in (("right", "alice"), ("wrong", "bob")):
            source = (EXAMPLES / f"{who}.py").read_text()
            cpu, last = [], _workers_cpu(pipeline.pool.server.pid, contained)
            for _ in pipeline.grade([Submission(str(i), None, [source]) for i in range(k)]):
                now = _workers_cpu(pipeline.pool.server.pid, contained)
                cpu.append(now - last)
                last = now
            found[kind] = statistics.median(cpu)
    return found
