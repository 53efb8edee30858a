"""Can an instructor write problems of their own without reading the package: tensors of any dtype,
keyword arguments, tolerances, checks left out, points and a sentence per check; an assignment added
from a file or an installed package, seen by check() when the instructor wants; and does the example of
docs/authoring.md grade a right answer full marks?"""

import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile

import pytest
import torch

from autograder.course import Assignment, Case, Problem, TensorSpec, find_assignment
from autograder.course.assignments.registry import load
from autograder.judge import checks
from autograder.judge.checks import max_score
from autograder.judge.validate import InvalidAssignment, answer, grade_in_process, validate
from tests.conftest import ROOT, autograder

EXAMPLE = ROOT / "docs" / "authoring_example.py"
SOLUTION = ROOT / "docs" / "authoring_solution.py"


def verdicts(problem: Problem, namespace: dict) -> dict[str, object]:
    return {r.check: r for r in grade_in_process(problem, namespace)}


def gather(x, index, dim=1):
    return x.gather(dim, index)


GATHER = Problem(name="Gather", summary="x.gather(dim, index)", reference=gather,
                 cases=(Case((TensorSpec((3, 5)), TensorSpec((3, 2), low=0, high=5, dtype="int64"))),
                        Case((TensorSpec((4, 2)), TensorSpec((2, 2), low=0, high=4, dtype=torch.int64)),
                             {"dim": 0})),
                 hints={"gradient": "Scatter the gradient back with scatter_add_."})


class Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, index, dim=1):
        ctx.save_for_backward(index)
        ctx.dim, ctx.shape = dim, x.shape
        return x.gather(dim, index)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return torch.zeros(ctx.shape, dtype=grad.dtype).scatter_add(ctx.dim, index, grad), None, None


class GatherOverwrites(Gather):  # wrong where an index repeats: scatter keeps one gradient, not their sum
    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return torch.zeros(ctx.shape, dtype=grad.dtype).scatter(ctx.dim, index, grad), None, None


def test_integer_tensors_are_passed_as_they_are():
    """Does an index tensor reach the Function as int64 (not float64 with requires_grad), with no
    gradient asked for it, and its keyword argument by name?"""
    seen = []

    class Spy(Gather):
        @staticmethod
        def forward(ctx, x, index, dim=1):
            seen.append((index.dtype, index.requires_grad, dim))
            return Gather.forward(ctx, x, index, dim)

    found = verdicts(GATHER, {"Gather": Spy})
    assert all(r.passed for r in found.values()), [r.message for r in found.values() if not r.passed]
    assert (torch.int64, False, 1) in seen and (torch.int64, False, 0) in seen
    assert GATHER.inputs(0)[1].dtype == torch.int64 and 0 <= int(GATHER.inputs(0)[1].min())
    assert int(GATHER.inputs(0)[1].max()) < 5


def test_keyword_arguments_and_the_hint_reach_the_student():
    """Does a wrong backward fail on the case with a keyword argument, described with it, and does the
    instructor's sentence follow the judge's?"""
    found = verdicts(GATHER, {"Gather": GatherOverwrites})
    assert found["forward"].passed and not found["gradient"].passed
    message = found["gradient"].message
    assert message.endswith("Scatter the gradient back with scatter_add_.")
    assert message.startswith("With x of shape (3, 5) and index of shape (3, 2) of int64: ")
    assert "scatter_add_" not in found["gradcheck"].message  # a hint belongs to its own check


def test_keyword_argument_missing_from_forward_fails():
    """Does a Function whose forward takes no `dim` fail the case that passes dim=0?"""
    class NoDim(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, index):
            ctx.save_for_backward(index)
            ctx.shape = x.shape
            return x.gather(1, index)

        @staticmethod
        def backward(ctx, grad):
            (index,) = ctx.saved_tensors
            return torch.zeros(ctx.shape, dtype=grad.dtype).scatter_add(1, index, grad), None

    message = verdicts(GATHER, {"Gather": NoDim})["forward"].message
    assert message.startswith("With x of shape (4, 2), index of shape (2, 2) of int64 and dim = 0: ")
    assert "dim" in message.split(":", 1)[1]


def round_ste(x):
    return x + (x.round() - x).detach()


STE = Problem(name="RoundSTE", summary="round, straight through", reference=round_ste,
              cases=(Case((TensorSpec((4, 4), low=-3.0, high=3.0,
                                      avoid=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)),)),),
              skip=("gradcheck",), points={"gradient": 4})


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_a_problem_without_gradcheck():
    """Does a straight-through estimator score full marks on a problem that leaves gradcheck out (no
    "gradcheck failed 0/0" row), with its gradient worth the points given and the others the defaults?"""
    found = verdicts(STE, {"RoundSTE": RoundSTE})
    assert "gradcheck" not in found and all(r.passed for r in found.values())
    assert found["gradient"].max_score == 4 and found["forward"].max_score == 2
    assert max_score(STE) == sum(r.max_score for r in found.values())


def test_the_same_function_fails_gradcheck_when_it_is_asked():
    """Is gradcheck what would have failed it (so leaving it out is what the skip does)?"""
    asked = Problem(name="RoundSTE", summary="", reference=round_ste, cases=STE.cases)
    found = verdicts(asked, {"RoundSTE": RoundSTE})
    assert not found["gradcheck"].passed and found["gradient"].passed


def test_a_tolerance_of_its_own():
    """Does an answer off by 1% fail the built-in tolerance and pass a problem whose tolerance allows it?"""
    class Close(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp() * (1 + 1e-2)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x.exp() * (1 + 1e-2)

    strict = Problem(name="Exp", summary="", reference=torch.exp, cases=(Case((TensorSpec((3,)),)),))
    loose = Problem(name="Exp", summary="", reference=torch.exp, cases=strict.cases, tolerance=(2e-2, 1e-9))
    assert not verdicts(strict, {"Exp": Close})["forward"].passed
    assert all(r.passed for r in verdicts(loose, {"Exp": Close}).values())


def test_bool_tensors_and_plain_values():
    """Is a boolean mask passed as torch.bool, beside a plain number?"""
    def masked(x, mask, fill=0.0):
        return x.masked_fill(mask, fill)

    problem = Problem(name="Masked", summary="", reference=masked,
                      cases=(Case((TensorSpec((3, 3)), TensorSpec((3, 3), dtype="bool")), {"fill": 2.0}),))
    validate_problem(problem)
    assert problem.inputs(0)[1].dtype == torch.bool


def validate_problem(problem: Problem) -> None:
    validate(Assignment("t", "t", (problem,)))


@pytest.mark.parametrize(("change", "phrase"), [
    ({"reference": lambda x: 1 / 0}, "its reference raised ZeroDivisionError"),
    ({"reference": lambda x: x.float()}, "returned torch.float32"),
    ({"reference": lambda x: x.detach() * 2}, "does not depend, through autograd"),
    ({"reference": lambda x: x * 0}, "cannot tell right from wrong"),
    ({"skip": ("gradient", "nope")}, "there is no check 'nope'"),
    ({"points": {"gradient": -1}}, "must be a number of at least 0"),
    ({"tolerance": (1e-3,)}, "tolerance must be (rtol, atol)"),
    ({"cases": ()}, "it has no cases"),
    ({"cases": (Case((TensorSpec((3,), dtype="int64", low=2, high=2),)),)}, "low (2) must be below high (2)"),
    ({"cases": (Case((TensorSpec((3,)),), {"w": TensorSpec((3,))}),)}, "pass tensors positionally"),
    ({"hidden_checks": frozenset({"gradgradcheck"})}, "which the problem does not ask"),
])
def test_mistakes_in_a_problem_are_named(change, phrase):
    """Does each kind of mistake in a problem come back as one sentence naming the problem and the cause?"""
    import dataclasses

    base = Problem(name="Twice", summary="", reference=lambda x: 2 * x, cases=(Case((TensorSpec((3,)),)),))
    validate_problem(base)
    with pytest.raises(InvalidAssignment) as raised:
        validate_problem(dataclasses.replace(base, **change))
    assert str(raised.value).startswith("Problem 'Twice' of t")
    assert phrase in str(raised.value)


def test_right_answer_built_from_the_reference_passes_double_backward():
    """Does the Function validate.py builds from a reference pass every check of the built-in problems that
    it can (the numbers, second derivatives included: the self-test every assignment goes through)?"""
    from autograder.judge.validate import SELF_TESTED

    for name in ("custom-functions", "double-backward"):
        for problem in find_assignment(name).problems:
            found = verdicts(problem, answer(problem))
            assert "gradient" in found
            assert all(r.passed for r in found.values() if r.check in SELF_TESTED), \
                (problem.name, [r.message for r in found.values() if not r.passed])


# -- the example of docs/authoring.md ----------------------------------------------------------------------

def test_example_validates_and_its_solution_scores_full_marks():
    """Does docs/authoring_example.py add the assignment "indexing", valid, on which its right answer
    (docs/authoring_solution.py, as a student hands it in) scores full marks in process?"""
    registry = load([EXAMPLE])
    assignment = registry.find_assignment("indexing")
    assert [p.name for p in assignment.problems] == ["Gather", "RoundSTE", "SmoothMax"]
    validate(assignment)
    namespace = {}
    exec(compile(SOLUTION.read_text(), str(SOLUTION), "exec"), namespace)  # noqa: S102 - the repository's file
    for problem in assignment.problems:
        found = grade_in_process(problem, namespace)
        assert all(r.passed for r in found), (problem.name, [r.message for r in found if not r.passed])
    assert registry.origins[("indexing", "Gather")] == str(EXAMPLE)


@pytest.mark.slow
def test_example_goes_from_file_to_gradescope_archive(tmp_path):
    """Do the commands of docs/authoring.md run: list shows the assignment, grade gives the solution full
    marks in a worker, gradescope builds the archive, and its setup check passes?"""
    indexing = load([EXAMPLE]).find_assignment("indexing")
    total, each = max_score(indexing), [max_score(p) for p in indexing.problems]
    listed = autograder("list", "--extra", EXAMPLE).stdout
    assert f"indexing  (lesson 08-indexing, {total:g} points)" in listed
    out = tmp_path / "graded"
    autograder("grade", "--assignment", "indexing", "--extra", EXAMPLE, "--out", out, "--quiet", SOLUTION)
    result = json.loads((out / "authoring_solution" / "results.json").read_text())
    assert result["score"] == total and all(t["status"] == "passed" for t in result["tests"])
    assert (out / "grades.csv").read_text() == (
        "submission,score,max_score,Gather,RoundSTE,SmoothMax,graded,adjustments,late_penalty,late,flagged\n"
        f"authoring_solution,{total:g},{total:g},{','.join(f'{p:g}' for p in each)},{total:g},0,0,,\n")
    archive = tmp_path / "indexing.zip"
    assert f"for indexing (3 problems, {total:g} points, 0 hidden check(s)" in autograder(
        "gradescope", "--assignment", "indexing", "--extra", EXAMPLE, "--out", archive).stdout
    with zipfile.ZipFile(archive) as z:
        z.extractall(tmp_path / "root" / "source")
    checked = subprocess.run([sys.executable, "-m", "autograder.gradescope", "check", "--root",
                              str(tmp_path / "root")],
                             capture_output=True, text=True, timeout=600, check=False,
                             env=dict(os.environ, PYTHONPATH=str(tmp_path / "root" / "source")))
    assert checked.returncode == 0, checked.stderr
    assert f"ready to grade indexing (3 problems, {total:g} points)" in checked.stdout
    assert f"a worker graded an untouched notebook 0/{total:g}" in checked.stdout


# -- registered without editing the package -----------------------------------------------------------------

PACKAGE = '''
from autograder.course import Assignment, Case, Problem, TensorSpec

ASSIGNMENT = Assignment("course-extra", "09-extra", (
    Problem(name="Triple", summary="3 x", reference=lambda x: 3 * x, cases=(Case((TensorSpec((4,)),)),)),))
'''


def test_installed_package_registers_an_assignment_seen_by_check(tmp_path):
    """Does an installed package's entry point (group autograder.assignments) add an assignment that
    `list` shows and check() in a notebook knows, without touching this package?"""
    (tmp_path / "course_extra.py").write_text(PACKAGE)
    info = tmp_path / "course_extra-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: course-extra\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[autograder.assignments]\ncourse-extra = course_extra\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}")
    listed = autograder("list", "--json", env=env, timeout=300)
    triple = Problem(name="Triple", summary="", reference=lambda x: 3 * x, cases=(Case((TensorSpec((4,)),)),))
    assert {"name": "course-extra", "problems": ["Triple"], "max_score": max_score(triple)} \
        in json.loads(listed.stdout)
    code = textwrap.dedent("""
        import torch
        from autograder import check

        class Triple(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return 3 * x

            @staticmethod
            def backward(ctx, grad):
                return 3 * grad

        print(check(Triple).passed)
    """)
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=300, check=True)
    assert ran.stdout.strip().endswith("True")


def test_autograder_extra_makes_a_file_visible_to_check(tmp_path):
    """Does check() in a notebook find a problem of the file AUTOGRADER_EXTRA names, and only then?"""
    code = textwrap.dedent(f"""
        import runpy
        from autograder import check
        ns = runpy.run_path({str(SOLUTION)!r})
        try:
            print(check(ns["RoundSTE"]).passed)
        except LookupError:
            print("unknown")
    """)
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_EXTRA"}
    without = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                             timeout=300, check=True)
    assert without.stdout.strip() == "unknown"
    env["AUTOGRADER_EXTRA"] = str(EXAMPLE)
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=300, check=True)
    assert ran.stdout.strip() == "True"


# -- mistakes in an instructor's file: one paragraph each, naming the problem, the file and the line -------

HEAD = "import torch\nfrom autograder.course import Case, Problem, TensorSpec, add_problem\n\n"
NOT_A_TUPLE = HEAD + textwrap.dedent("""\
    add_problem("custom-functions", Problem(
        name="Triple",
        summary="3 x",
        reference=lambda x: 3 * x,
        cases=Case((TensorSpec((4,)),)),
    ))
""")
MISTAKES = {  # the file, and what its message says
    "cases not a tuple": (NOT_A_TUPLE, (
        "failed at line 8 (Problem 'Triple'): cases takes a tuple of Case(...), cases=(Case(...),) with the "
        "comma that makes a tuple of one, not cases=Case(...).")),
    "case arguments not a tuple": (HEAD + textwrap.dedent("""\
        add_problem("custom-functions", Problem(name="Triple", summary="3 x",
            reference=lambda x: 3 * x,
            cases=(Case(TensorSpec((3, 4))),)))
    """), (
        "failed at line 6 (Problem 'Triple'): Case takes its positional arguments as a tuple, "
        "Case((TensorSpec((3, 4)),)) with the comma that makes a tuple of one, not "
        "Case(TensorSpec((3, 4))).")),
    "registers nothing": (HEAD + textwrap.dedent("""\
        TRIPLE = Problem(name="Triple", summary="3 x", reference=lambda x: 3 * x,
                         cases=(Case((TensorSpec((4,)),)),))
    """), (
        "registers nothing: it defines TRIPLE = Problem(name='Triple', ...) at line 4 but never registers "
        "it, so nothing in it would be graded. Register it: add_problem(\"custom-functions\", TRIPLE) adds a "
        "problem to an assignment")),
    "no problem at all": ("import torch\n",
                          "registers nothing: it calls none of add_problem, add_assignment and hide"),
    "a name error": (HEAD + "\n\nadd_problem('custom-functions', TRIPLE)\n",
                     "failed at line 6: NameError: name 'TRIPLE' is not defined"),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_a_mistake_in_a_file_names_its_line(tmp_path, mistake):
    """Is each mistake made while a file runs (or a file that registers nothing) one paragraph naming the
    file, the line and the problem written there, with what to write instead?"""
    source, said = MISTAKES[mistake]
    path = tmp_path / "hidden.py"
    path.write_text(source)
    with pytest.raises(LookupError) as raised:
        load([path])
    assert str(raised.value).startswith(f"The extra assignments file {path} ")
    assert said in str(raised.value)


def test_cases_not_a_tuple_is_a_usage_error_not_a_traceback(tmp_path):
    """Does the command line say it in one paragraph with exit status 2 (it once printed a traceback)?"""
    path = tmp_path / "hidden.py"
    path.write_text(NOT_A_TUPLE)
    result = autograder("list", "--extra", path, check=False, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    said = result.stderr.replace("\n  ", " ")
    assert f"autograder: The extra assignments file {path} {MISTAKES['cases not a tuple'][1]}" in said


def test_a_kink_of_the_reference_is_located_and_avoid_suggested(tmp_path):
    """When the reference itself fails gradcheck because its inputs come within the finite differences'
    step of its kink (|x| on inputs of about 1e-6), does validation name the problem's file and line, the
    values, and the avoid= that keeps them away; and does that avoid= (with a margin fit for the inputs)
    make it valid?"""
    path = tmp_path / "hidden.py"
    path.write_text(HEAD + 'add_problem("custom-functions", Problem(\n'
                    '    name="Abs", summary="|x|", reference=lambda x: x.abs(),\n'
                    '    cases=(Case((TensorSpec((200,), low=-1e-5, high=1e-5),)),)))\n')
    registry = load([path])
    with pytest.raises(InvalidAssignment) as raised:
        validate(registry.find_assignment("custom-functions"), 0, registry.origins)
    said = str(raised.value)
    assert said.startswith(f"Problem 'Abs' of custom-functions (from {path}, line 4): ")
    assert "fails its check 'gradcheck'" in said and "disagrees with its finite differences at " in said
    assert "entries of x in case 1 (x = " in said
    assert "Keep the inputs away from it: TensorSpec((200,), ..., avoid=(0,)) (margin=" in said
    path.write_text(path.read_text().replace("high=1e-5)", "high=1e-5, avoid=(0.0,), margin=1e-4)"))
    registry = load([path])
    validate(registry.find_assignment("custom-functions"), 0, registry.origins)


def test_a_kink_of_the_first_derivative_fails_gradgradcheck_with_its_place():
    """Is a kink of the derivative (x |x| at 0, asked twice differentiable) located the same way?"""
    problem = Problem(name="XAbsX", summary="", reference=lambda x: x * x.abs(), double_backward=True,
                      cases=(Case((TensorSpec((100,), low=-1e-5, high=1e-5),)),))
    with pytest.raises(InvalidAssignment) as raised:
        validate_problem(problem)
    said = str(raised.value)
    assert "fails its check 'gradgradcheck'" in said and "avoid=(0,)" in said, said
    line = test_a_kink_of_the_first_derivative_fails_gradgradcheck_with_its_place.__code__.co_firstlineno + 2
    assert said.startswith(f"Problem 'XAbsX' of t (written in {__file__}, line {line}): ")


def test_the_table_of_checks_is_the_declared_checks():
    """Does docs/authoring.md's table of checks name every declared check, in the order rows are
    reported, each with its points, and nothing else (so that a check added or changed cannot leave the
    guide silently stale)?"""
    text = (ROOT / "docs" / "authoring.md").read_text()
    table = text[text.index("| check | asks | points by default |"):].split("\n\n")[0].splitlines()[2:]
    documented = []
    for row in table:
        names, _, points = (cell.strip() for cell in row.strip("|").split("|"))
        documented += [(name, float(points.split()[0])) for name in re.findall(r"`([^`]+)`", names)]
    assert documented == [(c.name, c.points) for c in checks.ALL], (
        "docs/authoring.md's table of checks differs from autograder/judge/checks.py's ALL")
