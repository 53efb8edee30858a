"""One call of forward, measured: its output, whether it changed its inputs, what it kept for backward
(through save_for_backward or as attributes of ctx); and what backward returned, noted as it returns."""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from autograder.measure.calls import apply, call, error_data
from autograder.measure.captured import UNKNOWN, T
from autograder.measure.encoding import as_plain, decode_args, differentiable, is_tensor, plain, positional


class _Counting(TorchFunctionMode):
    """Counts the torch operations a call makes: with an input that needs no gradient, a backward that
    skips its gradient (ctx.needs_input_grad) makes fewer than with every input needing one."""

    def __init__(self):
        super().__init__()
        self.calls, self.results = 0, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        result = func(*args, **(kwargs or {}))
        if len(self.results) < 10_000:
            self.results.append(result)
        return result

    def made(self, value: Any, grads: tuple) -> bool:
        """Whether a value backward returned is the result of one of its operations (not grad_output
        itself, passed on): a gradient that costs work."""
        return (is_tensor(value) and not any(value is g for g in grads)
                and any(value is r for r in self.results))


class RecordingBackward:
    """Wraps the class's backward to note what it returned, before autograd validates it, what
    ctx.needs_input_grad said and how many torch operations it made."""

    def __init__(self, cls, recorded: list):
        self.cls, self.recorded = cls, recorded
        self.original = cls.__dict__.get("backward") if T.isinstance(cls, type) else None

    def __enter__(self):
        if self.original is None:
            return self
        backward = self.cls.backward
        recorded = self.recorded

        def recording_backward(ctx, *grads):
            needs = getattr(ctx, "needs_input_grad", None)
            with _Counting() as counted:
                result = backward(ctx, *grads)
            values = result if T.isinstance(result, tuple) else (result,)
            recorded.append({"returns": describe_returns(result), "ops": counted.calls,
                             "made": [counted.made(v, grads) for v in values[:64]],
                             "needs": [bool(n) for n in needs] if T.isinstance(needs, tuple) else None})
            return result

        self.cls.backward = staticmethod(recording_backward)
        return self

    def __exit__(self, *exc):
        if self.original is not None:
            self.cls.backward = self.original


def describe_returns(result: Any) -> list[dict]:
    values = result if T.isinstance(result, tuple) else (result,)
    out = []
    for v in values:
        if v is None:
            out.append({"kind": "None"})
        elif is_tensor(v):
            out.append({"kind": "Tensor", "shape": list(as_plain(v).shape)})
        else:
            out.append({"kind": T.type(v).__name__})
    return out


class _SavedLog:
    """Saved-tensor hooks around one call of forward: every tensor that goes through save_for_backward
    (the hooks see nothing else). Pushed by hand, and popped whether or not guard() already cleared it."""

    def __init__(self):
        self.tensors: list[torch.Tensor] = []
        self.unpacked = 0
        log = self

        def pack(t):
            log.tensors.append(t)
            return t

        def unpack(t):
            log.unpacked += 1
            return t

        self.hooks = (pack, unpack)

    def __enter__(self):
        T.push_saved_hooks(*self.hooks)
        return self

    def __exit__(self, *exc):
        top = T.saved_hooks(False)
        if top is UNKNOWN:  # ours, unless guard() already removed every hook (torch checks before it pops)
            with contextlib.suppress(T.RuntimeError):
                T.pop_saved_hooks()
        elif top is not None and top[0] is self.hooks[0]:
            T.pop_saved_hooks()


def _node_of(t: torch.Tensor) -> Any:
    """The node that made a tensor, past the alias a plain view of it (`as_plain`) adds."""
    node = as_plain(t).grad_fn
    for _ in range(4):
        if node is None or T.type(node).__name__ != "AliasBackward0":
            break
        node = node.next_functions[0][0]
    return node


def _kind_of(t: Any, args: list[Any], node: Any, out: Any = None, others: tuple = ()) -> dict:
    """What a tensor kept by forward is: one of its inputs, one of its outputs, or computed inside forward
    (an intermediate, or a detached copy of an input or of an output: `others` are the outputs after the
    first of a Function with several)."""
    for k, a in enumerate(args):
        if t is a:
            return {"kind": "input", "index": k}
    with T.no_torch_function():
        v = T.as_subclass(t, T.Tensor)
        if node is not None and _node_of(v) is node:
            return {"kind": "output"}
        for k, a in enumerate(args):
            if is_tensor(a) and v.data_ptr() == as_plain(a).data_ptr() and v.data_ptr() != 0:
                return {"kind": "detached", "index": k}
        if out is not None and v.data_ptr() == as_plain(out).data_ptr() and v.data_ptr() != 0:
            return {"kind": "detached", "of": "output"}
        for j, o in enumerate(others, 1):
            if is_tensor(o) and v.data_ptr() == as_plain(o).data_ptr() and v.data_ptr() != 0:
                return {"kind": "detached", "of": "output", "output": j}
        if v.grad_fn is not None or v.requires_grad:
            return {"kind": "other"}
    return {"kind": "intermediate"}


def _ctx_tensors(node: Any, args: list[Any], out: Any = None) -> list[dict]:
    """The tensors forward kept as plain attributes of ctx (`ctx.x = x`), directly or in a tuple or list."""
    found = []
    try:
        attributes = dict(vars(node))
    except TypeError:
        return found
    for attr, value in list(attributes.items())[:50]:
        values = value if T.isinstance(value, (tuple, list)) else (value,)
        for item in list(values)[:10]:
            if is_tensor(item):
                found.append({"attr": str(attr)[:40], **_kind_of(item, args, node, out)})
    return found


def forward_case(problem, obj, encoded: list[Any]) -> dict:
    """One call of forward: its output, whether it changed its inputs (and said so with ctx.mark_dirty),
    which tensors it passed to save_for_backward and which it kept as attributes of ctx."""
    case: dict[str, Any] = {"arg_kinds": ["Tensor" if differentiable(a) else f"Tensor({a.get('dtype')})"
                                          if T.isinstance(a, dict) else T.type(a).__name__
                                          for a in positional(encoded)]}
    args = decode_args(encoded)
    try:
        with _SavedLog() as log:
            out = call(problem, obj, args)
    except BaseException as error:  # noqa: BLE001 - any failure of student code is data
        case["error"] = error_data(error, "forward")
        return case
    changed, dirty = [], []
    for k, (a, e) in enumerate(zip(args, encoded)):
        if T.isinstance(e, dict) and is_tensor(a):
            if plain(a)["values"] != e["values"]:
                changed.append(k)
            if out is a:
                dirty.append(k)
    case["inputs_changed"], case["dirty"] = changed, dirty
    if not is_tensor(out):
        case["output"] = {"type": T.type(out).__name__}
        return case
    out = as_plain(out)
    case["output"] = {"type": "Tensor", **plain(out), "has_grad_fn": out.grad_fn is not None}
    node = _node_of(out)
    case["saved"] = [_kind_of(t, args, node, out) for t in log.tensors[:20]]
    if problem.all_outputs and any(s["kind"] == "intermediate" for s in case["saved"]):
        case["saved"] = _against_every_output(node, encoded) or case["saved"]
    case["ctx_tensors"] = (_ctx_tensors(node, args, out) if node is not None and _is_function_node(node)
                           else [])
    return case


def _against_every_output(node: Any, encoded: list[Any]) -> list[dict] | None:
    """What each saved tensor is, for a Function with several outputs of which the graded callable returns
    the first (sinh: Sinh.apply(x)[0]): the Function applied again, so that a detached copy of a later
    output (Sinh saving expx.detach(), expx its output 1) is told as one, not as an intermediate."""
    cls = getattr(T.type(node), "_forward_cls", None)
    if not (T.isinstance(cls, type) and T.issubclass(cls, T.Function)):
        return None
    args = decode_args(encoded)
    try:
        with _SavedLog() as log:
            outputs = apply(cls, list(args))
    except BaseException:  # noqa: BLE001 - the first call's measurements hold any failure
        return None
    if not T.isinstance(outputs, tuple) or not outputs or not is_tensor(outputs[0]):
        return None
    first = as_plain(outputs[0])
    return [_kind_of(t, args, _node_of(first), first, outputs[1:]) for t in log.tensors[:20]]


def _is_function_node(node: Any) -> bool:
    """A custom Function's node (its ctx), as opposed to one of PyTorch's own."""
    return T.isinstance(node, T.BackwardCFunction)
