"""What a worker sends the grader about one problem, typed: the contract between measuring (here, beside
the student's code) and judging (autograder/judge/, in the grader).

It crosses the trust boundary as JSON, so the grader reads it as untrusted: the TypedDicts say what each
key holds when the measuring code wrote it; a submission that forged the numbers gains nothing from
them (every verdict is computed in the grader, judge/untrusted.py rebuilds tensors with checks). A
check's own measurement is a dataclass with `to_plain` (worker) and `from_plain` (grader, validating).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict


class ErrorData(TypedDict, total=False):
    """An exception of student code (calls.error_data): its type, message, where it was raised
    ("forward", "backward", ...), a traceback of the learner's frames only, and those frames."""

    type: str
    message: str
    where: str
    traceback: str
    frames: list[dict[str, Any]]


class OutputData(TypedDict, total=False):
    """What forward returned: its type and, for a tensor, its dtype, shape, values (flat) and whether it
    has a grad_fn."""

    type: str
    dtype: str
    shape: list[int]
    values: list[float]
    has_grad_fn: bool


class CaseData(TypedDict, total=False):
    """One case (one call of the Function) measured through random projections (projections.py)."""

    arg_kinds: list[str]
    error: ErrorData  # forward raised
    output: OutputData
    inputs_changed: list[bool]
    dirty: list[bool]
    saved: list[str]
    ctx_tensors: list[str]
    vjp: list[list[float]]  # vᵀJ per tensor input
    vjp2: list[list[float]]  # v2ᵀJ
    grad_output_changed: bool
    backward_error: ErrorData
    backward_returns: Any
    fd: list[float]  # Ju by finite differences of forward
    numerical_error: ErrorData
    subsets: list[Any]  # with some inputs needing no gradient
    extra_outputs: Any
    second: dict[str, Any]  # second derivatives (second.py)
    jacobian: list[Any]  # whole Jacobians, where the grader asked for them (in_full.py)
    numerical: list[Any]


class ProblemData(TypedDict, total=False):
    """Everything measured about one problem of one submission (probe.measure), in parts."""

    defined: bool
    kind: str  # "Function", "class", "callable", "missing" or a type's name
    also: dict[str, str]  # the other names the problem needs, and what each is
    names: dict[str, list[str]]  # the learner's parameter names (probe.learner_names)
    parts: list[str]  # the parts that finished (judge/verdicts.PARTS)
    stopped: str
    cases: list[CaseData]
    checks: dict[str, dict[str, Any]]  # each check's own measurement, by check name (to_plain of one below)
    torch_says: dict[str, str]  # what gradcheck and gradgradcheck said
    extra: dict[str, list[Any]]  # the checks of a lesson's APIs (modern.py)
    graph: Any


def _strings(value: Any, limit: int) -> tuple[str, ...]:
    return tuple(str(v)[:40] for v in value[:limit]) if isinstance(value, list) else ()


@dataclass(frozen=True)
class CompanionUse:
    """"companion used": which custom Functions the graph of the gradient (create_graph=True) goes
    through, whether the companion is one, and, per call of the companion's forward, what each argument
    was ("history": it requires grad; "detached": an input's data without its history; "plain"; "other":
    not a tensor). `error`: building that gradient raised."""

    uses: bool = False
    functions: tuple[str, ...] = ()
    calls: tuple[tuple[str, ...], ...] = ()
    error: ErrorData | None = None

    def to_plain(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        return {"uses": self.uses, "functions": list(self.functions), "calls": [list(c) for c in self.calls]}

    @classmethod
    def from_plain(cls, data: Any) -> CompanionUse | None:
        """None when nothing usable came back."""
        if not isinstance(data, dict):
            return None
        if isinstance(data.get("error"), dict):
            return cls(error=data["error"])
        calls = data.get("calls")
        return cls(uses=data.get("uses") is True, functions=_strings(data.get("functions"), 10),
                   calls=tuple(_strings(c, 8) for c in calls[:4] if isinstance(c, list))
                   if isinstance(calls, list) else ())
