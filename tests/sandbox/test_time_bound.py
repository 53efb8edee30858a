"""Is the bound on one submission's time that docs/instructors.md gives the one job.py's deadlines make?

No worker runs and no time passes: a Job (job.py, the grader's side of one worker) is driven by hand
along the slowest path its deadlines allow, on a clock of the test's own, with the killing of processes
replaced by nothing. Each worker takes its cells to the last moment of the load, then the next problem's
measurement to the last moment and its explanation past it, so that it is killed and a new worker runs
the cells again for the problems left; the last one explains in time, then takes its whole grace to stop.
"""

import re
import subprocess

import pytest

from autograder.sandbox import job as job_module
from autograder.sandbox.budget import BACKSTOP
from autograder.sandbox.confine import Limits
from autograder.sandbox.tasks import Measure, Task
from tests.conftest import ROOT

LOAD, PROBLEM, PROBLEMS = 3.0, 2.0, 4  # the issue's --load-timeout 3 --problem-timeout 2, custom-functions


class Clock:
    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(job_module, "time", clock)
    for name in ("kill_group", "kill_tree", "kill_user", "first_child"):  # no process is touched
        monkeypatch.setattr(job_module, name, lambda *args, **kwargs: 0, raising=False)
    return clock


def slowest_path(clock: Clock, pid: int) -> float:
    problems = [Measure(f"P{i}", {}, [], plan=lambda data: {"explain": True}) for i in range(PROBLEMS)]
    task = Task("key", ["pass"], problems)
    limits = Limits(load_seconds=LOAD, problem_seconds=PROBLEM)
    todo, previous, workers = problems, None, 0
    while todo:
        workers += 1
        job = job_module.Job(task, todo, limits, 0, None, None, previous)
        job.started(pid, None)  # no cgroup, no pidfd
        clock.now = job.deadline  # the cells end at the last moment, spending no CPU time (they wait):
        while (later := job.budget.later()) is not None:  # their budget lasts to the backstop too
            clock.now = later
        job.handle({"event": "loaded"})
        clock.now = job.deadline  # the measurement too, spending no CPU time (the worker waits): its
        while (later := job.budget.later()) is not None:  # budget lasts to the wall clock's backstop
            clock.now = later
        job.handle({"event": "measured", "problem": job.current.name, "data": {}})
        clock.now = job.deadline
        if len(job.todo) > 1:
            job.expire()  # the explanation runs out of time: the worker is killed
        else:
            job.handle({"event": "measured in full", "problem": job.current.name, "data": {}})
            clock.now = job.deadline  # the grace to stop, to its end
            job.expire()
        previous = job.finish(None, set(), 9)
        todo = job.remaining
    assert workers == PROBLEMS
    return previous.seconds


def test_the_documented_bound_is_the_slowest_path_of_the_deadlines(clock):
    """Does the slowest path take n × (3 × load + 4 × problem) + 2 s (cells and a measurement that wait
    are stopped at three times their budget on the wall clock, an explanation at one), and does
    docs/instructors.md say so?"""
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        seconds = slowest_path(clock, sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert BACKSTOP == 3
    assert seconds == pytest.approx(PROBLEMS * (BACKSTOP * LOAD + (BACKSTOP + 1) * PROBLEM) + 2) == 70
    docs = re.sub(r"\s+", " ", (ROOT / "docs" / "instructors.md").read_text())
    assert "n × (3 × `--load-timeout` + 4 × `--problem-timeout`) + 2 seconds" in docs
    assert "4 × (3 × 3 + 4 × 2) + 2 = 70 s" in docs
