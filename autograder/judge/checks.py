"""The graded checks, each declared once here: its name, the question it asks, its points, the part of
the measurement it needs, its own measurement when it has one, its judgement and its prerequisites.

Adding a check (docs/ARCHITECTURE.md, "Adding a check", walks through it with an example):
1. its judgement, `judge(view) -> Finding | None`, a function of the module of autograder/judge/ for its
   group (forward.py, backward.py, second.py, apis.py);
2. only when it needs calls of its own beyond the shared measurements: its measurement, a function of
   autograder/measure/checks.py, `measurement(spec, obj, namespace, encoded_cases, seed) -> plain data`
   (a dataclass beside it there, with `to_plain`/`from_plain`), named in `measure`; the
   judgement reads it with `view.own()`, never by the check's name;
3. one `Check` in `ALL`, whose position is the order rows are reported in;
4. a wrong Function that fails it in tests/wrong_functions.py (CASES: the check and the words of its
   cause); every right Function there must keep full marks.
Points, totals, the `list` command and the worker's instructions (`spec_of`) follow from the
declaration: no other file names the check. An instructor adds one with `add_check` from a private file
(docs/instructors.md), judged from the shared measurements only.

How a check is run (verdicts.judge):
- `part` is the part of the measurement it needs (measure/spec.PARTS: "forward", "backward", "second",
  "torch", "extra", or "" for none): when that part never finished (a hang), the check fails, and only it;
- `requires` names checks declared before it that must pass first: a check whose prerequisite failed
  earns nothing (no second-derivative points for a wrong first derivative);
- most checks judge the shared measurements of autograder/measure/ (each case's output, vector-Jacobian
  products, finite differences, what forward kept); `measure`, when given, is called in the worker right
  after `part`, beside the student's code (the worker is told which to run by `spec_of`, never loading
  this file);
- `judge(view)` runs in the grader with the reference (judging.Judging) and returns a findings.Finding
  (failed: the cause in one sentence, and pictures) or None (passed); `note(...)` passes with a remark
  that costs nothing, for an observation that changes no result.

Problems (autograder/course/) are data and never import this: which checks a problem has, their points
and its total are `checks_of`, `points_of` and `max_score` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.course.assignments.registry import note_added_check
from autograder.judge.apis import judge_extra, judge_tangent_unchanged
from autograder.judge.backward import (
    judge_backward_returns,
    judge_grad_output_unchanged,
    judge_gradient,
    judge_needs_input_grad,
)
from autograder.judge.findings import Finding
from autograder.judge.forward import (
    judge_forward,
    judge_inputs_unchanged,
    judge_is_function,
    judge_save_for_backward,
)
from autograder.judge.gradcheck import judge_gradcheck
from autograder.judge.judging import Judging
from autograder.judge.second import judge_companion, judge_gradgradcheck
from autograder.measure.checks import measure_companion
from autograder.measure.spec import PARTS, Spec


@dataclass(frozen=True)
class Check:
    name: str
    question: str  # what it asks, shown in the feedback tables
    points: float
    judge: Callable[[Judging], Finding | None]
    part: str = ""
    requires: tuple[str, ...] = ()
    applies: Callable[[Any], bool] = lambda problem: True
    extra: bool = False  # asked for by a problem's extra_checks (which name it): applies to those only
    measure: Callable[..., Any] | None = None  # a function of autograder/measure/, run after `part`

    def __post_init__(self) -> None:
        if self.extra:
            object.__setattr__(self, "applies", lambda problem: self.name in problem.extra_checks)
        if self.part not in ("", *PARTS):
            raise ValueError(f"Check {self.name!r}: part {self.part!r} is not a part measured: one of "
                             f"{', '.join(PARTS)}, or \"\" for none.")
        if self.measure is not None and not self.part:
            raise ValueError(f"Check {self.name!r} has a measurement of its own: name the part it follows "
                             f"(one of {', '.join(PARTS)}).")
        if self.measure is not None and not self.measure.__module__.startswith("autograder.measure."):
            raise ValueError(f"Check {self.name!r}: its measurement {self.measure.__qualname__} is not a "
                             f"function of autograder/measure/, which is all a grading worker loads.")

    def unmet(self, failed: list[str]) -> str:
        return (f"Not graded yet: this check needs {' and '.join(failed)} to pass first, and earns its "
                f"points once {'they pass' if len(failed) > 1 else 'it passes'}.")


# -- the registry ----------------------------------------------------------------------------------------

def _has(attribute: str) -> Callable[[Any], bool]:
    return lambda problem: bool(getattr(problem, attribute, None))


def _graded_in(extra: str) -> Callable[[Any], bool]:
    return lambda problem: extra in getattr(problem, "extra_checks", ())


def _several_tensors(problem) -> bool:
    return getattr(problem, "tensor_inputs", 0) > 1


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
          "(ctx.needs_input_grad) and, where the exercise asks, their work is skipped", 1,
          judge_needs_input_grad, "backward", requires=("gradient",),
          applies=_several_tensors),
    Check("grad_output unchanged", "backward leaves the grad_output it is given as it was", 1,
          judge_grad_output_unchanged, "backward"),
    Check("save_for_backward", "tensors kept for backward go through ctx.save_for_backward, not attributes "
          "of ctx", 1, judge_save_for_backward, "forward", applies=_has("saves")),
    Check("gradcheck", "the analytical Jacobian agrees with finite differences (float64)", 3, judge_gradcheck,
          "backward"),
    Check("companion used", ("backward calls the companion Function through apply, so that it appears in the "
                             "graph of the gradient"), 2, judge_companion, "second",
          applies=_has("companion"), measure=measure_companion),
    Check("gradgradcheck", "the second derivatives agree with finite differences of backward (float64)", 2,
          judge_gradgradcheck, "second", requires=("gradient", "gradcheck"), applies=_has("double_backward")),
    Check("forward mode", "forward-mode AD (the jvp staticmethod) gives the right Jacobian", 2,
          judge_extra("forward mode"), "extra", requires=("forward",), extra=True),
    Check("vmap", "torch.func.vmap and torch.func.grad over the Function give the right values", 2,
          judge_extra("vmap"), "extra", requires=("forward", "gradient"), extra=True),
    Check("opcheck", "torch.library.opcheck finds the custom op registered correctly", 2,
          judge_extra("opcheck"), "extra", extra=True),
    Check("tangent unchanged", "forward mode's jvp leaves the tangent it is given as it was", 1,
          judge_tangent_unchanged, "extra", applies=_graded_in("forward mode")),
]


def _prerequisites_known(check: Check, before: list[Check]) -> None:
    unknown = [r for r in check.requires if r not in {c.name for c in before}]
    if unknown:
        raise ValueError(f"Check {check.name!r} requires {', '.join(map(repr, unknown))}, which is not a "
                         f"check declared before it.")


def _validated(checks: list[Check]) -> list[Check]:
    """The registry as declared, once each name, every prerequisite a check before the one needing it."""
    for i, check in enumerate(checks):
        if check.name in {c.name for c in checks[:i]}:
            raise ValueError(f"There are two checks called {check.name!r}.")
        _prerequisites_known(check, checks[:i])
    return checks


BY_NAME = {c.name: c for c in _validated(ALL)}
EXTRA = tuple(c.name for c in ALL if c.extra)


def add_check(check: Check, before: str | None = None) -> None:
    """Adds a check (an instructor's own, from a private file): it applies to the problems its `applies`
    accepts, and is reported before the check named `before` (at the end otherwise). It judges from the
    measurements every problem gets (judging.Judging); a check that needs calls of its own is added in the
    package itself, since grading workers start before any private file is read."""
    if check.name in BY_NAME:
        raise ValueError(f"add_check: there is already a check called {check.name!r}.")
    if check.measure is not None:
        raise ValueError(f"add_check: {check.name!r} has a measurement of its own, which a grading worker "
                         f"cannot load from a private file; judge it from the shared measurements instead.")
    position = next((i for i, c in enumerate(ALL) if c.name == before), len(ALL))
    _prerequisites_known(check, ALL[:position])
    ALL.insert(position, check)
    BY_NAME[check.name] = check
    note_added_check()


# -- what a problem's checks are ----------------------------------------------------------------------

def checks_of(problem) -> list[str]:
    """The names of the checks the problem is graded on, in report order."""
    return [c.name for c in ALL if c.applies(problem) and c.name not in problem.skip]


def points_of(problem, check: str) -> float:
    return problem.points.get(check, BY_NAME[check].points if check in BY_NAME else 0.0)


def max_score(graded) -> float:
    """A problem's total, or an assignment's (the sum of its problems')."""
    if hasattr(graded, "problems"):
        return sum(max_score(p) for p in graded.problems)
    return sum(points_of(graded, c) for c in checks_of(graded))


def spec_of(problem) -> Spec:
    """What a grading worker (or the notebook's check()) may know of a problem: how to find and call the
    Function and what to measure, its checks' own measurements by module and name; never the reference,
    the points or whether it is hidden."""
    names = checks_of(problem)
    own = tuple((c.name, c.part, c.measure.__module__, c.measure.__name__)
                for c in ALL if c.name in names and c.measure is not None)
    return Spec(problem.name, problem.entry, problem.kind, problem.double_backward,
                tuple(problem.extra_checks), tuple(problem.also_functions), problem.companion,
                problem.all_outputs, tuple(names), own)
