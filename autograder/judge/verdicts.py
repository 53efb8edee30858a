"""Turns a probe's raw numbers into verdicts, scores and explanations, against the reference.

This runs in the trusted process only: the reference is measured here with PyTorch's own operations,
and every comparison is made here on tensors rebuilt from plain data.

Each check is one object of autograder/course/checks.py (its question, points, prerequisites, measurement and
judgement). This module gives the checks what they judge from: `Judging`, one submission's problem with
its learner's names, the reference and one `CaseView` per case; and it runs the checks in order, failing
without points a check whose prerequisite failed, a check whose measurement never finished (a hang costs
that part only), and a check a case cannot reach (forward raised: the cause is told once, under the check
it belongs to, and the others point there).
"""

from __future__ import annotations

import inspect
import keyword
import traceback
from dataclasses import dataclass, field
from functools import cache, cached_property
from types import SimpleNamespace
from typing import Any

import torch

from autograder.course.problems import FixedTensor, Problem, TensorSpec
from autograder.measure import probe as probing
from autograder.measure import projections


@dataclass
class Figure:
    """A picture to draw with the explanation: heat maps of matrices, or autograd graphs.

    For heat maps, each panel is a matrix (nested lists): a tensor is laid out as it prints (a vector as
    one row, a matrix as itself). `legend` says what a square is; `values` prints each entry's value in
    its square (small tensors)."""

    kind: str  # "heatmaps" or "graphs"
    title: str
    panels: list[tuple[str, Any]]  # (caption, matrix as nested lists | Graph dict)
    legend: str = ""
    values: bool = False


@dataclass
class CheckResult:
    problem: str
    check: str
    passed: bool
    max_score: float
    message: str = ""
    details: str = ""
    figures: list[Figure] = field(default_factory=list)
    hidden: bool = False

    @property
    def name(self) -> str:
        return f"{self.problem}: {self.check}"

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0


@dataclass
class Finding:
    """What a check's judgement found: a failure (passed=False) or a note on a pass that costs nothing."""

    passed: bool
    message: str
    details: str = ""
    figures: list[Figure] = field(default_factory=list)


def fail(message: str, details: str = "", figures: list[Figure] | None = None) -> Finding:
    return Finding(False, message, details, figures or [])


def note(message: str) -> Finding:
    """An observation that changes no result: shown with a passed check, it costs nothing."""
    return Finding(True, "Note (costs nothing): " + message)


class Verdicts:
    """One result per check of a problem; a failure recorded for a check is the one shown."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.failures: dict[str, tuple[str, str, list[Figure]]] = {}
        self.notes: dict[str, str] = {}

    def fail(self, check: str, message: str, details: str = "", figures: list[Figure] | None = None) -> None:
        if check in self.problem.checks and check not in self.failures:
            self.failures[check] = (message, details, figures or [])

    def fail_all(self, message: str, details: str = "", checks: list[str] | None = None) -> None:
        """The same cause for several checks: the details (a traceback) go with the first one only."""
        for check in checks or self.problem.checks:
            self.fail(check, message, details)
            details = ""

    def results(self, passed_details: dict[str, str] | None = None) -> list[CheckResult]:
        out = []
        hints = getattr(self.problem, "hints", None) or {}
        for check in self.problem.checks:
            message, details, figures = self.failures.get(
                check, (self.notes.get(check, ""), (passed_details or {}).get(check, ""), []))
            if check in self.failures and hints.get(check):
                message = f"{message} {hints[check]}".strip()  # the instructor's own sentence
            out.append(CheckResult(self.problem.name, check, check not in self.failures,
                                   self.problem.points_of(check), message, details, figures,
                                   self.problem.hidden or check in self.problem.hidden_checks))
        return out


def input_names(problem: Problem) -> list[str]:
    try:
        return list(inspect.signature(problem.reference).parameters)
    except (TypeError, ValueError):
        count = max(len(c.args) for c in problem.cases)
        return ["x"] if count == 1 else [f"input{i + 1}" for i in range(count)]


def encoded_cases(problem: Problem, seed: int = 0) -> list[list[Any]]:
    return [probing.encode_args(problem.inputs(i, seed), problem.kwargs(i)) for i in range(len(problem.cases))]


@cache
def _encoded(problem: Problem, seed: int) -> list[list[Any]]:
    """encoded_cases, once: the judge only reads them."""
    return encoded_cases(problem, seed)


@cache
def reference_data(problem: Problem, seed: int = 0) -> dict:
    """The reference's outputs and whole Jacobians, with PyTorch's own autograd, and its graph: the graph
    of the problem's `solution` (a Function written as the exercise asks) where there is one."""
    obj = SimpleNamespace(apply=problem.reference) if problem.kind == "function" else problem.reference
    cases = _encoded(problem, seed)
    graph, names = None, input_names(problem)
    if problem.solution is not None:
        names = probing.learner_names(problem, problem.solution, {}).get("forward") or names
        graph = probing.backward_graph(problem, problem.solution, cases[0], names)
    if graph is None:
        names = input_names(problem)
        graph = probing.backward_graph(problem, obj, cases[0], names)
    return {"cases": [probing.reference_case(problem, obj, c) for c in cases], "graph": graph, "names": names}


def _sizes(encoded: list[Any]) -> list[int]:
    return [len(a["values"]) for a in encoded if probing.differentiable(a)]


@cache
def _reference_vjps(problem: Problem, seed: int, index: int) -> list[list[list[float]]]:
    """vᵀJ and v2ᵀJ of the reference, along the vectors a student's case of the same output size is
    projected on (shared: not to be changed)."""
    ref, sizes = reference_data(problem, seed)["cases"][index], _sizes(_encoded(problem, seed)[index])
    rows = len(ref["output"]["values"])
    d = projections.directions(seed, index, rows, tuple(sizes))
    jacobian = _matrices(ref["jacobian"], sizes, rows)
    return [[(_t(v) @ jac).tolist() for jac in jacobian] for v in (d.v, d.v2)]


@cache
def expectations(problem: Problem, seed: int = 0) -> list[dict]:
    """Per case, the reference's vector-Jacobian products, which the probe compares a student's with to
    decide what to measure in full (probe.probe's `expected`)."""
    return [{"vjps": _reference_vjps(problem, seed, i)} for i in range(len(problem.cases))]


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _matrices(jac: list, sizes: list[int], rows: int) -> list[torch.Tensor]:
    """Validated (rows x size) float64 matrices from untrusted nested lists."""
    out = []
    for block, size in zip(jac, sizes):
        m = _t(block) if rows and size else torch.zeros(rows, size, dtype=torch.float64)
        if m.shape != (rows, size):
            raise ValueError("malformed Jacobian")
        out.append(m)
    if len(out) != len(sizes):
        raise ValueError("malformed Jacobian")
    return out


def _lists(values: Any, sizes: list[int]) -> list[list[float]]:
    """Untrusted lists of numbers, one per tensor input, checked against the inputs' sizes."""
    if not isinstance(values, list) or len(values) != len(sizes) \
            or any(not isinstance(v, list) or len(v) != n for v, n in zip(values, sizes)):
        raise ValueError("malformed vector-Jacobian product")
    return [[float(x) for x in v] for v in values]


# -- pictures ------------------------------------------------------------------------------------------

def as_grid(values: Any, shape: tuple[int, ...]) -> list[list[float]]:
    """A tensor's values laid out as it prints: a number as one square, a vector as one row, a matrix as
    itself, more dimensions as rows of the last one."""
    flat = _t(values).reshape(-1)
    if len(shape) <= 1:
        return [flat.tolist()]
    return flat.reshape(-1, shape[-1]).tolist()


def shaped_panels(title: str, shape: tuple[int, ...], name: str, panels: list[tuple[str, Any]],
                  what: str) -> Figure:
    """Side-by-side panels shaped like one tensor (the last one the difference of the first two), on one
    colour scale."""
    mine, right = _t(panels[0][1]).reshape(-1), _t(panels[1][1]).reshape(-1)
    grids = [(caption, as_grid(v, shape)) for caption, v in panels]
    grids.append(("difference (first − second)", as_grid((mine - right).tolist(), shape)))
    size = int(torch.tensor(shape).prod()) if shape else 1
    layout = f"shaped like {name} {tuple(shape)}" if len(shape) > 1 else \
        f"one square per entry of {name}" if shape else f"{name} is a single number"
    return Figure("heatmaps", title, grids, legend=f"Each square is one entry of {what}, {layout}.",
                  values=size <= 24)


def jacobian_panels(title: str, name: str, out_name: str, mine: torch.Tensor, right: torch.Tensor,
                    captions: tuple[str, str]) -> Figure:
    return Figure("heatmaps", title, [(captions[0], mine.tolist()), (captions[1], right.tolist()),
                                      ("difference (first − second)", (mine - right).tolist())],
                  legend=f"Rows: entries of {out_name}; columns: entries of {name} (both flattened).")


# -- what the checks judge from -------------------------------------------------------------------------

def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name) and len(name) <= 40


@dataclass
class CaseView:
    """One case: the inputs, what was measured, the reference's answers, and whether it can be judged."""

    index: int
    where: str
    encoded: list[Any]
    measured: dict
    ref: dict
    names: list[str]  # of every argument, in the learner's words
    tensor_names: list[str]
    seed: int
    kwargs: dict = field(default_factory=dict)  # the case's keyword arguments

    @property
    def sizes(self) -> list[int]:
        return _sizes(self.encoded)

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        return [tuple(a["shape"]) for a in self.encoded if probing.differentiable(a)]

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
        return [_t(a["values"]).reshape(a["shape"]) for a in self.encoded if probing.differentiable(a)]

    def vjps(self) -> list[list[list[float]]]:
        return [_lists(self.measured[key], self.sizes) for key in ("vjp", "vjp2")]


@dataclass
class Blocked:
    """A case a check cannot judge: the cause, told in full under the check it belongs to."""

    owner: str
    message: str
    details: str = ""
    short: str = ""  # for the other checks: "backward raises TypeError"


class Judging:
    """Everything a check's judgement reads, for one problem of one submission."""

    def __init__(self, problem: Problem, data: dict, reference: dict, seed: int):
        self.problem, self.data, self.reference, self.seed = problem, data, reference, seed
        self.names = self._learner_names()
        self.says = data.get("torch_says", {}) if isinstance(data.get("torch_says"), dict) else {}
        self.cases = [self._case(i, c, r) for i, (c, r) in enumerate(zip(data.get("cases", []), reference["cases"]))]
        self.failed: dict[str, Any] = {}  # the checks that failed so far, in report order

    @property
    def lookup(self) -> str:
        return self.problem.lookup

    def _learner_names(self) -> list[str]:
        """The names of forward's parameters as the learner wrote them (ctx left out), where they fit the
        arguments; otherwise the reference's."""
        fallback = input_names(self.problem)
        names = (self.data.get("names") or {}).get("forward") if isinstance(self.data.get("names"), dict) else None
        count = max(len(c.args) for c in self.problem.cases)
        if isinstance(names, list) and len(names) >= count and all(_identifier(n) for n in names[:count]):
            return list(names[:count])
        return fallback

    def learner(self, key: str, default: list[str]) -> list[str]:
        """Other names the learner chose: "backward" (backward's gradient parameters), "outputs_backward"
        (those of the Function whose every output is graded)."""
        names = (self.data.get("names") or {}).get(key) if isinstance(self.data.get("names"), dict) else None
        if isinstance(names, list) and names and all(_identifier(n) for n in names):
            return list(names)
        return default

    @property
    def grad_output(self) -> str:
        return self.learner("backward", ["grad_output"])[0]

    def _case(self, i: int, measured: Any, ref: dict) -> CaseView:
        if not isinstance(measured, dict):
            raise TypeError("malformed case")
        encoded = probing.positional(_encoded(self.problem, self.seed)[i])  # keyword arguments: self.problem.kwargs
        names = list(self.names) + [f"argument {k + 1}" for k in range(len(self.names), len(encoded))]
        tensor_names = [n for n, a in zip(names, encoded) if probing.differentiable(a)]
        return CaseView(i, self.describe(i, names) + ": ", encoded, measured, ref, names, tensor_names, self.seed,
                        self.problem.kwargs(i))

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
        defaults = (self.data.get("names") or {}).get("optional") if isinstance(self.data.get("names"), dict) else None
        names = self.names
        if isinstance(defaults, list):
            return [n for n in names[given:] if n in defaults]
        return []

    # -- what stops a case from being judged -------------------------------------------------------------

    def blocked(self, case: CaseView, part: str) -> Blocked | None:
        """Why this case cannot be judged by a check of `part` ("forward", "backward", "second"), or None."""
        from autograder.judge.causes import error_cause

        m, name = case.measured, self.lookup
        if "error" in m:
            said, details = error_cause(m["error"], self, case)
            return Blocked("forward", case.where + said, details, f"forward raises {m['error'].get('type')}")
        out = m.get("output", {})
        if out.get("type") != "Tensor":
            hint = ""
            if self.problem.kind == "callable" and self.problem.all_outputs:
                hint = f" (call {self.problem.all_outputs}.apply(x)[0]: the wrapper returns only the first output)"
            return Blocked("forward", case.where + f"{name} returned a {out.get('type')}, not a Tensor{hint}.",
                           short=f"{name} returns a {out.get('type')}, not a Tensor")
        if part == "forward":
            return None
        if "backward_error" in m:
            said, details = error_cause(m["backward_error"], self, case)
            owner = "backward returns" if _validation_error(m["backward_error"]) else "gradient"
            where = m["backward_error"].get("where", "backward")
            return Blocked(owner, case.where + said, details, f"{where} raises {m['backward_error'].get('type')}")
        if not out.get("has_grad_fn"):
            return Blocked("gradient", case.where + f"{name}'s output has no grad_fn, so no gradient can flow "
                                                    f"back through it (forward computed it outside autograd's "
                                                    f"view, or returned a tensor made with .detach() or "
                                                    f"torch.no_grad()).", short="the output has no grad_fn")
        return None


def _validation_error(error: dict) -> bool:
    """Autograd refused what backward returned (a count, a gradient for a non-tensor, a shape)."""
    message = str(error.get("message", ""))
    return any(p in message for p in ("incorrect number of gradients", "different than None at position",
                                      "invalid gradient at index"))


# -- running the checks --------------------------------------------------------------------------------

PARTS = ("forward", "backward", "second", "torch", "extra")  # the order a problem is measured in


def judge(problem: Problem, data: dict, seed: int = 0) -> list[CheckResult]:
    """Every check of the problem, from the probe's data of one submission."""
    verdicts = Verdicts(problem)
    passed_details: dict[str, str] = {}
    try:
        with projections.tolerances(problem.rtol_atol, problem.gradcheck_rtol_atol):
            _judge(problem, data, reference_data(problem, seed), seed, verdicts, passed_details)
    except (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError) as error:
        verdicts.fail_all(f"The grader could not read what {problem.lookup} produced ({error}); it is "
                          f"treated as wrong. Make sure it returns plain float64 tensors.", traceback.format_exc())
    return verdicts.results(passed_details)


def _gate(problem: Problem, data: dict) -> str | None:
    """Why nothing of the problem can be judged: not defined, or not what the problem asks for."""
    name = problem.lookup
    if not data.get("defined"):
        return f"{name} is not defined in the submission: define it with exactly this name (names are case-sensitive)."
    want = "Function" if problem.kind == "function" else "callable"
    kind = data.get("kind")
    if (want == "Function" and kind != "Function") or (want == "callable" and kind not in ("callable", "Function")):
        return (f"{name} is a {kind}, but the problem asks for "
                f"{'a subclass of torch.autograd.Function' if want == 'Function' else 'a function'}.")
    return None


def _judge(problem: Problem, data: dict, reference: dict, seed: int, verdicts: Verdicts,
           passed: dict[str, str]) -> None:
    from autograder.course import checks

    gate = _gate(problem, data)
    if gate:
        verdicts.fail_all(gate)
        return
    if "cases" not in data:
        verdicts.fail_all(f"No measurement of {problem.lookup} came back.")
        return
    view = Judging(problem, data, reference, seed)
    view.failed = verdicts.failures
    for check in ("gradcheck", "gradgradcheck"):
        if view.says.get(check):
            passed[check] = torch_words(check, view.says[check])
    finished = data.get("parts", PARTS)
    shown: set[str] = set()  # tracebacks already shown: one per failure
    told: dict[str, str] = {}
    for name in problem.checks:
        check = checks.BY_NAME[name]
        unmet = [r for r in check.requires if r in verdicts.failures]
        if unmet:
            verdicts.fail(name, check.unmet(unmet))
            continue
        if check.part in PARTS and check.part not in finished:
            verdicts.fail(name, _unfinished(problem, data, check.part))
            continue
        found = _blocked_finding(view, check, shown) if check.part in ("forward", "backward", "second") else None
        if found is None:
            found = check.judge(view)
        if found is None:
            continue
        if found.passed:
            verdicts.notes[name] = found.message
            continue
        details = found.details
        if details and details in told and "Traceback" in details:
            details = f"(The traceback is shown under {told[details]}.)"
        elif details:
            told.setdefault(details, name)
        verdicts.fail(name, found.message, details, found.figures)


def _blocked_finding(view: Judging, check, shown: set[str]) -> Finding | None:
    part = "backward" if check.part == "second" else check.part
    for case in view.cases:
        blocked = view.blocked(case, part)
        if blocked is None:
            continue
        if blocked.owner == check.name or (blocked.owner not in view.problem.checks and check.name == "forward"):
            details = blocked.details if blocked.details not in shown else ""
            shown.add(blocked.details)
            return fail(blocked.message, details)
        return fail(f"Not graded: {case.where[0].lower() + case.where[1:-2]}, {blocked.short} (see {blocked.owner}).")
    return None


def torch_words(check: str, said: Any) -> str:
    """What torch.autograd.gradcheck (or gradgradcheck) said, whole lines only: its first lines, without
    the matrices it prints after them (the pictures show those)."""
    lines = str(said).splitlines()
    kept = []
    for line in lines:
        if line.startswith(("numerical:", "analytical:")) or len(kept) >= 6:
            break
        kept.append(line)
    left = len(lines) - len(kept)
    more = f" ({left} more lines of PyTorch's message, the numerical and analytical Jacobians, are left out)" \
        if left else ""
    return f"torch.autograd.{check} says: " + "\n".join(kept) + more


def _unfinished(problem: Problem, data: dict, part: str) -> str:
    said = {"forward": f"calling {problem.lookup}", "backward": "its backward",
            "second": "differentiating its backward (second derivatives)", "torch": "gradcheck",
            "extra": "the checks of this lesson's APIs"}[part]
    how = str(data.get("stopped") or "in time")[:300]
    if how.startswith("within"):
        how = f"it did not finish {how} (an endless loop, or a wait that never ends)"
    return f"Grading stopped while measuring {said}: {how}. The checks measured before it are graded as usual."
