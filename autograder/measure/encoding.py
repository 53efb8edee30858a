"""Plain data <-> tensors: what crosses between the grader and a worker.

Inputs travel as {"shape", "values"} (with "dtype" when not float64), outputs and gradients as plain
float64 lists read past any subclass or __torch_function__ (the captured entry points of captured.py),
so that nothing a submission returns can answer for itself.
"""

from __future__ import annotations

from typing import Any

import torch

from autograder.measure.captured import T

# Tensors of another dtype than float64 are passed as they are, constants: no gradient is asked for them.
_DTYPES = {name: getattr(torch, name) for name in ("float64", "float32", "float16", "bfloat16", "int64",
                                                     "int32", "int16", "int8", "uint8", "bool", "complex128")}


def encode_args(args: list[Any], kwargs: dict | None = None) -> list[Any]:
    """Inputs as plain data: tensors become {"shape", "values"} (with "dtype" when it is not float64, the
    differentiable inputs' dtype); other arguments stay as they are; keyword arguments, if any, are a
    last {"kwargs": {...}}."""
    out: list[Any] = []
    for a in args:
        if T.isinstance(a, T.Tensor):
            encoded = {"shape": list(a.shape), "values": T.tolist(T.reshape(a, (-1,)))}
            if a.dtype != T.float64:
                encoded["dtype"] = str(a.dtype).removeprefix("torch.")
            out.append(encoded)
        else:
            out.append(a)
    if kwargs:
        out.append({"kwargs": dict(kwargs)})
    return out


def make(shape: list[int], values: list[float], requires_grad: bool = True) -> torch.Tensor:
    """A float64 tensor from plain values (an input, a grad_output)."""
    t = T.reshape(T.tensor(values, dtype=T.float64), tuple(shape))
    return T.requires_grad_(t, requires_grad)


def _is_kwargs(a: Any) -> bool:
    return T.isinstance(a, dict) and "kwargs" in a and "values" not in a


def differentiable(a: Any) -> bool:
    """An encoded float64 tensor: an input gradients are asked for."""
    return T.isinstance(a, dict) and "values" in a and a.get("dtype", "float64") == "float64"


def positional(encoded: list[Any]) -> list[Any]:
    """The encoded positional arguments (without the keyword arguments)."""
    return [a for a in encoded if not _is_kwargs(a)]


class Args(list):
    """Decoded positional arguments, with the call's keyword arguments and which are differentiable."""

    kwargs: dict
    inputs: list


def decode_args(encoded: list[Any]) -> Args:
    """Fresh tensors for every call, so that a Function changing its input cannot spoil the next."""
    args, inputs, kwargs = Args(), [], {}
    for a in encoded:
        if _is_kwargs(a):
            kwargs = dict(a["kwargs"])
        elif differentiable(a):
            t = make(a["shape"], a["values"])
            args.append(t)
            inputs.append(t)
        elif T.isinstance(a, dict) and "values" in a:
            t = T.reshape(T.tensor(a["values"], dtype=_DTYPES[a["dtype"]]), tuple(a["shape"]))
            args.append(t)
        else:
            args.append(a)
    args.kwargs, args.inputs = kwargs, inputs
    return args


def with_kwargs(args: list[Any], like: Any) -> Args:
    """args (e.g. gradcheck's tuple) with the keyword arguments of `like`."""
    out = Args(args)
    out.kwargs, out.inputs = dict(getattr(like, "kwargs", {}) or {}), [a for a in args if is_tensor(a)]
    return out


def inputs_of(args: list[Any]) -> list[Any]:
    """The differentiable inputs among decoded arguments (every tensor, for arguments made elsewhere)."""
    inputs = getattr(args, "inputs", None)
    return list(inputs) if inputs is not None else [a for a in args if is_tensor(a)]


def plain(t: torch.Tensor) -> dict:
    """A tensor's dtype, shape and float64 values, read past any subclass or __torch_function__."""
    with T.no_torch_function():
        base = T.as_subclass(t, T.Tensor)
        values = T.tolist(T.reshape(T.to(T.detach(base), T.float64), (-1,)))
        return {"dtype": str(base.dtype), "shape": list(base.shape), "values": values}


def is_tensor(x: Any) -> bool:
    return T.issubclass(T.type(x), T.Tensor)  # not isinstance: an object can fake its __class__


def as_plain(t: torch.Tensor) -> torch.Tensor:
    """A plain torch.Tensor alias of t (same values, same autograd history), so that no subclass or
    __torch_function__ answers for it when its shape, grad_fn or gradient is asked for."""
    with T.no_torch_function():
        return T.as_subclass(t, T.Tensor)


def tensor_sizes(encoded: list[Any]) -> list[int]:
    """How many entries each differentiable input has."""
    return [len(a["values"]) for a in encoded if differentiable(a)]


def one_entry_each(encoded: list[Any]) -> bool:
    """Whether every tensor of a case holds at most one entry. One number differs from another by any
    factor and shows no pattern: such a case's failures are told last, and its graph is not the one drawn."""
    return max(tensor_sizes(encoded), default=0) <= 1


def graph_case(encoded_cases: list[list[Any]]) -> int:
    """The case whose graph of backward is drawn, for the learner's Function and the reference alike: the
    first whose failures are told first (not one_entry_each), else the first."""
    return next((i for i, case in enumerate(encoded_cases) if not one_entry_each(case)), 0)


def flat(t: torch.Tensor | None, size: int) -> list[float]:
    """A gradient's values; zeros where autograd gave None (an input the output does not depend on)."""
    return [0.0] * size if t is None else plain(t)["values"]


def unit(shape: list[int], size: int, index: int) -> torch.Tensor:
    """The tensor of this shape whose entry `index` (flattened) is one, every other zero."""
    values = [0.0] * size
    values[index] = 1.0
    return make(shape, values, requires_grad=False)
