"""A class of any size as the report reads it (results.json rows), without grading it: the mix of issue
34's trial at 1,200 (half right, the rest subtly wrong, broken, crashing, hanging, unreadable), with the
texts the grader writes (checks.Check.unmet's prerequisite note, job.py's crash)."""

from __future__ import annotations

from autograder.course import find_assignment
from autograder.judge.checks import BY_NAME, checks_of, points_of
from autograder.results import name_of

CRASH = "Grading {p} stopped: the worker was killed by SIGSEGV (a crash: a segmentation fault)."
WRONG = "The gradient with respect to input has the wrong sign: it is -1 times the right one at 0.5."
KINDS = ("right", "right", "wrong", "broken", "crash", "hang", "unreadable", "right", "wrong", "right")


def result(assignment, kind: str, sid: str) -> dict:
    tests = []
    for n, problem in enumerate(assignment.problems):
        failed: list[str] = []
        for check in checks_of(problem):
            points = points_of(problem, check)
            needs = [r for r in BY_NAME[check].requires if r in failed]
            if kind == "crash":
                output = CRASH.format(p=problem.name)
            elif needs:
                output = BY_NAME[check].unmet(needs)
            elif kind == "wrong" and n == 0 and check == "gradient":
                output = WRONG
            elif kind == "broken" and n == 1 and check == "forward":
                output = f"forward raised ValueError: shape [{n + 3}] is invalid."
            elif kind == "hang" and n == 2:
                output = f"Grading {problem.name} took longer than 20 seconds and was stopped."
            else:
                output = ""
            if output:
                failed.append(check)
            tests.append({"name": name_of(problem.name, check), "score": 0 if output else points,
                          "max_score": points, "status": "failed" if output else "passed", "output": output})
    extra = {"submission": sid, "file": f"{sid}.ipynb", "status": "graded"}
    if kind == "unreadable":
        extra.update(status="unreadable", error="not a notebook: Expecting value: line 1 column 1")
        tests = [{**t, "score": 0, "status": "failed", "output": "The notebook could not be read."}
                 for t in tests]
    elif kind == "hang":
        extra.update(status="timed out", timed_out=[assignment.problems[2].name])
    return {"score": sum(t["score"] for t in tests), "tests": tests, "extra_data": extra}


def large_class(n: int):
    """(assignment, [(id, results.json)], {id: kind}) for n students of custom-functions."""
    assignment = find_assignment("custom-functions")
    kinds = {f"s{i + 1:04d}": KINDS[i % len(KINDS)] for i in range(n)}
    return assignment, [(sid, result(assignment, kind, sid)) for sid, kind in kinds.items()], kinds
