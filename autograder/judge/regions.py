"""Causes of a wrong elementwise derivative read from where it goes wrong and what it equals: right for
positive inputs only (an .abs() or a sign missing for negative ones, or the input's sign where a mask
belongs), or the second derivative where the first belongs (differentiated once too often). causes.py
tries these after its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from autograder.judge.diagnose import RTOL, close
from autograder.measure.encoding import decode_args, differentiable

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView, Judging


def derivative_bracket(view: Judging) -> str:
    """" (the derivative is ...)" after a cause, where the problem states its derivative (causes.py too)."""
    return f" (the derivative is {view.problem.derivative})" if view.problem.derivative else ""


def region_cause(view: Judging, case: CaseView, k: int, ds: torch.Tensor, dr: torch.Tensor,
                 what: str) -> str | None:
    """ds and dr: the learner's and the right derivative, entry by entry, with respect to input k."""
    x = case.inputs[k].reshape(-1).to(torch.float64)
    name = case.tensor_names[k]
    if x.shape != ds.shape:
        return None
    wrong = ~torch.isclose(ds, dr, rtol=RTOL, atol=1e-10)
    said = _sign_too_many(view, case, k, ds, dr, x, what)
    if said:
        return said
    for sign, side, other in ((x < 0, "negative", "positive"), (x > 0, "positive", "negative")):
        if bool(wrong.any()) and bool((wrong == sign).all()):
            return (f"{what} is right wherever {name} is {other} and wrong wherever it is {side}: the "
                    f"formula holds for {other} {name} only: is an .abs() or a sign missing (as 1 + {name} "
                    f"where 1 + {name}.abs() is meant)?" + (f" The derivative is {view.problem.derivative}."
                                                          if view.problem.derivative else ""))
    second = _second_derivative(view, case, k)
    if second is not None and close(ds, second, RTOL, 1e-10) and not close(dr, second, RTOL, 1e-10):
        return (f"{what} is the second derivative of {view.lookup} (the derivative of its derivative): the "
                f"derivative is taken once too often{derivative_bracket(view)}.")
    return None


def _sign_too_many(view: Judging, case: CaseView, k: int, ds: torch.Tensor, dr: torch.Tensor, x: torch.Tensor,
                   what: str) -> str | None:
    """The derivative written as the input's sign (grad_output * torch.sign(input) for ReLU): right where
    the input is positive, -1 where it is negative. The sign is the mistake there, not a missing one."""
    negative = x < 0
    if not bool(negative.any()) or not close(ds, x.sign(), RTOL, 1e-10) or close(dr, x.sign(), RTOL, 1e-10):
        return None
    name, g = case.tensor_names[k], view.grad_output
    there = dr[negative]
    value = "0" if bool((there == 0).all()) else "not -1"
    mask = bool((there == 0).all()) and close(dr[x > 0], torch.ones_like(dr[x > 0]), RTOL, 1e-10)
    fix = (f": multiply {g} by a mask that is 0 there, such as ({name} > 0), or {name}.sign().clamp(min=0)"
           if mask else f": multiply {g} by the derivative{derivative_bracket(view)}")
    return (f"{what} is {g} times {name}.sign(): the sign is the mistake. torch.sign({name}) is -1 where "
            f"{name} is negative, where the derivative is {value}{fix}.")


def _second_derivative(view: Judging, case: CaseView, k: int) -> torch.Tensor | None:
    """The reference's second derivative with respect to input k, entry by entry (an elementwise function)."""
    decoded = decode_args(case.encoded)
    args = [decoded[i].clone().to(torch.float64).requires_grad_() if differentiable(a) else decoded[i]
            for i, a in enumerate(case.encoded)]
    tensors = [a for a, e in zip(args, case.encoded) if differentiable(e)]
    with torch.enable_grad():
        (first,) = torch.autograd.grad(view.problem.reference(*args, **case.kwargs).sum(), tensors[k],
                                       create_graph=True)
        if not first.requires_grad:
            return None  # a derivative constant in the input (a mask, KillHead's): no second one to tell
        (second,) = torch.autograd.grad(first.sum(), tensors[k], allow_unused=True)
    if second is None or not bool(torch.isfinite(second).all()):
        return None
    return second.reshape(-1)


def ignored_gradient(mine: torch.Tensor, right: torch.Tensor, name: str, source: str) -> str | None:
    """Second derivatives whose rows are all the same where finite differences' are not: the backward
    being differentiated returns the same gradient for `name` whatever gradient it is given."""
    if mine.shape[0] < 2 or not close(mine, mine[:1].expand_as(mine), RTOL, 1e-10) \
            or close(right, right[:1].expand_as(right), RTOL, 1e-10):
        return None
    return (f"{source} returns the same gradient for {name} whatever gradient it is given: it never uses "
            f"that gradient (its parameter after ctx, the gradient arriving at its output). By the chain "
            f"rule, each gradient it returns is that gradient times a derivative: multiply by it.")


def lacks_grad_output(view: Judging, case: CaseView, mine: torch.Tensor, right: torch.Tensor, j: int,
                      source: str) -> str | None:
    """An elementwise problem's second derivatives with respect to input j (mine: autograd's through the
    learner's backward, right: finite differences of it, one column per entry of the input) that equal the
    right ones divided by the gradient the first backward was given: `source` (CubeBackward.backward)
    left that gradient out of its gradient for the input (grad_out * 6 * x where grad_out * saved_grad_out
    * 6 * x belongs)."""
    if not view.problem.elementwise or j >= len(case.sizes) or mine.shape[0] != mine.shape[1]:
        return None
    v = torch.tensor(case.directions.v, dtype=torch.float64).reshape(-1)
    if v.shape[0] != mine.shape[0] or close(v, torch.ones_like(v), RTOL, 1e-10):
        return None
    if not close(mine.diagonal() * v, right.diagonal(), RTOL, 1e-8) or close(mine, right, RTOL, 1e-8):
        return None
    name, g = case.tensor_names[j], view.grad_output
    saves = f" ({view.problem.companion} saves it for its backward)" if view.problem.companion else ""
    return (f"The second derivative with respect to {name} lacks a factor {g}: {source}'s gradient for "
            f"{name} leaves out {g}, the gradient {view.lookup}.backward received. Backward returns {g} "
            f"times the derivative, so how it changes with {name} is {g} times the second derivative: "
            f"multiply by {g}{saves}.")


def smooth_at_zero(view: Judging, case: CaseView, k: int, wrong: torch.Tensor, zeros: str, what: str,
                   dr: torch.Tensor) -> str | None:
    """The cause of a derivative wrong only where an input is exactly 0 (`wrong`) when the reference is
    differentiable there (its derivative with respect to input k the same just above and just below 0):
    nothing is special at 0, so backward singled those entries out. None at a kink (|uv| at 0)."""
    decoded = decode_args(case.encoded)
    sides = []
    for step in (1e-7, -1e-7):
        args = [decoded[i].clone().to(torch.float64) if differentiable(a) else decoded[i]
                for i, a in enumerate(case.encoded)]
        tensors = [a for a, e in zip(args, case.encoded) if differentiable(e)]
        for t in tensors:
            if t.numel() == wrong.numel():
                t.view(-1)[wrong & (t.reshape(-1) == 0)] = step
        tensors[k].requires_grad_()
        with torch.enable_grad():
            (grad,) = torch.autograd.grad(view.problem.reference(*args, **case.kwargs).sum(), tensors[k],
                                          allow_unused=True)
        sides.append(torch.zeros_like(dr) if grad is None else grad.reshape(-1).to(torch.float64))
    if not all(close(side[wrong], dr[wrong], 1e-4, 1e-6) for side in sides):
        return None
    values = ", ".join(sorted({f"{float(v):g}" for v in dr[wrong].tolist()})[:3])
    name = case.tensor_names[k]
    return (f"{what} is wrong only where {zeros} is exactly 0 ({int(wrong.sum())} of the {wrong.numel()} "
            f"entries), although {view.lookup} is differentiable there (the right derivative there is "
            f"{values}): backward treats those entries apart, by a test of a value against 0 (== 0, a mask "
            f"taken from the output, > 0 where >= 0 is meant), torch.sign (0 at 0) or a division by {name}. "
            f"Compute the gradient there as everywhere else{derivative_bracket(view)}.")
