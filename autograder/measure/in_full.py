"""A failure measured in full, when the grader asks: whole Jacobians (from backward and by finite
differences), whole second-derivative matrices, and the graph of the learner's backward."""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from autograder.measure.calls import call, grad
from autograder.measure.captured import T
from autograder.measure.differences import numerical_jacobian
from autograder.measure.encoding import as_plain, decode_args, flat, inputs_of, make, unit
from autograder.measure.graphs import graph_of
from autograder.measure.projections import directions_of
from autograder.measure.second import second_order
from autograder.measure.snapshot import guard


def case_in_full(problem, obj, encoded: list[Any], seed: int, index: int, first: bool, second: bool,
                 case: dict) -> dict:
    """The whole Jacobians (from backward and by finite differences) and, for second derivatives, the
    whole matrices, to show where a projection went wrong."""
    found: dict[str, Any] = {}
    if first:
        args = decode_args(encoded)
        with contextlib.suppress(BaseException):  # the projections already hold the failure
            found["jacobian"] = analytical_jacobian(as_plain(call(problem, obj, args)),
                                                    inputs_of(args))
        with contextlib.suppress(BaseException):
            found["numerical"] = numerical_jacobian(problem, obj, encoded)
    if second:
        d = directions_of(case, seed, index)
        found["second"] = {**case["second"], **second_order(problem, obj, encoded, d.v)}
    return found


def analytical_jacobian(out: torch.Tensor, tensors: list[torch.Tensor]) -> list[list[list[float]]]:
    """J[k][i][j] = d out_i / d input_k[j], one vector-Jacobian product per output element."""
    out = as_plain(out)
    size = out.numel()
    rows: list[list[list[float]]] = [[] for _ in tensors]
    if size == 0 or out.grad_fn is None:
        return [[[0.0] * t.numel() for _ in range(size)] for t in tensors]
    for i in range(size):
        grads = grad(out, tensors, unit(list(out.shape), size, i), retain_graph=True, allow_unused=True)
        for k, (g, t) in enumerate(zip(grads, tensors)):
            rows[k].append(flat(g, t.numel()))
    return rows


def backward_graph(problem, obj, encoded: list[Any], names: list[str] | None = None) -> dict | None:
    """The graph of backward, built with create_graph=True and read by torchviz, as plain data: the
    gradients named grad_<input>, the inputs by their names in forward (`names`), and the output `out`."""
    try:
        args = decode_args(encoded)
        labels = list(names or [])
        labels += [f"input{k + 1}" for k in range(len(labels), len(args))]
        inputs = inputs_of(args)
        tensors = [(label, a) for label, a in zip(labels, args) if any(a is t for t in inputs)]
        if len(tensors) == 1 and not names:
            tensors = [("x", tensors[0][1])]
        raw = call(problem, obj, args)
        out = raw if T.type(raw) is T.Tensor else as_plain(raw)  # a plain tensor is drawn as it is: no alias
        grads = grad(out, [t for _, t in tensors], make(list(out.shape), [1.0] * out.numel(), False),
                     create_graph=True, allow_unused=True)
        named = {f"grad_{label}": g if T.type(g) is T.Tensor else as_plain(g)
                 for (label, _), g in zip(tensors, grads) if g is not None}
        named.update({label: t for label, t in tensors})
        named["out"] = out
        return graph_of(**named).to_dict()
    except BaseException:  # noqa: BLE001 - no picture is better than a crash
        return None
    finally:
        guard()
