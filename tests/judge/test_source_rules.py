"""Do the rule checks rest on the source as well as on the worker's word (judge/source.py)?

A worker's measurements can be written by the submission itself. Here a right Function's measurements
stand for such a forgery, judged beside the source of a Function that breaks a rule: the rule fails, from
the source alone. And the source never costs an honest Function anything: no right Function, lesson or
example is contradicted, and wherever the source contradicts a wrong Function of the catalogue, measuring
that Function honestly fails the same check.
"""

import textwrap
from pathlib import Path

import pytest

import tests.wrong_functions as catalogue
from autograder.course.assignments.registry import BUILTIN, find_problem
from autograder.intake.loader import read_cells
from autograder.judge.checks import checks_of, max_score
from autograder.judge.plan import probe
from autograder.judge.reference import encoded_cases, expectations
from autograder.judge.source import contradiction, read_source, tensor_arguments, unbound
from autograder.judge.verdicts import judge
from tests.conftest import ROOT
from tests.judge.test_reaching import right_functions

SEED = 0


def facts(problem, *cells: str):
    return read_source(problem, [textwrap.dedent(c) for c in cells], {}, tensor_arguments(problem, SEED))


def contradicted(problem, source_facts) -> list[str]:
    found = [c for c in checks_of(problem) if contradiction(c, problem, source_facts)]
    return found + (["is a Function"] if unbound(problem, source_facts) else [])


def measured(problem, source: str) -> dict:
    """The problem's Function defined by source, measured in this process as a worker would."""
    namespace: dict = {}
    exec(compile(catalogue.HEADER + textwrap.dedent(source), "<cell 1>", "exec"), namespace)  # noqa: S102
    return probe(problem, namespace, encoded_cases(problem, SEED), SEED, expectations(problem, SEED))


@pytest.mark.parametrize("problem, source", list(right_functions()))
def test_no_right_function_is_contradicted(problem, source):
    problem = find_problem(problem)
    assert contradicted(problem, facts(problem, catalogue.HEADER + source)) == []


@pytest.mark.parametrize("assignment", sorted(BUILTIN, key=lambda a: a.name), ids=lambda a: a.name)
def test_no_lesson_or_example_is_contradicted(assignment):
    examples = ROOT / "examples" / assignment.name
    paths = [ROOT / "solutions" / f"{assignment.lesson}.ipynb"]
    paths += sorted(p for p in examples.glob("*") if p.suffix in (".py", ".ipynb") and p.name != "erin.ipynb")
    for path in paths:
        cells = read_cells(Path(path))
        for problem in assignment.problems:
            found = read_source(problem, cells, {}, tensor_arguments(problem, SEED))
            if path.parent.name == "solutions" or path.stem in ("alice", "frank", "heidi", "judy"):
                assert contradicted(problem, found) == [], (path.name, problem.name)


RIGHT_RELU = '''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input
'''
# Functions that break one rule each, and the check that says so (their values may be right).
BROKEN = {
    "a tensor on ctx, never saved": ("MyReLU", "save_for_backward", RIGHT_RELU.replace(
        "ctx.save_for_backward(input)", "ctx.input = input").replace("input, = ctx.saved_tensors",
                                                                      "input = ctx.input")),
    "a tensor on ctx beside one saved": ("MyReLU", "save_for_backward", RIGHT_RELU.replace(
        "ctx.save_for_backward(input)", "ctx.save_for_backward(input)\n        ctx.kept = input")),
    "an input changed in place": ("MyReLU", "inputs unchanged", RIGHT_RELU.replace(
        "return input.clamp(min=0)",
        "out = input.clone()\n        input.mul_(2)\n        return out.clamp(min=0)")),
    "grad_output changed in place": ("MyReLU", "grad_output unchanged", RIGHT_RELU.replace(
        "grad_input = grad_output.clone()\n        grad_input[input < 0] = 0\n        return grad_input",
        "grad_output[input < 0] = 0\n        return grad_output")),
    "autograd instead of the companion": ("Cube", "companion used", '''
class CubeBackward(Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(grad_out, x)
        return grad_out * 3 * x ** 2

    @staticmethod
    def backward(ctx, g):
        grad_out, x = ctx.saved_tensors
        return g * 3 * x ** 2, g * grad_out * 6 * x


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        with torch.enable_grad():
            leaf = x.detach().requires_grad_()
            (grad,) = torch.autograd.grad(leaf ** 3, leaf, grad_out, create_graph=True)
        return grad
'''),
    "every gradient computed, no flag read": ("LinearFunction", "needs_input_grad", catalogue.LINEAR.format(
        body="grad_input = grad_output.mm(weight)\n        grad_weight = grad_output.t().mm(input)\n"
             "        if bias is not None:\n            grad_bias = grad_output.sum(0)")),
    "a function, not a Function": ("MyReLU", "is a Function", '''
def MyReLU(input):
    return input.clamp(min=0)
'''),
}


def right_source(problem: str) -> str:
    sources = [s for p, s in catalogue.RIGHT if p == problem]
    return RIGHT_RELU if problem == "MyReLU" else sources[0]


@pytest.mark.parametrize("name", BROKEN)
def test_a_forged_pass_of_a_rule_needs_the_source_to_agree(name):
    """A right Function's measurements sent for a Function whose source breaks a rule: the rule fails,
    from the source, and the Function loses its points."""
    problem_name, check, source = BROKEN[name]
    problem = find_problem(problem_name)
    forged = measured(problem, right_source(problem_name))
    honest = {r.check: r for r in judge(problem, forged, SEED)}
    assert all(r.passed for r in honest.values()), honest  # the forgery alone would have full marks
    results = {r.check: r for r in judge(problem, forged, SEED, facts(problem, catalogue.HEADER + source))}
    assert not results[check].passed and "read from your code by the grader" in results[check].message
    assert sum(r.score for r in results.values()) < max_score(problem)


@pytest.mark.parametrize("name", BROKEN)
def test_an_honest_measurement_of_the_same_code_fails_the_same_check(name):
    """What the source shows, a worker measuring the code honestly shows too: the source never costs a
    Function a point its own measurement would not."""
    problem_name, check, source = BROKEN[name]
    problem = find_problem(problem_name)
    results = {r.check: r for r in judge(problem, measured(problem, source), SEED)}
    assert not results[check].passed, results[check]


def test_wherever_the_source_contradicts_a_wrong_function_its_measurement_agrees():
    """Over the whole catalogue of wrong Functions: each check the source contradicts fails when the
    Function is measured honestly."""
    seen = 0
    for problem_name, source, *_ in catalogue.CASES:
        problem = find_problem(problem_name)
        said = contradicted(problem, facts(problem, catalogue.HEADER + source))
        if not said:
            continue
        seen += 1
        results = {r.check: r for r in judge(problem, measured(problem, source), SEED)}
        for check in said:
            assert not results[check].passed, (problem_name, check, source)
    assert seen >= 5  # the catalogue holds such mistakes: the test compares something
