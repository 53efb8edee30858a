"""What a graded problem is: a name, how to make its inputs, a reference, its checks and their points.

Problems are data: they never run student code and never import the judgement. autograder/measure/
measures a student's Function (in a worker or, for the inline check, in the notebook); autograder/judge/
holds the checks (checks.py: which apply to a problem, their points) and turns the measurements into
verdicts.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch


class DefinitionError(TypeError):
    """A Problem or a Case written in a way the grader cannot read (cases=Case(...) for a tuple of them):
    raised where it is written, so that the instructor's file is reported with that line (registry.py),
    the line of `keyword` when one is named."""

    def __init__(self, text: str, problem: str = "", keyword: str = ""):
        self.text, self.problem, self.keyword = text, problem, keyword
        super().__init__(f"Problem {problem!r}: {text}" if problem else text)


def defined_at() -> tuple[str, int]:
    """(file, line) of the code that is constructing a Problem: the first caller outside this module and
    the dataclass machinery (its __init__, dataclasses.replace)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and (frame.f_code.co_filename in (__file__, dataclasses.__file__)
                                        or frame.f_code.co_filename.startswith("<")):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


@dataclass(frozen=True, repr=False)
class TensorSpec:
    """A float64 input drawn uniformly from [low, high], kept `margin` away from each of `avoid`
    (the kinks where the derivative does not exist, such as 0 for |x| or ReLU).

    With another `dtype` ("int64", "bool", "float32", ... or the torch dtype) the tensor is passed as it
    is and is not differentiated: integers are drawn from low, low + 1, ..., high - 1 (an index tensor:
    low=0, high=the size indexed), booleans are True or False with even odds; floats of another
    precision as float64 ones, then converted."""

    shape: tuple[int, ...]
    low: float = -1.0
    high: float = 1.0
    avoid: tuple[float, ...] = ()
    margin: float = 0.1
    dtype: str = "float64"

    def __post_init__(self):
        if isinstance(self.dtype, torch.dtype):
            object.__setattr__(self, "dtype", str(self.dtype).removeprefix("torch."))
        object.__setattr__(self, "shape", tuple(self.shape))

    def __repr__(self) -> str:  # as an instructor writes it: the shape, then what is not the default
        given = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)[1:]
                 if getattr(self, f.name) != f.default]
        return f"TensorSpec({', '.join([repr(self.shape), *given])})"

    @property
    def differentiable(self) -> bool:
        return self.dtype == "float64"

    def make(self, generator: torch.Generator) -> torch.Tensor:
        dtype = getattr(torch, self.dtype)
        if self.dtype == "bool":
            return torch.randint(0, 2, self.shape, generator=generator).to(torch.bool)
        if not dtype.is_floating_point:
            return torch.randint(int(self.low), int(self.high), self.shape, generator=generator).to(dtype)
        x = torch.empty(self.shape, dtype=torch.float64).uniform_(self.low, self.high, generator=generator)
        for point in self.avoid:
            near = (x - point).abs() < self.margin
            x = torch.where(near, point + torch.where(x >= point, 1.0, -1.0) * 2 * self.margin, x)
        return x.to(dtype)


@dataclass(frozen=True)
class FixedTensor:
    """A float64 input with given values, for the values a lesson promises to try (Softplus at ±1000)."""

    values: tuple[float, ...]
    shape: tuple[int, ...] = ()

    def make(self, generator: torch.Generator) -> torch.Tensor:
        shape = self.shape or (len(self.values),)
        return torch.tensor(self.values, dtype=torch.float64).reshape(shape)


@dataclass(frozen=True)
class Case:
    """One call of the student's Function: tensor specs and plain values (an omitted optional
    argument is simply left out), and keyword arguments (plain values) passed by name."""

    args: tuple[Any, ...]
    kwargs: Any = ()  # a dict, kept as (name, value) pairs

    def __post_init__(self):
        if not isinstance(self.args, tuple | list):
            raise DefinitionError(
                f"Case takes its positional arguments as a tuple, Case(({_shown(self.args)},)) with the "
                f"comma that makes a tuple of one, not Case({_shown(self.args)}).")
        object.__setattr__(self, "args", tuple(self.args))
        items = self.kwargs.items() if isinstance(self.kwargs, dict) else self.kwargs
        try:
            object.__setattr__(self, "kwargs", tuple((str(k), v) for k, v in items))
        except (TypeError, ValueError):
            example = 'Case((TensorSpec((3, 4)),), {"dim": 0})'
            raise DefinitionError(f"Case takes its keyword arguments as a dict, e.g. {example}, not "
                                  f"{_shown(self.kwargs)}.") from None

    def describe(self) -> str:
        def one(a):
            if isinstance(a, TensorSpec):
                return f"tensor{tuple(a.shape)}" + ("" if a.differentiable else f" of {a.dtype}")
            if isinstance(a, FixedTensor):
                return f"tensor{tuple(a.shape or (len(a.values),))}"
            return repr(a)

        parts = [one(a) for a in self.args] + [f"{k}={one(v)}" for k, v in self.kwargs]
        return "(" + ", ".join(parts) + ")"


def _shown(value: Any) -> str:
    """A value as an instructor wrote it, in a message (shortened)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Term:
    """One named term of a derivative, as a function of the tensor inputs (see Problem.terms)."""

    text: str
    value: Callable[..., torch.Tensor]


@dataclass(frozen=True)
class Mistake:
    """A mistake learners make, and its cause in one sentence, `text` (see Problem.mistakes). Either a
    wrong `forward`, a function of the same arguments as the reference (an output equal to its is told
    with `text`), or a wrong backward given as `backward`: a function with the reference's values whose
    autograd gradient is the wrong one (a path of the derivative left out is that path detached), so that
    a gradient equal to its is told with `text`."""

    text: str
    forward: Callable[..., torch.Tensor] | None = None
    backward: Callable[..., torch.Tensor] | None = None


@dataclass(frozen=True)
class Kink:
    """A point where the derivative does not exist and the exercise allows any value from `low` to `high`
    (ReLU at 0: from 0 to 1). Where a tensor input is exactly `at`, each gradient is judged entry by entry
    against that range, and finite differences, meaningless there, are left out of gradcheck; `allowed`
    says in words what the exercise allows, for the cause of a value outside it."""

    at: float
    low: float
    high: float
    allowed: str = ""


@dataclass(frozen=True, eq=False)  # hashed by identity: one object per problem
class Problem:
    """A graded Function. `kind` is "function" (a torch.autograd.Function subclass, called through
    `.apply`) or "callable" (a plain function such as `sinh`). `reference` computes the right answer
    with PyTorch's own operations, so autograd differentiates it exactly; `solution`, when given, is a
    Function written the way the exercise asks, whose autograd graph is drawn as the reference's.

    What the exercise asks beyond the numbers, each a graded check (autograder/judge/checks.py):
    `saves`, that tensors kept for backward go through ctx.save_for_backward; `skips_unneeded`, that
    backward skips the gradient of an input that needs none (ctx.needs_input_grad), returning None for it
    without computing it (LinearFunction; graded by the check needs_input_grad); `companion`, a Function
    backward must call (Cube: CubeBackward); `all_outputs`, a Function whose every output backward must
    differentiate (Sinh's extra outputs). What the grader knows of the mathematics, to name a mistake's cause:
    `elementwise` (output entry i depends on input entry i only), `derivative` (in words), `kinks` (the
    derivatives the exercise allows where there is none), `terms` (the derivative as a sum of named terms,
    so that a missing term or one of the wrong sign is named), `mistakes` (wrong forwards and backwards
    learners write, so that an output or a gradient equal to one is told by its cause)."""

    name: str
    summary: str
    reference: Callable[..., torch.Tensor]
    cases: tuple[Case, ...]
    kind: str = "function"
    entry: str = ""  # the name looked up in the submission when it is not `name`, e.g. sinh for Sinh
    double_backward: bool = False
    extra_checks: tuple[str, ...] = ()  # names of checks declared extra (judge/checks.EXTRA)
    also_functions: tuple[str, ...] = ()  # other names the submission must define, e.g. CubeBackward
    # Hidden: graded and scored, but never shown by the inline check(); on Gradescope, shown only as the
    # instructor chooses (visibility "hidden" or "after_published"). A whole problem, or single checks.
    hidden: bool = False
    hidden_checks: frozenset[str] = frozenset()
    points: dict[str, float] = field(default_factory=dict)  # overrides of the checks' own points
    saves: bool = False
    skips_unneeded: bool = False
    companion: str = ""
    all_outputs: str = ""
    solution: Any = None
    elementwise: bool = False
    derivative: str = ""
    terms: tuple[Term, ...] = ()
    kinks: tuple[Kink, ...] = ()  # elementwise problems: the derivatives the exercise allows at a kink
    mistakes: tuple[Mistake, ...] = ()  # wrong forwards and backwards learners write, each named when seen
    # Authoring (docs/authoring.md): (rtol, atol) against the reference (forward, gradient; default
    # projections.RTOL/ATOL), and against finite differences (gradcheck, gradgradcheck; default torch's);
    # checks left out (e.g. "gradcheck" for a straight-through estimator); a sentence of the
    # instructor's own, per check, added to what a student reads when that check fails.
    tolerance: tuple[float, float] | None = None
    gradcheck_tolerance: tuple[float, float] | None = None
    skip: tuple[str, ...] = ()
    hints: dict[str, str] = field(default_factory=dict)
    # Where it was written, (file, line), for messages about it; found by itself, and never part of what
    # decides a result (fingerprint.py leaves it out).
    written_at: tuple[str, int] | None = field(default=None, repr=False)

    def __post_init__(self):
        if self.written_at is None:
            object.__setattr__(self, "written_at", defined_at())
        if isinstance(self.cases, Case) or not isinstance(self.cases, tuple | list) \
                or not all(isinstance(c, Case) for c in self.cases):
            one = "Case(...)" if isinstance(self.cases, Case) else _shown(self.cases)
            raise DefinitionError(f"cases takes a tuple of Case(...), cases=(Case(...),) with the comma "
                                  f"that makes a tuple of one, not cases={one}.", self.name, "cases")
        object.__setattr__(self, "cases", tuple(self.cases))
        object.__setattr__(self, "skip", tuple(self.skip))
        object.__setattr__(self, "hidden_checks", frozenset(self.hidden_checks))

    @property
    def lookup(self) -> str:
        return self.entry or self.name

    @property
    def rtol_atol(self) -> tuple[float, float]:
        from autograder.measure.projections import ATOL, RTOL

        return tuple(self.tolerance) if self.tolerance else (RTOL, ATOL)

    @property
    def gradcheck_rtol_atol(self) -> tuple[float, float]:
        from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL

        return (tuple(self.gradcheck_tolerance) if self.gradcheck_tolerance
                else (GRADCHECK_RTOL, GRADCHECK_ATOL))

    @property
    def tensor_inputs(self) -> int:
        """The most differentiable (float64) tensor arguments any case passes."""
        return max(sum(isinstance(a, FixedTensor) or (isinstance(a, TensorSpec) and a.differentiable)
                       for a in c.args)
                   for c in self.cases) if self.cases else 0

    def inputs(self, case_index: int, seed: int = 0) -> list[Any]:
        """The seeded inputs of one case: grading the same submission twice gives the same results."""
        generator = torch.Generator().manual_seed(seed * 1000 + case_index)
        return [a.make(generator) if isinstance(a, (TensorSpec, FixedTensor)) else a
                for a in self.cases[case_index].args]

    def kwargs(self, case_index: int) -> dict[str, Any]:
        return dict(self.cases[case_index].kwargs)

    def call(self, obj: Any, args: list[Any], kwargs: dict | None = None) -> Any:
        return obj.apply(*args, **(kwargs or {})) if self.kind == "function" else obj(*args, **(kwargs or {}))
