"""Is every rule the course teaches graded on every way the lessons teach to write a Function?

The table below is the matrix of issue 32: one cell per rule and way. A cell that applies names the check
that grades it, a wrong attempt written that way (tests/wrong_functions.py, WAYS_WRONG: it must fail that
check, with its cause in words) and a right one (WAYS_RIGHT: full marks, a note at most); where the rule
is read in the source too (judge/source.py), the source must show the wrong attempt's slip and never
contradict the right one. A cell that does not apply says why.

The ways: `forward(ctx, ...)` (lesson 2), `setup_context` with a forward without ctx (lesson 7), `jvp`
(forward mode), `vmap` (generate_vmap_rule or a vmap staticmethod) and `custom_op`
(torch.library.custom_op with register_autograd).
"""

from dataclasses import dataclass

import pytest

import tests.wrong_functions as catalogue
from autograder.course.assignments.registry import find_problem
from autograder.judge.checks import BY_NAME
from autograder.judge.verdicts import judge
from tests.judge.test_judge import run_check
from tests.judge.test_source_rules import contradicted, facts, measured

pytestmark = pytest.mark.stack  # every way of writing a Function, on every torch supported (make test-torch)

RULES = ("inputs unchanged", "grad_output and tangents unchanged", "save_for_backward, not ctx",
         "needs_input_grad", "grad mode in backward", "companion used", "None for non-tensor arguments")
WAYS = ("forward(ctx, ...)", "setup_context", "jvp", "vmap", "custom_op")
SEED = 0


@dataclass(frozen=True)
class Cell:
    check: str = ""  # the check that grades the rule written this way; "" where it does not apply
    attempts: str = ""  # the key of its wrong and right attempts in WAYS_WRONG and WAYS_RIGHT
    source: bool = False  # the rule is read in the source as well (judge/source.py)
    why_not: str = ""  # where it does not apply: why


def applies(check: str, attempts: str, source: bool = False) -> Cell:
    return Cell(check, attempts, source)


def not_here(why: str) -> Cell:
    return Cell(why_not=why)


MATRIX: dict[tuple[str, str], Cell] = {
    # forward leaves its inputs as they were (or says so with ctx.mark_dirty; a custom op, with mutates_args)
    ("inputs unchanged", "forward(ctx, ...)"): applies("inputs unchanged", "inputs/ctx", source=True),
    ("inputs unchanged", "setup_context"): applies("inputs unchanged", "inputs/setup_context", source=True),
    # a jvp changing an input that requires grad raises; the measurement names that error as its cause
    ("inputs unchanged", "jvp"): applies("forward mode", "inputs/jvp"),
    ("inputs unchanged", "vmap"): applies("inputs unchanged", "inputs/vmap", source=True),
    ("inputs unchanged", "custom_op"): applies("inputs unchanged", "inputs/custom_op", source=True),
    # backward leaves grad_output as it was; jvp, its tangent
    ("grad_output and tangents unchanged", "forward(ctx, ...)"): applies("grad_output unchanged", "grad/ctx",
                                                                         source=True),
    ("grad_output and tangents unchanged", "setup_context"): applies("grad_output unchanged",
                                                                     "grad/setup_context", source=True),
    ("grad_output and tangents unchanged", "jvp"): applies("tangent unchanged", "grad/jvp", source=True),
    ("grad_output and tangents unchanged", "vmap"): not_here(
        "a vmap rule is given neither a grad_output nor a tangent; under torch.func.grad and vmap the same "
        "backward runs, graded under forward(ctx, ...) and setup_context"),
    ("grad_output and tangents unchanged", "custom_op"): applies("grad_output unchanged", "grad/custom_op",
                                                                 source=True),
    # tensors kept for backward (or for jvp: save_for_forward) go through ctx, never as attributes of ctx
    ("save_for_backward, not ctx", "forward(ctx, ...)"): applies("save_for_backward", "ctx/ctx", source=True),
    ("save_for_backward, not ctx", "setup_context"): applies("save_for_backward", "ctx/setup_context",
                                                            source=True),
    ("save_for_backward, not ctx", "jvp"): applies("save_for_backward", "ctx/jvp", source=True),
    ("save_for_backward, not ctx", "vmap"): not_here(
        "a vmap rule has no ctx (it is given info and in_dims); generate_vmap_rule runs the Function's own "
        "setup_context, graded under setup_context"),
    ("save_for_backward, not ctx", "custom_op"): applies("save_for_backward", "ctx/custom_op", source=True),
    # gradients stay right when some inputs need none (skipping the work is graded by the check itself)
    ("needs_input_grad", "forward(ctx, ...)"): applies("needs_input_grad", "needs/ctx"),
    ("needs_input_grad", "setup_context"): applies("needs_input_grad", "needs/setup_context"),
    ("needs_input_grad", "jvp"): not_here(
        "forward mode has no needs_input_grad: jvp is given one tangent per input and returns the output's"),
    ("needs_input_grad", "vmap"): not_here(
        "the problem graded under vmap (Softplus) has one tensor input; a vmap rule computes no gradient"),
    ("needs_input_grad", "custom_op"): not_here(
        "the graded custom op (softsign) has one tensor input; an instructor's op with several is measured "
        "with the same subsets of inputs needing a gradient as a Function"),
    # a first-order backward may compute with grad mode off or through autograd (WAYS_RIGHT); a backward that
    # is differentiated again must not cut its graph (lesson 5: no no_grad, .detach(), .numpy() there)
    ("grad mode in backward", "forward(ctx, ...)"): applies("gradgradcheck", "gradmode/ctx"),
    ("grad mode in backward", "setup_context"): applies("gradgradcheck", "gradmode/setup_context"),
    ("grad mode in backward", "jvp"): not_here(
        "forward mode is graded to first order: no jvp is differentiated again"),
    ("grad mode in backward", "vmap"): not_here(
        "no problem graded under vmap is graded on second derivatives"),
    ("grad mode in backward", "custom_op"): not_here(
        "the graded custom op is not graded on second derivatives"),
    # Cube's backward returns CubeBackward.apply(...)
    ("companion used", "forward(ctx, ...)"): applies("companion used", "companion/ctx", source=True),
    ("companion used", "setup_context"): applies("companion used", "companion/setup_context", source=True),
    ("companion used", "jvp"): not_here("a companion Function is lesson 5's way to a second derivative; no "
                                        "problem with one is graded in forward mode"),
    ("companion used", "vmap"): not_here("no problem with a companion Function is graded under vmap"),
    ("companion used", "custom_op"): not_here("no problem with a companion Function is a custom op"),
    # backward returns None for an argument that is not a tensor
    ("None for non-tensor arguments", "forward(ctx, ...)"): applies("backward returns", "none/ctx"),
    ("None for non-tensor arguments", "setup_context"): applies("backward returns", "none/setup_context"),
    ("None for non-tensor arguments", "jvp"): not_here(
        "jvp returns one tangent per output, never a value per input"),
    ("None for non-tensor arguments", "vmap"): not_here(
        "a vmap rule returns the output and its batch dimensions, no gradient"),
    ("None for non-tensor arguments", "custom_op"): not_here(
        "the graded custom op takes one tensor and nothing else; a None too many is told on the torch that "
        "refuses it (_EXTRA_NONE in tests/wrong_functions.py)"),
}
APPLYING = sorted(key for key, cell in MATRIX.items() if cell.check)


def own_op(source: str, run: str) -> str:
    """The source with its custom op renamed for this run: an op is registered once per process, and
    tests/judge/test_judge.py runs the same attempts in it."""
    return source.replace('custom_op("ways_', f'custom_op("matrix_{run}_')


def test_the_matrix_has_one_cell_per_rule_and_way():
    """Every rule is declared on every way, once, and each cell either applies (a declared check, a wrong
    and a right attempt) or says why not; no attempt of the catalogue's WAYS lists is left out."""
    assert sorted(MATRIX) == sorted((rule, way) for rule in RULES for way in WAYS)
    for key, cell in MATRIX.items():
        if cell.check:
            assert cell.check in BY_NAME and not cell.why_not, key
            assert cell.attempts in catalogue.WAYS_WRONG and cell.attempts in catalogue.WAYS_RIGHT, key
            assert catalogue.WAYS_WRONG[cell.attempts][2] == cell.check, key
        else:
            assert len(cell.why_not) > 20 and not cell.attempts, key
    used = {cell.attempts for cell in MATRIX.values() if cell.check}
    assert used == set(catalogue.WAYS_WRONG) == set(catalogue.WAYS_RIGHT)


@pytest.mark.parametrize("key", APPLYING, ids=[f"{r}-{w}" for r, w in APPLYING])
def test_the_wrong_attempt_fails_its_check_with_its_cause(key):
    cell = MATRIX[key]
    problem, source, check, cause = catalogue.WAYS_WRONG[cell.attempts]
    report = run_check(problem, own_op(source, "wrong"))
    result = {r.check: r for r in report.results}[check]
    assert not result.passed and cause in result.message, result.message
    assert report.score < sum(r.max_score for r in report.results)


@pytest.mark.parametrize("key", APPLYING, ids=[f"{r}-{w}" for r, w in APPLYING])
def test_the_right_attempt_keeps_full_marks(key):
    problem, source = catalogue.WAYS_RIGHT[MATRIX[key].attempts]
    report = run_check(problem, own_op(source, "right"))
    assert report.passed, report
    assert all(not r.message or r.message.startswith("Note (costs nothing)") for r in report.results)


SOURCE_READ = sorted(key for key, cell in MATRIX.items() if cell.source)


@pytest.mark.parametrize("key", SOURCE_READ, ids=[f"{r}-{w}" for r, w in SOURCE_READ])
def test_the_source_shows_the_slip_and_never_blames_the_right_attempt(key):
    """A worker's pass on a rule must agree with the source: the right attempt's measurements, sent for the
    wrong attempt's source (a forgery), fail the rule from the source; the right attempt's own source
    contradicts nothing."""
    cell = MATRIX[key]
    name, wrong, check, _ = catalogue.WAYS_WRONG[cell.attempts]
    _, right = catalogue.WAYS_RIGHT[cell.attempts]
    assert catalogue.WAYS_RIGHT[cell.attempts][0] == name  # a right attempt at the same problem
    problem = find_problem(name)
    assert contradicted(problem, facts(problem, catalogue.HEADER + right)) == []
    forged = measured(problem, own_op(right, "forged"))
    results = {r.check: r for r in judge(problem, forged, SEED, facts(problem, catalogue.HEADER + wrong))}
    assert not results[check].passed and "read from your code by the grader" in results[check].message
