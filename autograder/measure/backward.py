"""Backward, measured through random projections: vector-Jacobian products, finite differences along
one direction, the gradients when only some inputs need one, every output of a Function with several;
and PyTorch's own words (gradcheck, gradgradcheck) where the projections already disagree."""

from __future__ import annotations

from typing import Any

import torch

from autograder.measure import projections
from autograder.measure.calls import MAX_TEXT, apply, call, error_data, grad, torch_grad
from autograder.measure.captured import T
from autograder.measure.differences import difference, directional, moved
from autograder.measure.encoding import (
    as_plain,
    decode_args,
    differentiable,
    flat,
    inputs_of,
    is_tensor,
    make,
    plain,
    positional,
    tensor_sizes,
    with_kwargs,
)
from autograder.measure.projections import EPS, directions_of
from autograder.measure.snapshot import allowing, guard

AUTOGRAD = torch.autograd  # bound at import, before any submission ran


def backward_case(problem, obj, namespace: dict, encoded: list[Any], seed: int, index: int, recorded: list,
                  case: dict) -> None:
    """Backward on a fresh call: one vector-Jacobian product twice on the same graph (saved tensors still
    intact?), whether backward changed grad_output, what it returned, finite differences of forward along
    one direction and, for a Function with several outputs, each output's gradient."""
    args = decode_args(encoded)
    try:
        out = as_plain(call(problem, obj, args))
    except BaseException as error:  # noqa: BLE001 - forward failed this time only
        case["backward_error"] = error_data(error, "forward")
        return
    tensors = inputs_of(args)
    d = projections.directions(seed, index, out.numel(), tuple(tensor_sizes(encoded)))
    recorded.clear()
    try:
        first, changed = vector_jacobian(out, tensors, d.v, watch=True)
        case["grad_output_changed"] = changed
        case["vjp2"], _ = vector_jacobian(out, tensors, d.v2)
        case["vjp"] = first
    except BaseException as error:  # noqa: BLE001
        case["backward_error"] = error_data(error, "backward")
    case["backward_returns"] = recorded[0]["returns"] if recorded else None
    case["backward_ops"] = recorded[0]["ops"] if recorded else None
    case["backward_made"] = recorded[0]["made"] if recorded else None
    try:
        case["fd"] = directional(problem, obj, encoded, d.u)
    except BaseException as error:  # noqa: BLE001
        case["numerical_error"] = error_data(error, "forward")
    if "vjp" in case and sum(1 for a in encoded if differentiable(a)) > 1:
        case["subsets"] = _subsets(problem, obj, encoded, d.v, recorded)
    if problem.all_outputs and "vjp" in case:
        case["extra_outputs"] = _extra_outputs(problem, namespace.get(problem.all_outputs), encoded, seed,
                                               index)


def _subsets(problem, obj, encoded: list[Any], v: list[float], recorded: list) -> list[dict]:
    """The Function called with only some tensor inputs requiring a gradient (every such subset but all
    and none): what ctx.needs_input_grad said, what backward returned, and the gradients of the inputs
    that need one."""
    positions = [k for k, a in enumerate(positional(encoded)) if differentiable(a)]
    found = []
    for mask in range(1, (1 << len(positions)) - 1):
        wanted = [bool(mask >> j & 1) for j in range(len(positions))]
        args = decode_args(encoded)
        for k, want in zip(positions, wanted):
            T.requires_grad_(args[k], want)
        result: dict[str, Any] = {"requires": wanted}
        recorded.clear()
        try:
            out = as_plain(call(problem, obj, args))
            if out.grad_fn is None:
                result["no_grad_fn"] = True
            else:
                needing = [args[k] for k, want in zip(positions, wanted) if want]
                grads = grad(out, needing, make(list(out.shape), v, requires_grad=False), allow_unused=True)
                result["vjp"] = [flat(g, t.numel()) for g, t in zip(grads, needing)]
        except BaseException as error:  # noqa: BLE001
            result["error"] = error_data(error, "backward")
        if recorded:
            result["returns"], result["needs"] = recorded[0]["returns"], recorded[0]["needs"]
            result["ops"] = recorded[0]["ops"]
        found.append(result)
    return found


def _extra_outputs(problem, function, encoded: list[Any], seed: int, index: int) -> list[dict]:
    """For each output after the first of the Function that the graded callable wraps (Sinh's exp(x) and
    exp(-x)): the vector-Jacobian product through backward with a gradient on that output only, and
    finite differences of that output along a direction, as gradcheck asks of every output."""
    if not (T.isinstance(function, type) and T.issubclass(function, T.Function)):
        return []
    found = []
    try:
        args = decode_args(encoded)
        tensors = inputs_of(args)
        outputs = [as_plain(o) for o in _outputs_of_args(function, decode_args(encoded)) if is_tensor(o)]
    except BaseException:  # noqa: BLE001 - the first output's measurements hold the failure
        return []
    del args, tensors
    for j in range(1, min(len(outputs), 6)):
        d = projections.directions(seed, 1000 * (index + 1) + j, outputs[j].numel(),
                                   tuple(tensor_sizes(encoded)))
        entry: dict[str, Any] = {"output": j}
        try:
            args = decode_args(encoded)
            tensors = inputs_of(args)
            out = as_plain(_outputs_of_args(function, args)[j])
            entry["has_grad_fn"] = out.grad_fn is not None  # False: marked non-differentiable
            entry["vjp"], _ = vector_jacobian(out, tensors, d.v)

            def values(enc: list[Any], j: int = j) -> list[float]:
                with T.no_grad():
                    return plain(_outputs_of_args(function, decode_args(enc))[j])["values"]

            entry["fd"] = difference(values(moved(encoded, d.u, EPS)), values(moved(encoded, d.u, -EPS)))
        except BaseException as error:  # noqa: BLE001
            entry["error"] = error_data(error, "backward")
        found.append(entry)
    return found


def _outputs_of_args(function, args: list[Any]) -> list[Any]:
    result = apply(function, args)
    return list(result) if T.isinstance(result, tuple) else [result]


def vector_jacobian(out: torch.Tensor, tensors: list[torch.Tensor], v: list[float],
                    watch: bool = False) -> tuple[list[list[float]], bool]:
    """vᵀJ, one list per tensor input: a single backward call; and whether backward changed the
    grad_output it was given (`watch`)."""
    if out.numel() == 0 or out.grad_fn is None:
        return [[0.0] * t.numel() for t in tensors], False
    grad_output = make(list(out.shape), v, requires_grad=False)
    grads = grad(out, tensors, grad_output, retain_graph=True, allow_unused=True)
    changed = watch and plain(grad_output)["values"] != list(v)
    return [flat(g, t.numel()) for g, t in zip(grads, tensors)], changed


def _plain_result(result: Any) -> Any:
    """What gradcheck sees of a call: plain tensors, so that a subclass cannot answer its questions."""
    if is_tensor(result):
        return as_plain(result)
    if T.isinstance(result, tuple):
        return tuple(as_plain(r) if is_tensor(r) else r for r in result)
    return result


def worth_quoting(problem, cases: list[dict], seed: int) -> set[str]:
    """The checks whose PyTorch message would help a student: those where the projections already
    disagree with finite differences (gradgradcheck only where second derivatives are graded). It only
    saves running gradcheck on right answers; the verdicts are still the judge's."""
    worth = set()
    for index, case in enumerate(cases):
        if "vjp" not in case or "fd" not in case:
            worth.add("gradcheck")
            continue
        d = directions_of(case, seed, index)
        if not projections.gradcheck_agrees([case["vjp"], case["vjp2"]], case["fd"], d):
            worth.add("gradcheck")
        second = case.get("second", {})
        if problem.double_backward and ("hvp" not in second or "fd_v" not in second
                                        or not projections.gradgradcheck_agrees(second, d)):
            worth.add("gradgradcheck")
    return worth


def torch_checks(problem, obj, encoded: list[Any], seed: int = 0, worth: set[str] | None = None) -> dict:
    """What torch.autograd.gradcheck (and gradgradcheck) print for the first case, where the numbers
    disagree (`worth`): shown to the student as PyTorch's own words; the verdicts are computed by the
    judge, not taken from here."""
    with allowing(AUTOGRAD, "grad", torch_grad):  # the engine path for gradcheck's own calls
        return _torch_checks(problem, obj, encoded, seed, worth)


def _torch_checks(problem, obj, encoded: list[Any], seed: int, worth: set[str] | None) -> dict:
    says = {}
    checks = [("gradcheck", T.gradcheck)] + ([("gradgradcheck", T.gradgradcheck)] if problem.double_backward
                                             else [])
    for name, run in checks:
        if worth is not None and name not in worth:
            continue
        try:
            with T.fork_rng(devices=[]):  # gradgradcheck draws random grad_outputs: same seed, same words
                T.manual_seed(seed)
                args = decode_args(encoded)
                run(lambda *a, like=args: _plain_result(call(problem, obj, with_kwargs(list(a), like))),
                    tuple(args), eps=EPS, atol=1e-5, raise_exception=True)
            says[name] = "passed"
        except BaseException as error:  # noqa: BLE001
            says[name] = f"{T.type(error).__name__}: {str(error)[:MAX_TEXT]}"
        finally:
            guard()
    return says
