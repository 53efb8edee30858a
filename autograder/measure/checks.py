"""The graded checks that need calls of their own (beyond the measurements every problem gets), run in
the worker beside the student's code, after the part of the measurement they follow.

What each check asks and how it is judged is its `Check` in autograder/course/checks.py, of the same name
and part. The measuring half lives here because a worker never loads the judging code, and is fixed at
import: workers start before any private file is read, so an instructor's check cannot add one.
"""

from __future__ import annotations

from collections.abc import Callable

from autograder.measure.calls import call, error_data, grad
from autograder.measure.captured import T
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
            cls = getattr(fn, "_forward_cls", None)
            if T.isinstance(cls, type):
                uses = uses or cls is companion
                found.append(str(getattr(cls, "__name__", "?"))[:40])
            todo.extend(parent for parent, _ in getattr(fn, "next_functions", ()))
        return {"uses": uses, "functions": sorted(set(found))[:10], "calls": calls[:4]}
    except BaseException as error:  # noqa: BLE001 - student code failing is data
        return {"error": error_data(error, "backward")}


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


# check name -> (the part it follows, its measurement):
# measurement(problem, obj, namespace, encoded_cases, seed) -> plain data
OWN: dict[str, tuple[str, Callable]] = {"companion used": ("second", measure_companion)}


def measurements(problem) -> dict[str, list[tuple[str, Callable]]]:
    """The checks of a problem that measure something of their own, by the part they follow."""
    found: dict[str, list[tuple[str, Callable]]] = {}
    for name, (part, measure) in OWN.items():
        if name in problem.checks:
            found.setdefault(part, []).append((name, measure))
    return found
