"""A problem's time limit is the worker's own CPU time, the wall clock a backstop (sandbox/budget.py):
a submission that burns CPU is stopped once it has spent its budget, one that sleeps by the backstop, and
an honest one the machine starves keeps its points. No assertion depends on timing: each checks how the
grader says it stopped, which holds on a loaded machine as on an idle one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.sandbox import job as job_module
from autograder.sandbox.budget import BACKSTOP, Budget, cpu_seconds
from autograder.sandbox.confine import Limits
from autograder.sandbox.tasks import Measure, Task
from tests.conftest import ROOT

ALICE = ROOT / "examples" / "custom-functions" / "alice.py"
BUDGET = 2  # --problem-timeout
LOOPS = "        while True:\n            pass\n"
SLEEPS = "        import time\n        time.sleep(1000)\n"


def with_backward(body: str) -> str:
    """alice.py (right everywhere) with MyReLU.backward starting with body."""
    source = ALICE.read_text()
    start = source.index("class MyReLU")
    header = "    def backward(ctx, grad_output):\n"
    at = source.index(header, start) + len(header)
    return source[:at] + body + source[at:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("budget")
    subs = base / "class"
    subs.mkdir()
    (subs / "burns.py").write_text(with_backward(LOOPS))
    (subs / "sleeps.py").write_text(with_backward(SLEEPS))
    # prints 40 MB while being measured, then is right
    (subs / "prints.py").write_text(with_backward("        for _ in range(4000):\n"
                                                  "            print('spam ' * 2000)\n"))
    out = base / "out"
    result = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
                             "--out", str(out), "--problem-timeout", str(BUDGET), "--jobs", "2", "--quiet",
                             str(subs)], cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stderr
    return out


def failure(out: Path, sid: str, problem: str = "MyReLU") -> str:
    tests = json.loads((out / sid / "results.json").read_text())["tests"]
    said = [t["output"] for t in tests if t["name"].startswith(problem + ": ") and t["status"] == "failed"]
    return "\n".join(said)


def how_long(text: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) from "(it ran 6 s, 0.1 s of it on the CPU)"."""
    found = re.search(r"it ran (\d+) s, ([\d.]+) s of it on the CPU", text)
    assert found, text
    return float(found[1]), float(found[2])


def test_a_submission_that_burns_cpu_is_stopped_by_its_cpu_time(graded):
    said = failure(graded, "burns")
    assert f"did not finish within {BUDGET} s of CPU time" in said
    ran, cpu = how_long(said)
    assert cpu >= BUDGET * 0.9 or ran >= BACKSTOP * BUDGET  # its budget spent (or, starved, the backstop)


def test_a_submission_that_sleeps_is_stopped_by_the_wall_clocks_backstop(graded):
    said = failure(graded, "sleeps")
    ran, cpu = how_long(said)
    assert cpu < BUDGET and ran >= BACKSTOP * BUDGET - 1  # no CPU spent: the backstop ended it


def test_one_that_prints_a_lot_then_is_right_keeps_its_points(graded):
    result = json.loads((graded / "prints" / "results.json").read_text())
    assert failure(graded, "prints") == "" and result["score"] == sum(t["max_score"] for t in result["tests"])


def test_a_starved_worker_is_not_stopped_before_it_has_spent_its_budget(monkeypatch):
    """On a machine so loaded that the worker gets no CPU at all (a process that sleeps stands for it), the
    problem's wall-clock deadline passing does not stop it: it is asked later, until the backstop."""
    class Clock:
        now = 1000.0

        def monotonic(self):
            return self.now

    clock = Clock()
    monkeypatch.setattr(job_module, "time", clock)
    for name in ("kill_group", "kill_tree", "kill_user"):
        monkeypatch.setattr(job_module, name, lambda *args, **kwargs: 0)
    starved = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        problem = Measure("MyReLU", {}, [])
        job = job_module.Job(Task("key", ["pass"], [problem]), [problem], Limits(problem_seconds=BUDGET), 0,
                             None, None, None)
        job.started(starved.pid, None)
        job.handle({"event": "loaded"})
        first = job.deadline
        clock.now = first
        job.expire()
        assert job.deadline > first and job.current is problem and not job.stopped  # asked again later
        job.handle({"event": "measured", "problem": "MyReLU", "data": {"right": True}})
        assert job.outcome.data["MyReLU"] == {"right": True} and "MyReLU" not in job.outcome.failures
    finally:
        starved.kill()
        starved.wait()


def test_the_cpu_time_is_read_from_the_process_and_counts_what_it_spends():
    budget = Budget(1.0, os.getpid())
    before = cpu_seconds(os.getpid())
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    assert before is not None and budget.used() >= 0.25
