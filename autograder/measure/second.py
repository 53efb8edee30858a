"""Second derivatives: autograd through the learner's backward against finite differences of it, along
one direction (the projections every case gets) or in full (to explain a failure)."""

from __future__ import annotations

from typing import Any

from autograder.measure import projections
from autograder.measure.calls import call, error_data, grad
from autograder.measure.differences import difference, moved, perturbed
from autograder.measure.encoding import (
    as_plain,
    decode_args,
    differentiable,
    flat,
    inputs_of,
    make,
    tensor_sizes,
    unit,
)
from autograder.measure.projections import EPS


def _vjp(problem, obj, encoded: list[Any], v_values: list[float], create_graph: bool):
    args = decode_args(encoded)
    tensors = inputs_of(args)
    out = as_plain(call(problem, obj, args))
    v = make(list(out.shape), v_values, requires_grad=create_graph)
    grads = grad(out, tensors, v, create_graph=create_graph, allow_unused=True)
    grads = [None if g is None else as_plain(g) for g in grads]
    return tensors, v, out, grads


def _first_order(problem, obj, encoded: list[Any], v: list[float]) -> list[list[float]]:
    """vᵀJ at these inputs, through the student's backward, one list per tensor input."""
    _, _, _, grads = _vjp(problem, obj, encoded, v, create_graph=False)
    return [flat(g, n) for g, n in zip(grads, tensor_sizes(encoded))]


def second_projections(problem, obj, encoded: list[Any], d: projections.Directions) -> dict:
    """Second derivatives along one direction: hvp, the gradient of w·(vᵀJ) with respect to the inputs
    and v through autograd of the student's backward; fd_x and fd_v, how vᵀJ moves along ux and uv by
    central differences of the student's first-order backward."""
    result: dict[str, Any] = {}
    try:
        tensors, v, _, grads = _vjp(problem, obj, encoded, d.v, create_graph=True)
        result["has_history"] = any(g.grad_fn is not None for g in grads if g is not None)
        sizes = [t.numel() for t in tensors] + [v.numel()]
        live = [(g, w) for g, w in zip(grads, d.w) if g is not None and g.grad_fn is not None]
        if live:
            found = grad([g for g, _ in live], tensors + [v],
                         [make(list(g.shape), w, False) for g, w in live], allow_unused=True)
            result["hvp"] = [flat(h, n) for h, n in zip(found, sizes)]
        else:
            result["hvp"] = [[0.0] * n for n in sizes]
    except BaseException as error:  # noqa: BLE001
        result["error"] = error_data(error, "double backward")
        return result
    try:
        def along_inputs(step: float) -> list[list[float]]:
            return _first_order(problem, obj, moved(encoded, d.ux, step), d.v)

        def along_v(step: float) -> list[list[float]]:
            return _first_order(problem, obj, encoded, [x + step * u for x, u in zip(d.v, d.uv)])

        result["fd_x"] = [difference(p, m) for p, m in zip(along_inputs(EPS), along_inputs(-EPS))]
        result["fd_v"] = [difference(p, m) for p, m in zip(along_v(EPS), along_v(-EPS))]
    except BaseException as error:  # noqa: BLE001
        result["error"] = error_data(error, "backward")
    return result


def second_order(problem, obj, encoded: list[Any], v_values: list[float]) -> dict:
    """The whole Jacobian of the map (inputs, v) -> vᵀJ(inputs), analytically (autograd through the
    student's backward) and by central differences of the student's first-order backward."""
    result: dict[str, Any] = {}
    try:
        tensors, v, _, grads = _vjp(problem, obj, encoded, v_values, create_graph=True)
        sizes = [t.numel() for t in tensors] + [v.numel()]
        rows = []
        for g, t in zip(grads, tensors):
            for i in range(t.numel()):
                if g is None or g.grad_fn is None:
                    rows.append([0.0] * sum(sizes))
                    continue
                seconds = grad(g, tensors + [v], unit(list(g.shape), g.numel(), i),
                               retain_graph=True, allow_unused=True)
                rows.append([x for s, n in zip(seconds, sizes) for x in flat(s, n)])
        result["analytical"] = rows
    except BaseException:  # noqa: BLE001 - the projection already holds the failure
        return result
    try:
        result["numerical"] = _numerical_second(problem, obj, encoded, v_values)
    except BaseException:  # noqa: BLE001
        result.pop("analytical")
    return result


def _numerical_second(problem, obj, encoded: list[Any], v_values: list[float]) -> list[list[float]]:
    def first_order(enc, v):
        return [x for g in _first_order(problem, obj, enc, v) for x in g]

    columns = []
    for k, arg in enumerate(encoded):
        if differentiable(arg):
            for j in range(len(arg["values"])):
                columns.append(difference(first_order(perturbed(encoded, k, j, EPS), v_values),
                                          first_order(perturbed(encoded, k, j, -EPS), v_values)))
    for j in range(len(v_values)):
        vp, vm = list(v_values), list(v_values)
        vp[j] += EPS
        vm[j] -= EPS
        columns.append(difference(first_order(encoded, vp), first_order(encoded, vm)))
    return [list(row) for row in zip(*columns)]
