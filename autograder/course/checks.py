"""The graded checks: each one object with its question, points, prerequisites and how it judges and
explains. Adding a check touches this file: a `Check` in `ALL`, in the order rows are reported, its
judgement in autograder/judge/ (and, for one that needs calls of its own, its measurement in
autograder/measure/checks.py). (An instructor adds one with `add_check` from a private file; see
docs/instructors.md.)

How a check is run:
- `part` is the part of the measurement it needs (judge/verdicts.PARTS: "forward", "backward", "second",
  "extra", or "" for none): when that part never finished (a hang), the check fails, and only it;
- `requires` names checks that must pass first: a check whose prerequisite failed earns nothing (no
  second-derivative points for a wrong first derivative);
- most checks judge the shared measurements of autograder/measure/ (each case's output, vector-Jacobian
  products, finite differences, what forward kept); one that needs calls of its own has them in
  autograder/measure/checks.py, run in the worker after its part, beside the student's code, returning
  plain data (data["checks"][name]): the worker never loads this file or the judging code;
- `judge(view)` runs in the grader with the reference (judge/judging.Judging) and returns a
  judge/findings.Finding (failed: the cause in one sentence, and pictures) or None (passed); `note(...)`
  passes with a remark that costs nothing, for an observation that changes no result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autograder.judge.apis import judge_extra
from autograder.judge.backward import (
    judge_backward_returns,
    judge_grad_output_unchanged,
    judge_gradient,
    judge_needs_input_grad,
)
from autograder.judge.forward import (
    judge_forward,
    judge_inputs_unchanged,
    judge_is_function,
    judge_save_for_backward,
)
from autograder.judge.gradcheck import judge_gradcheck
from autograder.judge.second import judge_companion, judge_gradgradcheck

if TYPE_CHECKING:
    from autograder.judge.findings import Finding
    from autograder.judge.judging import Judging


@dataclass(frozen=True)
class Check:
    name: str
    question: str  # what it asks, shown in the feedback tables
    points: float
    judge: Callable[[Judging], Finding | None]
    part: str = ""
    requires: tuple[str, ...] = ()
    applies: Callable[[Any], bool] = lambda problem: True
    extra: bool = False  # asked for by a problem's extra_checks

    def unmet(self, failed: list[str]) -> str:
        return (f"Not graded yet: this check needs {' and '.join(failed)} to pass first, and earns its "
                f"points once {'they pass' if len(failed) > 1 else 'it passes'}.")


# -- the registry ----------------------------------------------------------------------------------------

def _has(attribute: str) -> Callable[[Any], bool]:
    return lambda problem: bool(getattr(problem, attribute, None))


def _several_tensors(problem) -> bool:
    return getattr(problem, "tensor_inputs", 0) > 1


def _extra(check: str) -> Callable[[Any], bool]:
    return lambda problem: check in problem.extra_checks


ALL: list[Check] = [
    Check("is a Function", "the name is defined and is what the problem asks for", 0, judge_is_function),
    Check("forward", "forward returns a tensor of the right shape, dtype and values", 2, judge_forward,
          "forward"),
    Check("inputs unchanged", "forward leaves its inputs as they were (or says it changed them with "
          "ctx.mark_dirty)", 1, judge_inputs_unchanged, "forward"),
    Check("backward returns", "backward returns one value per forward input: a gradient shaped like each "
          "tensor input, None for the others", 1, judge_backward_returns, "backward"),
    Check("gradient", "the gradients (vector-Jacobian products) equal the reference's", 3, judge_gradient,
          "backward"),
    Check("needs_input_grad", "the gradients stay right when some inputs need no gradient "
          "(ctx.needs_input_grad)", 1, judge_needs_input_grad, "backward", requires=("gradient",),
          applies=_several_tensors),
    Check("grad_output unchanged", "backward leaves the grad_output it is given as it was", 1,
          judge_grad_output_unchanged, "backward"),
    Check("save_for_backward", "tensors kept for backward go through ctx.save_for_backward, not attributes "
          "of ctx", 1, judge_save_for_backward, "forward", applies=_has("saves")),
    Check("gradcheck", "the analytical Jacobian agrees with finite differences (float64)", 3, judge_gradcheck,
          "backward"),
    Check("companion used", ("backward calls the companion Function through apply, so that it appears in the "
                             "graph of the gradient"), 2, judge_companion, "second",
          applies=_has("companion")),
    Check("gradgradcheck", "the second derivatives agree with finite differences of backward (float64)", 2,
          judge_gradgradcheck, "second", requires=("gradient", "gradcheck"), applies=_has("double_backward")),
    Check("forward mode", "forward-mode AD (the jvp staticmethod) gives the right Jacobian", 2,
          judge_extra("forward mode"), "extra", requires=("forward",), applies=_extra("forward mode"),
          extra=True),
    Check("vmap", "torch.func.vmap and torch.func.grad over the Function give the right values", 2,
          judge_extra("vmap"), "extra", requires=("forward", "gradient"), applies=_extra("vmap"), extra=True),
    Check("opcheck", "torch.library.opcheck finds the custom op registered correctly", 2,
          judge_extra("opcheck"), "extra", applies=_extra("opcheck"), extra=True),
]
BY_NAME = {c.name: c for c in ALL}
EXTRA = tuple(c.name for c in ALL if c.extra)


def add_check(check: Check, before: str | None = None) -> None:
    """Adds a check (an instructor's own, from a private file): it applies to the problems its `applies`
    accepts, and is reported before the check named `before` (at the end otherwise). It judges from the
    measurements every problem gets (judge.Judging); a check that needs calls of its own is added in the
    package itself, its measurement in autograder/measure/checks.py, since grading workers start before
    any private file is read."""
    if check.name in BY_NAME:
        raise ValueError(f"add_check: there is already a check called {check.name!r}.")
    position = next((i for i, c in enumerate(ALL) if c.name == before), len(ALL))
    ALL.insert(position, check)
    BY_NAME[check.name] = check

