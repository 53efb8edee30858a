"""Measurements for lesson 7's APIs: forward mode (jvp), torch.func transforms, torch.library.opcheck.

Like probe.py, it returns raw numbers and PyTorch's own words only; the judge decides. PyTorch entry
points are captured at import, before student code runs.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch
import torch.func
from torch.autograd import forward_ad

from autograder.measure.calls import MAX_TEXT, error_data
from autograder.measure.differences import by_columns
from autograder.measure.encoding import decode_args, differentiable, make, plain

_M = SimpleNamespace(dual_level=forward_ad.dual_level, make_dual=forward_ad.make_dual,
                     unpack_dual=forward_ad.unpack_dual, vmap=torch.func.vmap, grad=torch.func.grad,
                     opcheck=torch.library.opcheck, stack=torch.stack, isinstance=isinstance,
                     Tensor=torch.Tensor)


def measure_extra(problem, obj, encoded_cases: list[list[Any]]) -> dict:
    """One entry per extra check of the problem, each a list over cases (or an error)."""
    out: dict[str, Any] = {}
    for check in problem.extra_checks:
        measure = MEASURES[check]
        results = []
        for encoded in encoded_cases:
            try:
                results.append(measure(problem, obj, encoded))
            except BaseException as error:  # noqa: BLE001 - student code failing is data
                results.append({"error": error_data(error, check)})
        out[check] = results
    return out


def forward_mode(problem, obj, encoded: list[Any]) -> dict:
    """The Jacobian column by column: J e_j through forward-mode AD (the Function's jvp); whether a
    call changed the tangent it was given or a tensor input, as a jvp changing either in place does; and
    the output's primal of the first call (a jvp changing forward's output, saved for it, changes it)."""
    changed = {"tangent": False, "inputs": [], "primal": None}

    def column(k: int, j: int, arg: dict) -> list[float]:
        args = decode_args(encoded)
        tangent = [0.0] * len(arg["values"])
        tangent[j] = 1.0
        given = make(arg["shape"], tangent, requires_grad=False)
        with _M.dual_level():
            args[k] = _M.make_dual(args[k], given)
            out = problem.call(obj, args)
            values = _tangent_values(out)
            if changed["primal"] is None:
                changed["primal"] = plain(_M.unpack_dual(out)[0])
        changed["tangent"] = changed["tangent"] or plain(given)["values"] != tangent
        changed["inputs"] += [i for i, (a, e) in enumerate(zip(args, encoded))
                              if differentiable(e) and i not in changed["inputs"]
                              and plain(_M.unpack_dual(a)[0])["values"] != e["values"]]
        return values

    jacobian = by_columns(encoded, column)
    return {"jacobian": jacobian, "tangent_changed": changed["tangent"], "inputs_changed": changed["inputs"],
            "primal": changed["primal"]}


def _tangent_values(out) -> list[float]:
    primal, tangent = _M.unpack_dual(out)
    if tangent is None:
        return [0.0] * primal.numel()
    return plain(tangent)["values"]


def vmap(problem, obj, encoded: list[Any]) -> dict:
    """The Function under torch.func.vmap over a batch of 3 (the input, its double and its negation),
    and torch.func.grad of its sum; and whether either changed the tensor it was given (a vmap rule
    changing its input in place)."""
    (x,) = [a for a in decode_args(encoded) if _M.isinstance(a, _M.Tensor)]
    x = x.detach()
    batch = _M.stack([x, 2 * x, -x])
    before = plain(batch)["values"], plain(x)["values"]
    batched = _M.vmap(lambda t: problem.call(obj, [t]))(batch)
    grad = _M.grad(lambda t: problem.call(obj, [t]).sum())(x)
    changed = [0] if (plain(batch)["values"], plain(x)["values"]) != before else []
    return {"batched": plain(batched), "grad": plain(grad), "inputs_changed": changed}


def opcheck(problem, obj, encoded: list[Any]) -> dict:
    """torch.library.opcheck's own report: each of its tests and what it said."""
    report = _M.opcheck(obj, tuple(decode_args(encoded)), raise_exception=False)
    return {"report": {str(k): str(v)[:MAX_TEXT] for k, v in dict(report).items()}}


MEASURES = {"forward mode": forward_mode, "vmap": vmap, "opcheck": opcheck}


def warm_up(checks: set[str]) -> None:
    """Runs each of these checks once on PyTorch's own functions (and, for opcheck, a custom op of the
    grader's own), so that what they load on first use (the decompositions forward mode compiles, the
    torch.func transforms, the fake-tensor and tracing machinery opcheck drives: about 2.5 s) is loaded
    once in the grader, which workers fork from, instead of once per submission."""
    x = _M.stack([torch.linspace(-1, 1, 3, dtype=torch.float64)])
    if "forward mode" in checks:
        with _M.dual_level():
            _M.unpack_dual(torch.tanh(_M.make_dual(x, torch.ones_like(x))))
    if "vmap" in checks:
        _M.vmap(torch.sin)(x)
        _M.grad(lambda t: torch.sin(t).sum())(x[0])
    if "opcheck" in checks:
        op = _warm_up_op()
        _M.opcheck(op, (x.requires_grad_(),), raise_exception=False)


def _warm_up_op():
    """autograder_warm_up::twice, registered as lesson 7 registers softsign: a fake kernel and a backward."""
    try:
        op = torch.library.custom_op("autograder_warm_up::twice", mutates_args=())(_twice)
    except RuntimeError:  # defined by an earlier warm-up in this process
        return torch.ops.autograder_warm_up.twice.default
    op.register_fake(_twice)
    op.register_autograd(lambda ctx, grad: 2 * grad)
    return op


def _twice(x: torch.Tensor) -> torch.Tensor:
    return 2 * x
