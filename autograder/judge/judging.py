"""What the checks judge from: `Judging`, one submission's problem with its learner's names, the
reference and one `CaseView` per case (what stops a case from being judged is blocked.py)."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import torch

from autograder.course.problems import FixedTensor, Problem, TensorSpec
from autograder.judge.reference import encoded_once, input_names
from autograder.judge.untrusted import float64, lists
from autograder.measure import projections
from autograder.measure.contract import CaseMeasurement, ProblemMeasurement, TorchSays
from autograder.measure.encoding import differentiable, one_entry_each, positional, tensor_sizes


def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) and len(name) <= 40


@dataclass
class CaseView:
    """One case: the inputs, what was measured, the reference's answers, and whether it can be judged."""

    index: int
    intro: str  # the case in the learner's words, opening a sentence: "With input of shape (3, 5): "
    encoded: list[Any]
    measured: CaseMeasurement  # untrusted, parsed
    ref: dict
    names: list[str]  # of every argument, in the learner's words
    tensor_names: list[str]
    seed: int
    kwargs: dict = field(default_factory=dict)  # the case's keyword arguments

    @property
    def sizes(self) -> list[int]:
        return tensor_sizes(self.encoded)

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        return [tuple(a["shape"]) for a in self.encoded if differentiable(a)]

    @property
    def rows(self) -> int:
        return len(self.ref["output"]["values"])

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.ref["output"]["shape"])

    @cached_property
    def directions(self) -> projections.Directions:
        return projections.directions(self.seed, self.index, self.rows, tuple(self.sizes))

    @property
    def inputs(self) -> list[torch.Tensor]:
        """The tensor inputs, as the reference saw them."""
        return [float64(a["values"]).reshape(a["shape"]) for a in self.encoded if differentiable(a)]

    def vjps(self) -> list[list[list[float]]]:
        return [lists(self.measured.vjp, self.sizes), lists(self.measured.vjp2, self.sizes)]


class Judging:
    """Everything a check's judgement reads, for one problem of one submission."""

    def __init__(self, problem: Problem, data: ProblemMeasurement, reference: dict, seed: int):
        self.problem, self.data, self.reference, self.seed = problem, data, reference, seed
        self.names = self._learner_names()
        self.says: TorchSays = data.torch_says
        self.cases = [self._case(i, c, r)
                      for i, (c, r) in enumerate(zip(data.cases or [], reference["cases"]))]
        self.failed: dict[str, Any] = {}  # the checks that failed so far, in report order
        self.judged = ""  # the check being judged (verdicts.judge sets it): whose measurement own() reads

    @property
    def lookup(self) -> str:
        return self.problem.lookup

    def _learner_names(self) -> list[str]:
        """The names of forward's parameters as the learner wrote them (ctx left out), where they fit the
        arguments; otherwise the reference's."""
        fallback = input_names(self.problem)
        names = self.data.names.forward
        count = max(len(c.args) for c in self.problem.cases)
        if isinstance(names, list) and names[:1] == ["ctx"]:
            names = names[1:]  # forward(ctx, x) beside setup_context, or forward(self, ctx, x): told as such
        if isinstance(names, list) and len(names) >= count and all(_identifier(n) for n in names[:count]):
            return list(names[:count])
        return fallback

    def learner(self, key: str, default: list[str]) -> list[str]:
        """Other names the learner chose: "backward" (backward's gradient parameters), "outputs_backward"
        (those of the Function whose every output is graded), "companion" (the companion's forward's)."""
        names = getattr(self.data.names, key)
        if isinstance(names, list) and names and all(_identifier(n) for n in names):
            return list(names)
        return default

    def own(self) -> Any:
        """What the check being judged measured of its own (Check.measure): untrusted plain data, read
        through its type beside its measurement in autograder/measure/checks.py (None when nothing came
        back)."""
        return self.data.own(self.judged)

    @property
    def grad_output(self) -> str:
        return self.learner("backward", ["grad_output"])[0]

    def _case(self, i: int, measured: CaseMeasurement | None, ref: dict) -> CaseView:
        if measured is None:
            raise TypeError("malformed case")
        # keyword arguments: self.problem.kwargs
        encoded = positional(encoded_once(self.problem, self.seed)[i])
        names = list(self.names) + [f"argument {k + 1}" for k in range(len(self.names), len(encoded))]
        tensor_names = [n for n, a in zip(names, encoded) if differentiable(a)]
        return CaseView(i, self.describe(i, names) + ": ", encoded, measured, ref, names, tensor_names,
                        self.seed, self.problem.kwargs(i))

    def describe(self, i: int, names: list[str]) -> str:
        """The case in the learner's words: "With input (3, 8) and n = 2"."""
        spec = self.problem.cases[i].args
        parts = []
        for name, arg in zip(names, spec):
            if isinstance(arg, (TensorSpec, FixedTensor)):
                shape = arg.shape if isinstance(arg, TensorSpec) else (arg.shape or (len(arg.values),))
                values = f" = {list(arg.values)}" if isinstance(arg, FixedTensor) else ""
                dtype = f" of {arg.dtype}" if isinstance(arg, TensorSpec) and not arg.differentiable else ""
                parts.append(f"{name} of shape {tuple(shape)}{dtype}{values}")
            else:
                parts.append(f"{name} = {arg!r}")
        parts += [f"{name} = {value!r}" for name, value in self.problem.cases[i].kwargs]
        omitted = self._omitted(len(spec))
        text = "With " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])
        return text + (f" ({', '.join(omitted)} left out)" if omitted else "")

    def _omitted(self, given: int) -> list[str]:
        defaults = self.data.names.optional
        names = self.names
        if isinstance(defaults, list):
            return [n for n in names[given:] if n in defaults]
        return []


def telling_first(cases: list[CaseView]) -> list[CaseView]:
    """The cases in the order their failures are described: those of one entry per tensor last, since
    one number differs from another by any factor and shows no pattern."""
    return sorted(cases, key=lambda case: one_entry_each(case.encoded))
