"""What a worker sends the grader about one problem, typed: the contract between measuring (here, beside
the student's code) and judging (autograder/judge/, in the grader).

It crosses the trust boundary as JSON, so the grader reads it as untrusted: the worker builds plain
dicts (probe.measure), and the grader parses them once, with `ProblemMeasurement.from_plain`, into the
frozen dataclasses below, which the checks read by attribute. Parsing never raises: a field of the wrong
type, or a list with one malformed entry, reads as absent (None), as if it had not been measured, and the
check that needs it fails with a sentence. A submission that forged the numbers gains nothing from them
either way: every verdict is computed in the grader, judge/untrusted.py rebuilds tensors with checks.

The field names are the JSON keys; `to_plain` writes the same JSON back (a key holding null reads as
absent, so it is left out).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from autograder.measure.wire import Plain, each, flag, index, integer, numbers, strings, text, texts

# characters of a frame's line of code, as calls.student_frames sends them: the judge reads that line with
# regular expressions, and one that backtracks took 35 s over a forged line of 20,000
CODE = 200


@dataclass(frozen=True)
class Frame(Plain):
    """One frame of the learner's code in a traceback (calls.student_frames)."""

    file: str = ""
    line: int = 0
    name: str = ""
    code: str = ""

    @classmethod
    def from_plain(cls, data: Any) -> Frame | None:
        if not isinstance(data, dict):
            return None
        return cls(text(data.get("file")) or "", integer(data.get("line")) or 0, text(data.get("name")) or "",
                   (text(data.get("code")) or "")[:CODE])


@dataclass(frozen=True)
class StudentError(Plain):
    """An exception of student code (calls.error_data): its type, message, where it was raised
    ("forward", "backward", ...; empty when not known), a traceback of the learner's frames only, and
    those frames."""

    type: str = ""
    message: str = ""
    raised_in: str = ""
    traceback: str = ""
    frames: tuple[Frame, ...] = ()

    @classmethod
    def from_plain(cls, data: Any) -> StudentError | None:
        if not isinstance(data, dict):
            return None
        frames = data.get("frames")
        return cls(text(data.get("type")) or "", text(data.get("message")) or "",
                   text(data.get("raised_in")) or "", text(data.get("traceback")) or "",
                   tuple(f for f in map(Frame.from_plain, frames[:50]) if f is not None)
                   if isinstance(frames, list) else ())


@dataclass(frozen=True)
class Output(Plain):
    """A tensor as plain data (encoding.plain): what forward returned (its type, and for a tensor its
    dtype, shape, values flattened and whether it has a grad_fn), or a result under torch.func."""

    type: str | None = None
    dtype: str | None = None
    shape: list[int] | None = None
    values: list[float] | None = None
    has_grad_fn: bool | None = None

    @classmethod
    def from_plain(cls, data: Any) -> Output | None:
        if not isinstance(data, dict):
            return None
        return cls(text(data.get("type")), text(data.get("dtype")), each(data.get("shape"), integer),
                   numbers(data.get("values")), flag(data.get("has_grad_fn")))


@dataclass(frozen=True)
class Kept(Plain):
    """A tensor forward kept for backward (forward._kind_of): its kind ("input", "output", "detached",
    "intermediate", "other"), the input it is (`index`), the attribute of ctx it was kept as (`attr`, for
    ctx.x = x) and, for a detached copy of an output, `of` and which output it is (`output`, after the first
    of a Function with several)."""

    kind: str = ""
    index: int | None = None
    attr: str | None = None
    of: str | None = None
    output: int | None = None

    @classmethod
    def from_plain(cls, data: Any) -> Kept | None:
        if not isinstance(data, dict):
            return None
        return cls(text(data.get("kind")) or "", index(data.get("index")), text(data.get("attr")),
                   text(data.get("of")), index(data.get("output")))


@dataclass(frozen=True)
class Returned(Plain):
    """One value backward returned (forward.describe_returns): "None", "Tensor" (with its shape), or
    another type's name."""

    kind: str = ""
    shape: list[int] | None = None

    @classmethod
    def from_plain(cls, data: Any) -> Returned | None:
        if not isinstance(data, dict):
            return None
        return cls(text(data.get("kind")) or "", each(data.get("shape"), integer))


def _returns(value: Any) -> list[Returned] | None:
    return each(value[:64] if isinstance(value, list) else value, Returned.from_plain)


@dataclass(frozen=True)
class Subset(Plain):
    """The Function called with only some tensor inputs requiring a gradient (backward._subsets)."""

    requires: list[bool] | None = None
    no_grad_fn: bool | None = None
    vjp: list[list[float]] | None = None
    error: StudentError | None = None
    returns: list[Returned] | None = None
    needs: list[bool] | None = None  # ctx.needs_input_grad
    ops: int | None = None  # torch operations backward made

    @classmethod
    def from_plain(cls, data: Any) -> Subset | None:
        if not isinstance(data, dict):
            return None
        return cls(each(data.get("requires"), flag), flag(data.get("no_grad_fn")),
                   numbers(data.get("vjp"), 2), StudentError.from_plain(data.get("error")),
                   _returns(data.get("returns")),
                   each(data.get("needs"), flag), index(data.get("ops")))


@dataclass(frozen=True)
class ExtraOutput(Plain):
    """An output after the first of a Function with several (backward._extra_outputs): vᵀJ with a
    gradient on it only, and finite differences of it."""

    output: int | None = None
    has_grad_fn: bool | None = None
    vjp: list[list[float]] | None = None
    fd: list[float] | None = None
    error: StudentError | None = None

    @classmethod
    def from_plain(cls, data: Any) -> ExtraOutput | None:
        if not isinstance(data, dict):
            return None
        return cls(index(data.get("output")), flag(data.get("has_grad_fn")), numbers(data.get("vjp"), 2),
                   numbers(data.get("fd")), StudentError.from_plain(data.get("error")))


@dataclass(frozen=True)
class Second(Plain):
    """Second derivatives (measure/second.py): along one direction (hvp, fd_x, fd_v) and, measured in
    full, the whole matrices (analytical, numerical)."""

    has_history: bool | None = None
    hvp: list[list[float]] | None = None
    fd_x: list[list[float]] | None = None
    fd_v: list[list[float]] | None = None
    analytical: list[list[float]] | None = None
    numerical: list[list[float]] | None = None
    error: StudentError | None = None

    @classmethod
    def from_plain(cls, data: Any) -> Second | None:
        if not isinstance(data, dict):
            return None
        return cls(flag(data.get("has_history")), *(numbers(data.get(k), 2) for k in
                                                      ("hvp", "fd_x", "fd_v", "analytical", "numerical")),
                   StudentError.from_plain(data.get("error")))

    def along(self) -> dict[str, list[list[float]]] | None:
        """hvp, fd_x and fd_v as projections.py reads them (sizes unchecked), when all three came back."""
        if self.hvp is None or self.fd_x is None or self.fd_v is None:
            return None
        return {"hvp": self.hvp, "fd_x": self.fd_x, "fd_v": self.fd_v}


@dataclass(frozen=True)
class CaseMeasurement(Plain):
    """One case (one call of the Function) measured through random projections (projections.py):
    forward.forward_case, backward.backward_case, second.second_projections and, where the grader asked,
    in_full.case_in_full (jacobian, numerical: J[k][i][j] per tensor input k)."""

    arg_kinds: list[str] | None = None
    error: StudentError | None = None  # forward raised
    output: Output | None = None
    inputs_changed: list[int] | None = None
    dirty: list[int] | None = None
    saved: list[Kept] | None = None  # what went through ctx.save_for_backward
    ctx_tensors: list[Kept] | None = None  # kept as attributes of ctx
    vjp: list[list[float]] | None = None  # vᵀJ per tensor input
    vjp2: list[list[float]] | None = None  # v2ᵀJ
    grad_output_changed: bool | None = None
    backward_error: StudentError | None = None
    backward_returns: list[Returned] | None = None
    backward_ops: int | None = None  # torch operations backward made, every input needing a gradient
    backward_made: list[bool] | None = None  # per value returned: made by one of those operations
    fd: list[float] | None = None  # Ju by finite differences of forward
    numerical_error: StudentError | None = None
    subsets: list[Subset] | None = None
    extra_outputs: list[ExtraOutput] | None = None
    second: Second | None = None
    jacobian: list[list[list[float]]] | None = None
    numerical: list[list[list[float]]] | None = None

    @classmethod
    def from_plain(cls, data: Any) -> CaseMeasurement | None:
        if not isinstance(data, dict):
            return None
        get = data.get
        return cls(
            arg_kinds=strings(get("arg_kinds")), error=StudentError.from_plain(get("error")),
            output=Output.from_plain(get("output")), inputs_changed=each(get("inputs_changed"), index),
            dirty=each(get("dirty"), index), saved=each(get("saved"), Kept.from_plain),
            ctx_tensors=each(get("ctx_tensors"), Kept.from_plain), vjp=numbers(get("vjp"), 2),
            vjp2=numbers(get("vjp2"), 2), grad_output_changed=flag(get("grad_output_changed")),
            backward_error=StudentError.from_plain(get("backward_error")),
            backward_returns=_returns(get("backward_returns")), backward_ops=index(get("backward_ops")),
            backward_made=each(get("backward_made"), flag),
            fd=numbers(get("fd")),
            numerical_error=StudentError.from_plain(get("numerical_error")),
            subsets=each(get("subsets"), Subset.from_plain),
            extra_outputs=each(get("extra_outputs"), ExtraOutput.from_plain),
            second=Second.from_plain(get("second")), jacobian=numbers(get("jacobian"), 3),
            numerical=numbers(get("numerical"), 3))


@dataclass(frozen=True)
class ApiResult(Plain):
    """One case of a check of lesson 7's APIs (modern.py): a forward-mode Jacobian, a result under
    torch.func.vmap and torch.func.grad, torch.library.opcheck's report, or the error raised."""

    jacobian: list[list[list[float]]] | None = None
    batched: Output | None = None
    grad: Output | None = None
    report: dict[str, str] | None = None
    error: StudentError | None = None
    tangent_changed: bool = False  # forward mode: a call changed the tangent it was given
    inputs_changed: tuple[int, ...] = ()  # forward mode, vmap: the tensor inputs a call changed
    primal: Output | None = None  # forward mode: the output's primal, as the caller of make_dual gets it

    @classmethod
    def from_plain(cls, data: Any) -> ApiResult | None:
        if not isinstance(data, dict):
            return None
        changed = data.get("inputs_changed")
        return cls(numbers(data.get("jacobian"), 3), Output.from_plain(data.get("batched")),
                   Output.from_plain(data.get("grad")), texts(data.get("report")),
                   StudentError.from_plain(data.get("error")), data.get("tangent_changed") is True,
                   tuple(k for k in changed[:20] if type(k) is int and k >= 0)
                   if isinstance(changed, list) else (), Output.from_plain(data.get("primal")))


@dataclass(frozen=True)
class LearnerNames(Plain):
    """The names the learner gave (probe.learner_names): forward's parameters, those with a default,
    setup_context's (present only when the class defines it), backward's gradient parameters, those of the
    Function whose every output is graded, the companion's, and the saved tensors' (saved_names.py)."""

    forward: list[str] | None = None
    optional: list[str] | None = None
    setup_context: list[str] | None = None
    backward: list[str] | None = None
    outputs_backward: list[str] | None = None
    companion: list[str] | None = None
    saved: list[str] | None = None  # what forward passes to save_for_backward ("" for an expression)
    unpacked: list[str] | None = None  # what backward unpacks ctx.saved_tensors into
    companion_saved: list[str] | None = None
    companion_unpacked: list[str] | None = None
    guarded: list[str] | None = None  # "i:name": backward assigns name under if ctx.needs_input_grad[i]
    jvp: list[str] | None = None  # jvp's tangent parameters, when the class defines jvp

    @classmethod
    def from_plain(cls, data: Any) -> LearnerNames:
        if not isinstance(data, dict):
            return cls()
        return cls(*(strings(data.get(f.name)) for f in fields(cls)))


@dataclass(frozen=True)
class TorchSays(Plain):
    """What torch.autograd.gradcheck and gradgradcheck said ("passed", or their error), where they ran."""

    gradcheck: str | None = None
    gradgradcheck: str | None = None

    @classmethod
    def from_plain(cls, data: Any) -> TorchSays:
        if not isinstance(data, dict):
            return cls()
        return cls(text(data.get("gradcheck")), text(data.get("gradgradcheck")))


@dataclass(frozen=True)
class ProblemMeasurement(Plain):
    """Everything measured about one problem of one submission (probe.measure), in parts, with what was
    measured in full merged in (judge/plan.with_measured_in_full). `checks` holds each check's own
    measurement, read through its own type (CompanionUse below); `graph` the graph of backward, validated
    where it is drawn (report/graph_svg.py)."""

    defined: bool | None = None
    kind: str | None = None  # "Function", "class", "callable", "missing" or a type's name
    also: dict[str, str] | None = None  # the other names the problem needs, and what each is
    names: LearnerNames = field(default_factory=LearnerNames)
    parts: list[str] | None = None  # the parts that finished (judge/verdicts.PARTS); None: all
    stopped: str | None = None
    cases: list[CaseMeasurement | None] | None = None  # None in the list: a case that is not a dict
    checks: dict[str, Any] | None = None
    torch_says: TorchSays = field(default_factory=TorchSays)
    extra: dict[str, list[ApiResult | None]] | None = None  # by check of a lesson's APIs, per case
    graph: dict[str, Any] | None = None

    @classmethod
    def from_plain(cls, data: Any) -> ProblemMeasurement | None:
        """None for anything but a dict."""
        if not isinstance(data, dict):
            return None
        get = data.get
        cases, checks, extra = get("cases"), get("checks"), get("extra")
        return cls(
            defined=flag(get("defined")), kind=text(get("kind")), also=texts(get("also")),
            names=LearnerNames.from_plain(get("names")), parts=strings(get("parts")),
            stopped=text(get("stopped")),
            cases=[CaseMeasurement.from_plain(c) for c in cases] if isinstance(cases, list) else None,
            checks={k: v for k, v in checks.items() if isinstance(k, str)} if isinstance(checks, dict)
            else None,
            torch_says=TorchSays.from_plain(get("torch_says")),
            extra={k: [ApiResult.from_plain(r) for r in v] for k, v in extra.items()
                   if isinstance(k, str) and isinstance(v, list)} if isinstance(extra, dict) else None,
            graph=get("graph") if isinstance(get("graph"), dict) else None)

    def to_plain(self) -> dict[str, Any]:
        plain = super().to_plain()
        for key, empty in (("names", LearnerNames()), ("torch_says", TorchSays())):
            if getattr(self, key) == empty:
                plain.pop(key)  # nothing said reads as nothing sent
        return plain

    def own(self, check: str) -> Any:
        """What a check that measures something of its own measured (untrusted: parsed by its type)."""
        return self.checks.get(check) if self.checks else None

    def api_results(self, check: str) -> list[ApiResult | None]:
        return (self.extra or {}).get(check) or []


@dataclass(frozen=True)
class InFull(Plain):
    """What the worker measured in full where the grader asked (probe.measure_in_full): per case index,
    the keys to merge into that case (whole Jacobians, second derivatives; parsed with the case), and
    the graph of backward."""

    cases: dict[int, dict[str, Any]] = field(default_factory=dict)
    graph: dict[str, Any] | None = None

    MERGED = ("jacobian", "numerical", "second")

    @classmethod
    def from_plain(cls, data: Any) -> InFull:
        if not isinstance(data, dict):
            return cls()
        cases, graph = data.get("cases"), data.get("graph")
        found = {int(k): {key: v for key, v in extra.items() if key in cls.MERGED}
                 for k, extra in (cases.items() if isinstance(cases, dict) else ())
                 if isinstance(k, str) and k.isdigit() and len(k) < 6 and isinstance(extra, dict)}
        return cls(found, graph if isinstance(graph, dict) else None)

    def to_plain(self) -> dict[str, Any]:
        return {"cases": {str(k): v for k, v in self.cases.items()}, "graph": self.graph}
