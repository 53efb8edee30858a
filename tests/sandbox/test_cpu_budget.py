"""A problem's time limit is the worker's own CPU time, the wall clock a backstop (sandbox/budget.py):
a submission that burns CPU is stopped once it has spent its budget, one that sleeps by the backstop, and
an honest one the machine starves keeps its points. Without --problem-timeout, each problem's budget is
scaled to its reference (budget.scaled): one that loops is stopped at the floor, and the slowest honest
Functions we know keep every point. No assertion depends on timing: each checks how the grader says it
stopped, which holds on a loaded machine as on an idle one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import config
from autograder.course.assignments.registry import load
from autograder.judge.reference import reference_seconds
from autograder.pipeline import problem_jobs
from autograder.sandbox import job as job_module
from autograder.sandbox.budget import BACKSTOP, Budget, cpu_seconds, scaled
from autograder.sandbox.confine import Limits
from autograder.sandbox.tasks import Measure, Task
from tests.conftest import ROOT

ALICE = ROOT / "examples" / "custom-functions" / "alice.py"
SLOW_HONEST = Path(__file__).with_name("slow_honest.py")
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


def grade(base: Path, files: dict[str, str], *options: str) -> Path:
    subs, out = base / "class", base / "out"
    subs.mkdir()
    for name, text in files.items():
        (subs / name).write_text(text)
    result = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
                             "--out", str(out), *options, "--jobs", "2", "--quiet", str(subs)], cwd=ROOT,
                            capture_output=True, text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return grade(tmp_path_factory.mktemp("budget"), {
        "burns.py": with_backward(LOOPS), "sleeps.py": with_backward(SLEEPS),
        # prints 40 MB while being measured, then is right
        "prints.py": with_backward("        for _ in range(4000):\n            print('spam ' * 2000)\n")},
        "--problem-timeout", str(BUDGET))


@pytest.fixture(scope="module")
def graded_by_default(tmp_path_factory):
    """The default limits: each problem's time scaled to its reference."""
    return grade(tmp_path_factory.mktemp("scaled"), {"burns.py": with_backward(LOOPS),
                                                      "slow_honest.py": SLOW_HONEST.read_text()})


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


def test_by_default_a_submission_that_loops_is_stopped_at_the_floor_not_the_most(graded_by_default):
    said = failure(graded_by_default, "burns")
    assert f"did not finish within {config.PROBLEM_FLOOR_SECONDS:g} s of CPU time" in said


def test_by_default_the_slowest_honest_functions_keep_every_point(graded_by_default):
    result = json.loads((graded_by_default / "slow_honest" / "results.json").read_text())
    assert [t["name"] for t in result["tests"] if t["status"] != "passed"] == []
    assert result["score"] == sum(t["max_score"] for t in result["tests"]) > 0


@pytest.mark.parametrize(("reference", "most", "budget"), [
    (0.001, 20.0, config.PROBLEM_FLOOR_SECONDS),  # a quick reference: the floor
    (0.05, 20.0, 0.05 * config.REFERENCE_SCALE),  # a slow one: scaled
    (1.0, 20.0, 20.0), (0.05, 4.0, 4.0)])  # never past the most
def test_scaled_is_the_reference_times_the_scale_between_the_floor_and_the_most(reference, most, budget):
    assert scaled(reference, most) == pytest.approx(budget)


def test_each_problem_gets_its_scaled_budget_unless_the_limits_fix_one():
    assignment = load().find_assignment("custom-functions")
    jobs = problem_jobs(assignment, 0, Limits(problem_seconds=12.0))
    assert [m.seconds for m in jobs] == [scaled(reference_seconds(p, 0), 12.0) for p in assignment.problems]
    assert all(config.PROBLEM_FLOOR_SECONDS <= m.seconds <= 12.0 for m in jobs)
    fixed = problem_jobs(assignment, 0, Limits(problem_seconds=12.0, scale_to_reference=False))
    assert [m.seconds for m in fixed] == [None] * len(assignment.problems)


def test_a_problems_own_budget_decides_its_deadline_not_the_limits(monkeypatch):
    for name in ("kill_group", "kill_tree", "kill_user"):  # no worker: nothing of this process's to kill
        monkeypatch.setattr(job_module, name, lambda *args, **kwargs: 0)
    problems = [Measure("KillHead", {}, [], seconds=4.0), Measure("MyReLU", {}, [])]
    limits = Limits(problem_seconds=9.0)
    job = job_module.Job(Task("key", ["pass"], problems), problems, limits, 0, None, None, None)
    job.handle({"event": "loaded"})
    assert (job.current.name, job.budget.seconds) == ("KillHead", 4.0)
    job.handle({"event": "measured", "problem": "KillHead", "data": {}})
    assert (job.current.name, job.budget.seconds) == ("MyReLU", 9.0)  # none of its own: the limits'
