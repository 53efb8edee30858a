"""One results model (autograder/results.py): does a test's name carry its problem and check there and
back, do the tests of a results.json read back with their scores as written, and is each problem's
subtotal the same whether it is taken from verdicts or from the results.json written of them?"""

import json

from autograder.judge.verdicts import CheckResult
from autograder.report.files import results_json
from autograder.results import ReadTest, name_of, read_tests, subtotals


def verdicts() -> list[CheckResult]:
    return [CheckResult("Exp", "forward", True, 2), CheckResult("Exp", "gradcheck", False, 3, "wrong: 1: 2"),
            CheckResult("LinearFunction, other shapes", "backward: bias", True, 1.5, hidden=True),
            CheckResult("Other", "forward", True, 4)]


def test_a_name_carries_its_problem_and_check_there_and_back():
    """Is every verdict's name the contract's "<Problem>: <check>", read back into the same two fields, a
    check holding ": " and a problem holding ", " included?"""
    written = results_json(verdicts(), "summary", {})
    tests = read_tests(json.loads(json.dumps(written)))
    assert [t.name for t in tests] == [r.name for r in verdicts()] == [
        "Exp: forward", "Exp: gradcheck", "LinearFunction, other shapes: backward: bias", "Other: forward"]
    assert [(t.problem, t.check) for t in tests] == [(r.problem, r.check) for r in verdicts()]
    assert [(t.passed, t.hidden) for t in tests] == [(True, False), (False, False), (True, True),
                                                     (True, False)]
    assert tests[1].output.startswith("wrong: 1: 2") and name_of("A", "b") == "A: b"


def test_subtotals_are_the_same_from_verdicts_and_from_what_was_written():
    """Are each problem's score and points the same summed from the verdicts and from their results.json,
    in the order of the problems asked for, 0 for a problem without a test, other problems left out, and
    a score written as an integer read back as one (report.html's data shows it as written)?"""
    problems = ["Exp", "Missing", "LinearFunction, other shapes"]
    tests = read_tests(json.loads(json.dumps(results_json(verdicts(), "", {}))))
    for what in ("score", "max_score"):
        assert subtotals(verdicts(), problems, what) == subtotals(tests, problems, what)
    assert subtotals(tests, problems) == {"Exp": 2, "Missing": 0, "LinearFunction, other shapes": 1.5}
    assert list(subtotals(tests, problems)) == problems
    assert subtotals(tests, problems, "max_score")["Exp"] == 5
    assert isinstance(subtotals(tests, ["Other"])["Other"], int)  # 4 passed: as written


def test_what_is_not_a_test_is_left_out():
    """Are entries that are not tests (not a mapping, no name) left out, a test without a status passed
    when it scored, and a score that is not a number read as 0?"""
    result = {"tests": [None, "Exp: forward", {"score": 1}, {"name": 3},
                        {"name": "Exp: forward", "score": 1},
                        {"name": "Exp: backward", "score": True, "max_score": "2"}]}
    assert read_tests(result) == [ReadTest("Exp: forward", "Exp", "forward", 1, 0, True),
                                ReadTest("Exp: backward", "Exp", "backward", 0, 0, True)]
    assert read_tests({}) == read_tests({"tests": None}) == []
