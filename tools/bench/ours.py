"""This autograder's side of the benchmark: `python -m autograder grade` on the class, and its verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from autograder.results import read_tests
from tools.bench import ASSIGNMENT, ROOT
from tools.bench.report import intervals
from tools.bench.students import Student


def run_ours(ours: Path, out: Path, jobs: int | None, students: list[Student]) -> tuple[float, list[float]]:
    command = [str(ROOT / ".venv" / "bin" / "python"), "-m", "autograder", "grade", "--assignment",
               ASSIGNMENT, "--out", str(out), "--force", "--quiet", str(ours)]
    if jobs:
        command[5:5] = ["--jobs", str(jobs)]
    env = dict(os.environ, PYTHONHASHSEED="0")
    start, t0 = time.time(), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"bench: the autograder failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return wall, intervals(start, [out / s.id / "results.json" for s in students])


def our_verdicts(out: Path, students: list[Student]) -> dict[tuple[str, str], bool]:
    verdicts = {}
    for s in students:
        result = json.loads((out / s.id / "results.json").read_text())
        problems: dict[str, bool] = {}
        for test in read_tests(result):
            problems[test.problem] = problems.get(test.problem, True) and test.passed
        verdicts.update({(s.id, p): ok for p, ok in problems.items()})
    return verdicts
