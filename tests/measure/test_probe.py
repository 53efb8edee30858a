"""measure/probe.py's measure: what it tells the grader before the submission's code runs again."""

from __future__ import annotations

import json

import pytest

from autograder.course.assignments.registry import find_problem
from autograder.judge.checks import spec_of
from autograder.judge.reference import encoded_cases
from autograder.measure.probe import measure
from tests.conftest import EXAMPLES


def measured_with_reports(problem_name: str, source: str, calls: list[str]) -> tuple[dict, list[dict]]:
    """measure() of source's Function, with each report as the grader reads it and, in `calls`, "call"
    for each call into the submission's Function (its forward or backward) and "report" for each
    report, in order."""
    namespace: dict = {}
    exec(compile(source, "<cell 1>", "exec"), namespace)  # noqa: S102 - the test's fixture
    problem = find_problem(problem_name)
    function = namespace[problem.lookup]
    for method in ("forward", "backward"):
        inner = getattr(function, method)

        def counted(*args, inner=inner):
            calls.append("call")
            return inner(*args)

        setattr(function, method, staticmethod(counted))
    reports: list[dict] = []

    def report(data: dict) -> None:
        calls.append("report")
        reports.append(json.loads(json.dumps(data)))

    return measure(spec_of(problem), namespace, encoded_cases(problem), report=report), reports


@pytest.mark.parametrize("who, told", [
    ("alice", [["forward"]]),
    ("bob", [["forward"], ["forward", "backward", "second"]]),  # its sign flipped: PyTorch's words measured
])
def test_every_part_is_told_before_the_submission_runs_again_and_only_then(who, told):
    """Is each part told once, right before the next call into the submission (which may never
    return), and never after the last call, where the data returned says it all? A right MyReLU's
    measurement is then sent twice (after forward, and whole), not six times."""
    calls: list[str] = []
    data, reports = measured_with_reports("MyReLU", (EXAMPLES / f"{who}.py").read_text(), calls)
    assert [r["parts"] for r in reports] == told
    assert data["parts"] == ["forward", "backward", "second", "torch", "extra"]
    after_last_call = calls[len(calls) - calls[::-1].index("call"):]
    assert "report" not in after_last_call
    for i, entry in enumerate(calls):  # a report is always followed by a call
        if entry == "report":
            assert calls[i + 1] == "call"


def test_backward_is_recorded_only_where_its_returns_are_read():
    """What backward returns, and the torch operations it makes, are read by the backward part only
    (backward_case): PyTorch's gradcheck, whose words a wrong backward's page quotes, calls backward once
    per output entry, and not under the mode that counts its operations (a tenth of such a measurement)."""
    import torch

    source = (EXAMPLES / "bob.py").read_text()
    namespace: dict = {}
    exec(compile(source, "<cell 1>", "exec"), namespace)  # noqa: S102 - the test's fixture
    problem = find_problem("MyReLU")
    function = namespace[problem.lookup]
    inner, counted = function.backward, []

    def backward(ctx, *grads):
        counted.append(torch._C._len_torch_function_stack() > 0)
        return inner(ctx, *grads)

    function.backward = staticmethod(backward)
    data = measure(spec_of(problem), namespace, encoded_cases(problem))
    assert data["torch_says"]["gradcheck"] != "passed"  # its words were measured: gradcheck called backward
    assert 0 < sum(counted) < len(counted) // 2  # the backward part's calls counted, gradcheck's not
