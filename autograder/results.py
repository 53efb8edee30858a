"""One results model: a result's problem and check as fields, wherever results are read.

A verdict (judge/verdicts.CheckResult) carries its problem and check; results.json and Gradescope name a
test by both in one string, `"<Problem>: <check>"` (the contract of results.json), made by
`name_of` and read back by `read_tests`, here only. Each problem's subtotal, of verdicts or of tests read
back, is `subtotals`: grades.csv and the gradebook exports (term/standing.py), report.html, Gradescope's
choice of file and its summary, and a flag's points withheld (flags.py) add them up the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

_BETWEEN = ": "  # between a test's problem and its check


def name_of(problem: str, check: str) -> str:
    """A test's name as results.json and Gradescope show it: "<Problem>: <check>"."""
    return f"{problem}{_BETWEEN}{check}"


@dataclass(frozen=True)
class ReadTest:
    """One test of a results.json, read back: its problem and check (from its name), its score as
    written (an int stays an int, so sums read as they were written), passed or not, its output."""

    name: str
    problem: str
    check: str
    score: float
    max_score: float
    passed: bool
    output: str = ""
    hidden: bool = False


def _number(value) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def read_tests(result: dict) -> list[ReadTest]:
    """The tests of a results.json (the batch's or Gradescope's), each with its problem and check; entries
    that are not tests (not a mapping, no name) are left out. A test without a status (a result that
    could not be written whole holds names and scores only) passed when it scored."""
    found = []
    for test in result.get("tests") or ():
        if not isinstance(test, dict) or not isinstance(test.get("name"), str):
            continue
        problem, _, check = test["name"].partition(_BETWEEN)
        score = _number(test.get("score", 0))
        status = test.get("status", "passed" if test.get("score") else "failed")
        found.append(ReadTest(test["name"], problem, check, score, _number(test.get("max_score", 0)),
                              status == "passed", str(test.get("output", "")),
                              test.get("visibility") == "hidden"))
    return found


def subtotals(results: Iterable, problems: Iterable[str], what: str = "score") -> dict[str, float]:
    """Each problem's sum of its results' scores (what="max_score": their points), in the order of
    problems, 0 for a problem without results; results of other problems are left out. results: verdicts
    or tests read back (anything with problem, score and max_score)."""
    totals = dict.fromkeys(problems, 0)
    for r in results:
        if r.problem in totals:
            totals[r.problem] += getattr(r, what)
    return totals
