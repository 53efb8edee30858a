"""Are checks single objects, run in order with their prerequisites, and do the grader's pictures, parts
and notebook cells behave as the issue-12 checks need?"""

import ast
import json
import re

import pytest

from autograder.course.assignments.registry import find_problem, load
from autograder.intake.loader import expected_errors
from autograder.judge import checks
from autograder.judge.checks import Check, add_check, checks_of, max_score, spec_of
from autograder.judge.findings import note
from autograder.judge.verdicts import judge
from autograder.measure.checks import measure_companion
from autograder.measure.probe import measure
from autograder.measure.spec import Spec
from tests.conftest import ROOT, autograder, notebook
from tests.judge.test_judge import by_check, run_check
from tests.wrong_functions import CASES, RIGHT


@pytest.fixture
def restore_checks():
    saved = list(checks.ALL)
    yield
    checks.ALL[:] = saved
    checks.BY_NAME.clear()
    checks.BY_NAME.update({c.name: c for c in saved})


def test_a_new_check_is_one_object(restore_checks):
    """Does adding one Check (its question, points, prerequisite and judgement) give every problem it
    applies to a row of its own, with its points, in check() as in the grader, and nothing else?"""
    def odd_columns(view):
        return note("this grader's own remark") if view.lookup == "KillHead" else None

    problem = find_problem("KillHead")
    total = max_score(problem)
    add_check(Check("instructor's remark", "an instructor's own question", 4, odd_columns, "forward",
                    requires=("forward",), applies=lambda p: p.name == "KillHead"), before="gradcheck")
    assert checks_of(problem)[-2:] == ["instructor's remark", "gradcheck"]
    assert max_score(problem) == total + 4
    right = next(source for name, source in RIGHT if name == "KillHead")
    row = by_check(run_check("KillHead", right))["instructor's remark"]
    assert row.passed and row.max_score == 4 and "this grader's own remark" in row.message
    assert "instructor's remark" not in checks_of(find_problem("MyReLU"))
    with pytest.raises(ValueError, match="already a check"):
        add_check(Check("gradient", "again", 1, odd_columns))
    with pytest.raises(ValueError, match="measurement of its own"):
        add_check(Check("own calls", "a private measurement", 1, odd_columns, "backward",
                        measure=measure_companion))


def test_a_new_check_leaves_a_passing_functions_output_as_it_was(restore_checks):
    """A solution notebook's committed check() output is what a right Function shows: is it the same text
    and HTML before and after the grader gains a check (so a new check rewrites no notebook), while
    table=True and a failing Function show every row, the new one included?"""
    right = next(source for name, source in RIGHT if name == "KillHead")
    before = run_check("KillHead", right)
    add_check(Check("deterministic", "backward gives the same gradients twice", 1, lambda view: None,
                    "backward"))
    after = run_check("KillHead", right)
    assert after.passed and "deterministic" in by_check(after)
    assert repr(after) == repr(before) and after._repr_html_() == before._repr_html_()
    assert repr(after).startswith("check(KillHead): all checks of this notebook pass")
    assert "gradcheck" not in repr(after) and "gradcheck" not in after._repr_html_()
    after.table = True
    assert "KillHead: deterministic" in repr(after) and "deterministic" in after._repr_html_()
    wrong = run_check("MyReLU", next(c[1] for c in CASES if c[0] == "MyReLU" and "inverted" in c[3]))
    assert "MyReLU: deterministic" in repr(wrong) and "FAIL" in repr(wrong)


def test_a_passing_function_still_shows_its_notes():
    """Does the one-line verdict of a right Function keep each note (an observation that costs nothing),
    with the check it comes from?"""
    float32 = next(source for problem, source in RIGHT if ".float()" in source)
    report = run_check("LinearFunction", float32)
    assert report.passed and "  gradient: Note (costs nothing):" in repr(report)
    assert "float32" in repr(report) and repr(report).count("costs nothing") == 1
    assert report._repr_html_().count("costs nothing") == 1 and "float32" in report._repr_html_()


def test_a_checks_own_measurement_is_named_by_its_declaration_alone():
    """Does a check's declaration (Check.measure) alone tell the worker what to run, after which part, and
    does the worker refuse a measurement from outside autograder/measure/?"""
    spec = Spec.from_dict(json.loads(json.dumps(spec_of(find_problem("Cube")).to_dict())))  # as sent
    own: dict[str, list] = {}
    for c in checks.ALL:  # the declarations' own measurements, by the part each follows
        if c.measure and c.name in checks_of(find_problem("Cube")):
            own.setdefault(c.part, []).append((c.name, c.measure))
    assert spec.measurements() == own and ("companion used", measure_companion) in own["second"]
    relu = spec_of(find_problem("MyReLU")).measurements()
    assert all(name != "companion used" for part in relu.values() for name, _ in part)
    forged = Spec.from_dict(dict(spec.to_dict(), own=[["x", "second", "autograder.judge.checks", "ALL"]]))
    with pytest.raises(ValueError, match="not in autograder/measure/"):
        forged.measurements()


def test_a_checks_own_measurement_runs_right_after_the_part_it_names():
    """Is a check's own measurement run after whichever part it names (here forward, not the second
    derivatives it follows in its declaration), so that it is there when that part is reported?"""
    problem = find_problem("Cube")
    namespace: dict = {}
    exec(compile("import torch\nfrom torch.autograd import Function\n"  # noqa: S102 - the test's fixture
                 + next(source for name, source in RIGHT if name == "Cube"), "<cell 1>", "exec"), namespace)
    from autograder.judge.reference import encoded_cases

    spec = spec_of(problem)
    companion = next(own for own in spec.own if own[0] == "companion used")
    moved = Spec.from_dict(dict(spec.to_dict(), own=[["companion used", "forward", *companion[2:]]]))
    parts = []
    measure(moved, namespace, encoded_cases(problem),
            report=lambda data: parts.append(json.loads(json.dumps(data))))
    assert parts[0]["parts"] == ["forward"] and parts[0]["checks"]["companion used"]["uses"] is True
    with pytest.raises(ValueError, match="not a part measured"):
        Spec.from_dict(dict(spec.to_dict(), own=[["companion used", "", *companion[2:]]])).measurements()


def test_a_declaration_that_cannot_work_is_refused_where_it_is_written(restore_checks):
    """Is a Check refused when it is declared, naming why: a part that is not measured, a measurement
    without the part it follows or from outside autograder/measure/, a prerequisite that is not a check
    declared before it, a name used twice?"""
    def judge_nothing(view):
        return None

    with pytest.raises(ValueError, match="'backwards' is not a part measured"):
        Check("typo", "?", 1, judge_nothing, "backwards")
    with pytest.raises(ValueError, match="name the part it follows"):
        Check("own calls", "?", 1, judge_nothing, measure=measure_companion)
    with pytest.raises(ValueError, match="not a function of autograder/measure/"):
        Check("own calls", "?", 1, judge_nothing, "backward", measure=judge_nothing)
    with pytest.raises(ValueError, match="requires 'gradeint', which is not a check declared before it"):
        add_check(Check("second look", "?", 1, judge_nothing, "backward", requires=("gradeint",)))
    with pytest.raises(ValueError, match="requires 'gradgradcheck'"):
        add_check(Check("early", "?", 1, judge_nothing, "backward", requires=("gradgradcheck",)),
                  before="gradient")
    with pytest.raises(ValueError, match="two checks called 'forward'"):
        checks._validated([checks.BY_NAME["forward"], checks.BY_NAME["forward"]])
    assert checks._validated(checks.ALL) is checks.ALL


def test_an_extra_check_applies_to_the_problems_that_name_it():
    """Does a lesson-7 check (extra=True) apply exactly where a problem's extra_checks names it, with no
    second spelling of its name in its declaration?"""
    problems = [p for a in load().assignments.values() for p in a.problems]
    for name in checks.EXTRA:
        asking = [p for p in problems if name in p.extra_checks]
        assert asking, name
        assert all(name in checks_of(p) for p in asking)
        assert not any(name in checks_of(p) for p in problems if name not in p.extra_checks)


def test_a_check_a_judgement_names_is_declared():
    """Does every check name the judgements of autograder/judge/ write down (`"gradient" in view.failed`,
    the check a blocked case is told under) name a declared check, so that a renamed check cannot leave a
    judgement silently asking about one that no longer exists?"""
    def names(value: ast.expr) -> list[str]:  # "a" or ("a" if ... else "b")
        if isinstance(value, ast.IfExp):
            return names(value.body) + names(value.orelse)
        return [value.value] if isinstance(value, ast.Constant) and isinstance(value.value, str) else []

    named = set()
    for path in (ROOT / "autograder" / "judge").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and isinstance(node.comparators[0], ast.Attribute) \
                    and node.comparators[0].attr == "failed":
                named.update((path.name, n) for n in names(node.left))
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Blocked" and node.args:
                named.update((path.name, n) for n in names(node.args[0]))
            if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["owner"]:
                named.update((path.name, n) for n in names(node.value))
    assert {"gradient", "companion used", "backward returns"} <= {name for _, name in named}
    assert [(f, n) for f, n in named if n not in checks.BY_NAME] == []


def test_a_check_whose_prerequisite_failed_earns_nothing(restore_checks):
    """Is a check that would pass on its own failed, with no points, when its prerequisite fails?"""
    add_check(Check("always right", "nothing", 5, lambda view: None, "forward", requires=("gradient",)))
    source = next(c[1] for c in CASES if c[0] == "MyReLU" and "inverted" in c[3])
    row = by_check(run_check("MyReLU", source))["always right"]
    assert not row.passed and row.score == 0 and "needs gradient to pass first" in row.message


def test_a_part_that_never_finished_costs_its_checks_only():
    """When a measurement stops after forward (a hang in backward), are forward's checks graded and the
    others failed, naming the part that hung?"""
    problem = find_problem("MyReLU")
    namespace: dict = {}
    exec(compile("import torch\nfrom torch.autograd import Function\n"  # noqa: S102 - the test's fixture
                 + next(source for name, source in RIGHT if name == "MyReLU"), "<cell 1>", "exec"), namespace)
    from autograder.judge.reference import encoded_cases

    parts = []
    measure(spec_of(problem), namespace, encoded_cases(problem),
            report=lambda data: parts.append(json.loads(json.dumps(data))))
    after_forward = dict(parts[0], stopped="within 20 s")
    assert after_forward["parts"] == ["forward"] and "vjp" not in after_forward["cases"][0]
    results = {r.check: r for r in judge(problem, after_forward)}
    assert results["forward"].passed and results["inputs unchanged"].passed
    assert results["save_for_backward"].passed
    for name in ("backward returns", "gradient", "grad_output unchanged", "gradcheck"):
        assert not results[name].passed and "did not finish within 20 s" in results[name].message, name


def test_cells_meant_to_raise_are_known(tmp_path):
    """Are a notebook's raises-exception cells (meant to raise, as older lessons tagged them; today's show
    their errors with expect_error) found, numbered among the code cells?"""
    path = notebook(tmp_path / "lesson.ipynb", "x = 1", "raise ValueError('meant')", "y = 2",
                    title="# A lesson")
    data = json.loads(path.read_text())
    data["cells"][2]["metadata"]["tags"] = ["raises-exception"]
    path.write_text(json.dumps(data))
    assert expected_errors(".ipynb", path.read_bytes()) == [1]
    assert expected_errors(".py", b"raise ValueError") == []


@pytest.mark.slow
def test_a_right_solution_page_lists_no_cell_errors_and_seed_1_grades_lesson_7(tmp_path):
    """Does the solution of lesson 7, graded with --seed 1, keep full marks (once it failed vmap), with no
    "Cells that raised" on its page although the lesson has raises-exception cells?"""
    solution = tmp_path / "solution.ipynb"
    solution.write_bytes((ROOT / "solutions" / "07-modern-functions.ipynb").read_bytes())
    out = tmp_path / "out"
    autograder("grade", "--assignment", "modern-functions", "--seed", "1", "--out", out, "--quiet", solution)
    results = json.loads((out / "solution" / "results.json").read_text())
    assert all(t["status"] == "passed" for t in results["tests"]), [t["name"] for t in results["tests"]
                                                                    if t["status"] != "passed"]
    assert "Cells that raised" not in (out / "solution" / "feedback.html").read_text()


def test_list_lines_up_whatever_names_are_declared(tmp_path):
    """Does `list` keep the points of every check, and of every problem, in one column when a check (here
    an instructor's, added from an --extra file that only adds a check, as docs/instructors.md says) has
    a name longer than any built-in one?"""
    extra = tmp_path / "long.py"
    extra.write_text("from autograder.judge.checks import Check, add_check\n"
                     "add_check(Check('backward gives the same gradients twice', 'asks', 1,\n"
                     "                lambda view: None))\n")
    lines = autograder("list", "--extra", extra).stdout.splitlines()
    row = re.compile(r"^  (?P<name>.*?) +(?P<points>\d+)  \S")
    checks_end = lines.index(next(x for x in lines[1:] if not x.startswith("  ")))
    for rows in (lines[1:checks_end], [x for x in lines[checks_end:] if x.startswith("  ")]):
        found = [row.match(r) for r in rows]
        assert all(found) and len({m.end("points") for m in found}) == 1, rows
    assert any("backward gives the same gradients twice" in r for r in lines[1:checks_end])
