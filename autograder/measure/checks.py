"""Measurements of the checks that need calls of their own (beyond the measurements every problem gets),
run in the worker beside the student's code, after the part of the measurement they follow.

Each is named by its check's declaration (`Check.measure`, autograder/judge/checks.py), which the worker
never loads: it is told which to run by its Spec. What one returns crosses the trust boundary as plain
data, typed here beside it: a frozen dataclass whose `to_plain` the worker writes and whose `from_plain`
the judgement reads (validating: the worker ran student code).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autograder.measure.calls import call, error_data, grad
from autograder.measure.captured import T, forward_class_of
from autograder.measure.contract import StudentError
from autograder.measure.encoding import as_plain, decode_args, is_tensor, make


def measure_companion(problem, obj, namespace: dict, encoded_cases: list, seed: int) -> dict:
    """Which custom Functions the graph of the gradient (create_graph=True) goes through: Cube's gradient
    must be the output of CubeBackward.apply."""
    companion = namespace.get(problem.companion)
    calls: list[list[str]] = []
    try:
        args = decode_args(encoded_cases[-1])
        tensors = [a for a in args if is_tensor(a)]
        out = as_plain(call(problem, obj, args))
        with _CompanionCalls(companion, tensors, calls):
            grads = grad(out, tensors, make(list(out.shape), [1.0] * out.numel(), False), create_graph=True,
                         allow_unused=True)
        seen, todo, found, uses = set(), [as_plain(g).grad_fn for g in grads if g is not None], [], False
        while todo and len(seen) < 500:
            fn = todo.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            cls = forward_class_of(fn)
            if cls is not None:
                uses = uses or cls is companion
                found.append(str(getattr(cls, "__name__", "?"))[:40])
            elif T.isinstance(fn, T.BackwardCFunction):  # a torch without _forward_cls: by the node's name
                name = T.type(fn).__name__.removesuffix("Backward")
                uses = uses or (T.isinstance(companion, type) and name == companion.__name__)
                found.append(name[:40])
            todo.extend(parent for parent, _ in getattr(fn, "next_functions", ()))
        return CompanionUse(uses, tuple(sorted(set(found))[:10]),
                            tuple(tuple(c) for c in calls[:4])).to_plain()
    except BaseException as error:  # noqa: BLE001 - student code failing is data
        return CompanionUse(error=StudentError.from_plain(error_data(error, "backward"))).to_plain()


class _CompanionCalls:
    """Wraps the companion's forward to note, per call, what each tensor argument was: "history" (it
    requires grad), "detached" (an input's data without its history, as x.detach()) or "plain"; the
    companion's node is recorded only when some argument requires grad."""

    def __init__(self, companion, inputs: list, calls: list):
        self.companion, self.inputs, self.calls = companion, inputs, calls
        self.original = companion.__dict__.get("forward") if T.isinstance(companion, type) else None

    def __enter__(self):
        if self.original is None:
            return self
        forward, inputs, calls = self.companion.forward, self.inputs, self.calls
        pointers = {as_plain(t).data_ptr() for t in inputs}

        def kind(a) -> str:
            if a.requires_grad:
                return "history"
            return "detached" if as_plain(a).data_ptr() in pointers else "plain"

        def recording_forward(ctx, *args, **kwargs):
            if len(calls) < 8:
                calls.append([kind(a) if is_tensor(a) else "other" for a in args][:8])
            return forward(ctx, *args, **kwargs)

        self.companion.forward = staticmethod(recording_forward)
        return self

    def __exit__(self, *exc):
        if self.original is not None:
            self.companion.forward = self.original


def _names(value: Any, limit: int) -> tuple[str, ...]:
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
    error: StudentError | None = None

    def to_plain(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error.to_plain()}
        return {"uses": self.uses, "functions": list(self.functions), "calls": [list(c) for c in self.calls]}

    @classmethod
    def from_plain(cls, data: Any) -> CompanionUse | None:
        """None when nothing usable came back."""
        if not isinstance(data, dict):
            return None
        error = StudentError.from_plain(data.get("error"))
        if error is not None:
            return cls(error=error)
        calls = data.get("calls")
        return cls(uses=data.get("uses") is True, functions=_names(data.get("functions"), 10),
                   calls=tuple(_names(c, 8) for c in calls[:4] if isinstance(c, list))
                   if isinstance(calls, list) else ())
