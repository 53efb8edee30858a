"""Does each classic mistake get the verdict and the one-sentence diagnosis a student needs?

The wrong Functions are measured and judged in process, exactly as the inline check() does; the batch
grader runs the same probe in a worker and the same judge here.
"""

import pytest

from autograder import check
from autograder.assignments import ASSIGNMENTS, find_problem
from tests.wrong_functions import CASES, HEADER, RIGHT_GRADCHECK


def run_check(problem: str, source: str):
    namespace: dict = {}
    exec(HEADER + source, namespace)  # noqa: S102 - the test's own fixtures
    name = find_problem(problem).lookup
    namespace["check"] = check
    exec(f"report = check({name})", namespace)  # check() reads companions (CubeBackward...) from the caller
    return namespace["report"]


@pytest.mark.parametrize(("problem", "source", "failing", "phrase"), CASES,
                         ids=[f"{c[0]}-{c[3][:30]}" for c in CASES])
def test_mistake_is_diagnosed(problem, source, failing, phrase):
    """Does the mistake fail the expected check, with a diagnosis that names it?"""
    report = run_check(problem, source)
    by_check = {r.check: r for r in report.results}
    assert not by_check[failing].passed, report
    assert phrase in by_check[failing].message, by_check[failing].message


def test_right_functions_pass_everything():
    """Does a right answer to every graded problem pass every check?"""
    namespace: dict = {}
    exec(open("examples/custom-functions/alice.py").read(), namespace)  # noqa: S102
    exec(open("examples/double-backward/frank.py").read(), namespace)  # noqa: S102
    exec(open("examples/modern-functions/heidi.py").read(), namespace)  # noqa: S102
    exec(HEADER + CASES[4][1].replace("input1.abs() * input2.sign(), grad_output * input1.sign() * input2.abs()",
                                      "input1.sign() * input2.abs(), grad_output * input1.abs() * input2.sign()"),
         namespace)
    exec(HEADER + RIGHT_GRADCHECK, namespace)  # noqa: S102
    namespace["check"] = check
    for assignment in ASSIGNMENTS.values():
        for problem in assignment.problems:
            exec(f"report = check({problem.lookup})", namespace)  # noqa: S102
            assert namespace["report"].passed, namespace["report"]


def test_failure_shows_heat_maps_and_graphs():
    """Does a failing gradient come with heat maps and the graph of backward, drawn as inline SVG?"""
    report = run_check(*CASES[0][:2])
    html = report._repr_html_()
    gradient = next(r for r in report.results if r.check == "gradient")
    assert {f.kind for f in gradient.figures} == {"heatmaps", "graphs"}
    assert html.count("<svg") >= 3
    assert "KillHeadBackward" in html


def test_same_submission_same_results():
    """Does grading the same Function twice give the same results, to the character?"""
    first = repr(run_check(*CASES[3][:2]))
    assert first == repr(run_check(*CASES[3][:2]))
