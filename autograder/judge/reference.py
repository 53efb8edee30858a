"""The reference's side of every comparison, measured here in the trusted process and never sent to a
worker: each case's inputs (seeded), the reference's outputs, whole Jacobians and graph, and its
vector-Jacobian products along the directions a student's case is projected on."""

from __future__ import annotations

import inspect
import time
from functools import cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from autograder.judge.untrusted import float64, matrices
from autograder.measure import projections
from autograder.measure.calls import call
from autograder.measure.encoding import (
    as_plain,
    decode_args,
    encode_args,
    graph_case,
    inputs_of,
    plain,
    tensor_sizes,
)
from autograder.measure.in_full import analytical_jacobian, backward_graph
from autograder.measure.probe import learner_names

if TYPE_CHECKING:
    from autograder.course.problems import Problem


def input_names(problem: Problem) -> list[str]:
    try:
        return list(inspect.signature(problem.reference).parameters)
    except (TypeError, ValueError):
        count = max(len(c.args) for c in problem.cases)
        return ["x"] if count == 1 else [f"input{i + 1}" for i in range(count)]


def encoded_cases(problem: Problem, seed: int = 0) -> list[list[Any]]:
    return [encode_args(problem.inputs(i, seed), problem.kwargs(i)) for i in range(len(problem.cases))]


@cache
def encoded_once(problem: Problem, seed: int) -> list[list[Any]]:
    """encoded_cases, once: the judge only reads them."""
    return encoded_cases(problem, seed)


def reference_case(problem, obj, encoded: list[Any]) -> dict:
    """What the judge needs of the reference: its output and its whole Jacobian."""
    args = decode_args(encoded)
    out = as_plain(call(problem, obj, args))
    return {"output": {"type": "Tensor", **plain(out), "has_grad_fn": out.grad_fn is not None},
            "jacobian": analytical_jacobian(out, inputs_of(args))}


@cache
def reference_data(problem: Problem, seed: int = 0) -> dict:
    """The reference's outputs and whole Jacobians, with PyTorch's own autograd; the CPU time it took is
    kept (reference_seconds)."""
    obj = SimpleNamespace(apply=problem.reference) if problem.kind == "function" else problem.reference
    began = time.thread_time()
    data = {"cases": [reference_case(problem, obj, c) for c in encoded_once(problem, seed)]}
    _SECONDS[problem, seed] = time.thread_time() - began
    return data


def reference_seconds(problem: Problem, seed: int = 0) -> float:
    """The CPU time the reference's outputs and Jacobians took to compute, the first time: what a problem's
    default time budget is scaled to (sandbox/budget.scaled)."""
    reference_data(problem, seed)
    return _SECONDS[problem, seed]


_SECONDS: dict[tuple[Problem, int], float] = {}


@cache
def reference_graph(problem: Problem, seed: int = 0) -> tuple[dict | None, list[str]]:
    """The graph of the reference's backward, as plain data, on the case the learner's is drawn on
    (measure/encoding.graph_case), and its inputs' names: the graph of the problem's `solution` (a Function
    written as the exercise asks) where there is one. Drawn only when a failure shows it (loading torchviz
    and building the graph cost more than the judging)."""
    obj = SimpleNamespace(apply=problem.reference) if problem.kind == "function" else problem.reference
    cases = encoded_once(problem, seed)
    drawn, graph, names = cases[graph_case(cases)], None, input_names(problem)
    if problem.solution is not None:
        names = learner_names(problem, problem.solution, {}).get("forward") or names
        graph = backward_graph(problem, problem.solution, drawn, names)
    if graph is None:
        names = input_names(problem)
        graph = backward_graph(problem, obj, drawn, names)
    return graph, names


@cache
def reference_vjps(problem: Problem, seed: int, index: int) -> list[list[list[float]]]:
    """vᵀJ and v2ᵀJ of the reference, along the vectors a student's case of the same output size is
    projected on (shared: not to be changed)."""
    ref, sizes = (reference_data(problem, seed)["cases"][index],
                  tensor_sizes(encoded_once(problem, seed)[index]))
    rows = len(ref["output"]["values"])
    d = projections.directions(seed, index, rows, tuple(sizes))
    jacobian = matrices(ref["jacobian"], sizes, rows)
    return [[(float64(v) @ jac).tolist() for jac in jacobian] for v in (d.v, d.v2)]


@cache
def expectations(problem: Problem, seed: int = 0) -> list[dict]:
    """Per case, the reference's vector-Jacobian products, which plan.plan_in_full compares a student's
    with to decide what to measure in full."""
    return [{"vjps": reference_vjps(problem, seed, i)} for i in range(len(problem.cases))]

