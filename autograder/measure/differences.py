"""Finite differences of the learner's forward: moved inputs, central differences along a direction or
entry by entry, as gradcheck computes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.measure.calls import call
from autograder.measure.captured import T
from autograder.measure.encoding import decode_args, differentiable, plain
from autograder.measure.projections import EPS


def forward_values(problem, obj, encoded: list[Any]) -> list[float]:
    """The learner's forward at these inputs, without autograd."""
    with T.no_grad():
        out = call(problem, obj, decode_args(encoded))
    return plain(out)["values"]


def perturbed(encoded: list[Any], k: int, j: int, step: float) -> list[Any]:
    """The inputs with entry j of tensor argument k moved by step."""
    copy = [dict(a, values=list(a["values"])) if differentiable(a) else a for a in encoded]
    copy[k]["values"][j] += step
    return copy


def moved(encoded: list[Any], direction: list[list[float]], step: float) -> list[Any]:
    """The inputs moved by step along a direction (one list per tensor input)."""
    out, tensors = [], iter(direction)
    for a in encoded:
        if differentiable(a):
            a = dict(a, values=[x + step * u for x, u in zip(a["values"], next(tensors))])
        out.append(a)
    return out


def difference(plus: list[float], minus: list[float]) -> list[float]:
    """The central difference of two evaluations EPS either side."""
    return [(p - m) / (2 * EPS) for p, m in zip(plus, minus)]


def directional(problem, obj, encoded: list[Any], direction: list[list[float]]) -> list[float]:
    """Ju by central differences of the student's own forward: two calls."""
    return difference(forward_values(problem, obj, moved(encoded, direction, EPS)),
                      forward_values(problem, obj, moved(encoded, direction, -EPS)))


def by_columns(encoded: list[Any],
               column: Callable[[int, int, dict], list[float]]) -> list[list[list[float]]]:
    """A Jacobian, one matrix per tensor input, from its columns: column(k, j, arg) is the derivative of
    the output with respect to entry j of argument k."""
    jac = []
    for k, arg in enumerate(encoded):
        if not differentiable(arg):
            continue
        columns = [column(k, j, arg) for j in range(len(arg["values"]))]
        jac.append([list(row) for row in zip(*columns)] if columns else [])
    return jac


def numerical_jacobian(problem, obj, encoded: list[Any]) -> list[list[list[float]]]:
    """Central differences of the student's own forward, entry by entry, as gradcheck computes them."""
    def column(k: int, j: int, arg: dict) -> list[float]:
        return difference(forward_values(problem, obj, perturbed(encoded, k, j, EPS)),
                          forward_values(problem, obj, perturbed(encoded, k, j, -EPS)))

    return by_columns(encoded, column)
