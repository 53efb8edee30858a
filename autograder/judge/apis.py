"""Judging lesson 7's APIs: forward mode (the jvp staticmethod), torch.func.vmap and torch.func.grad, and
torch.library.opcheck's own report."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from autograder.judge.causes import derivative_at
from autograder.judge.diagnose import RTOL, close, difference_cause, float32_rounding
from autograder.judge.errors import error_cause, opcheck_cause
from autograder.judge.findings import Finding, fail, jacobian_panels, note
from autograder.judge.reference import encoded_once
from autograder.judge.untrusted import float64, matrices
from autograder.measure.contract import ApiResult, Output
from autograder.measure.encoding import differentiable
from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


def judge_extra(check: str) -> Callable[[Judging], Finding | None]:
    def judge(view: Judging) -> Finding | None:
        results = view.data.api_results(check)
        if not results:
            return fail(f"No {check} result came back for {view.lookup}.")
        noted = None
        for case, result in zip(view.cases, results):
            if result is None:
                return fail(case.intro + f"the {check} result came back malformed, so it is treated as "
                                         f"wrong.")
            if result.error is not None:
                text, details = error_cause(result.error, view, case)
                return fail(case.intro + text, details)
            said = _extra_cause(view, check, result, case)
            if isinstance(said, Finding):
                noted = noted or said
            elif said:
                return fail(case.intro + said[0], said[1], said[2])
        return noted

    return judge


def judge_tangent_unchanged(view: Judging) -> Finding | None:
    """Forward mode's twin of grad_output unchanged: the tangent a jvp is given belongs to the caller."""
    results = view.data.api_results("forward mode")
    if not results:
        return fail(f"No forward mode result came back for {view.lookup}.")
    for case, result in zip(view.cases, results):
        if result is None or result.error is not None:
            return fail(case.intro + "not graded: forward mode did not run to its end (see forward mode).")
        if result.tangent_changed:
            t = view.learner("jvp", ["x_tangent"])[0]
            return fail(case.intro + f"jvp changed {t}, the tangent it is given, in place (such as "
                                     f"{t}.mul_(...) or {t} *= ...). {t} belongs to the caller: it is the "
                                     f"tangent given to make_dual or torch.func.jvp, which then comes back "
                                     f"changed. Return a new tensor: {t} * (...), not {t}.mul_(...).")
    return None


def _tangent_times(view: Judging, case, name: str, mine: torch.Tensor, right: torch.Tensor) -> str:
    """What an elementwise jvp multiplies the tangent by, when it is the input, the output or the
    derivative taken at the output, instead of the derivative."""
    x, y = case.inputs[0].reshape(-1), float64(case.ref["output"]["values"]).reshape(-1)
    at_y = derivative_at(view, case, y) if len(case.inputs) == 1 and y.shape == mine.shape else None
    derivative = f" The derivative is {view.problem.derivative}." if view.problem.derivative else ""
    for value, text in ((x, f"{name}, the input"), (y, "forward's output"),
                        (at_y, "the derivative taken at forward's output instead of at the input")):
        if value is not None and value.shape == mine.shape and close(mine, value, RTOL, 1e-10) \
                and not close(right, value, RTOL, 1e-10):
            return f" jvp returns the tangent times {text}.{derivative}"
    for mistake in view.problem.mistakes if len(case.inputs) == 1 else ():
        if mistake.backward is None:
            continue
        x = case.inputs[0].clone().requires_grad_()
        try:
            with torch.enable_grad():  # the mistake's derivative, entry by entry (an elementwise function)
                (slope,) = torch.autograd.grad(mistake.backward(x).sum(), x)
        except (RuntimeError, TypeError, ValueError):  # a cause is a bonus: never fail the judging
            continue
        if slope.shape == x.shape and close(mine, slope.reshape(-1), RTOL, 1e-10):
            return f" jvp multiplies the tangent by the derivative of a known mistake: {mistake.text}"
    return ""


def _float32(mine: torch.Tensor, right: torch.Tensor) -> bool:
    """Within gradcheck's tolerance, and off by float32's rounding only: right, as the gradient check
    judges a backward that ran partly in float32 (a note, no cost)."""
    return (mine.shape == right.shape and not close(mine, right)
            and close(mine, right, GRADCHECK_RTOL, GRADCHECK_ATOL) and float32_rounding(mine, right))


FLOAT32 = ("{what} agrees with the right one to about 7 digits only: part of the computation ran in float32. "
           "That is within gradcheck's tolerance.")


def _extra_cause(view: Judging, check: str, result: ApiResult, case):
    """None when right; a note (a Finding) when right to float32's rounding only; else the failure's
    (sentence, details, figures)."""
    problem = view.problem
    noted = None
    encoded = encoded_once(problem, view.seed)[case.index]
    tensors = [(n, a) for n, a in zip(case.names, encoded) if differentiable(a)]
    if check == "forward mode":
        sizes = [len(a["values"]) for _, a in tensors]
        primal, want = result.primal, case.ref["output"]
        if primal is not None and isinstance(want, dict) and primal.shape == want.get("shape") \
                and not close(float64(primal.values), float64(want["values"])):
            return ("Under forward-mode AD (make_dual, torch.func.jvp) the output the caller gets differs "
                    "from forward's: jvp changed a tensor in place that forward's output shares (such as "
                    "the output saved with save_for_forward, changed by .pow_(2) or *=), so the caller's "
                    "result changed after forward returned it. In jvp, compute with new tensors "
                    "(y * y, not y.pow_(2))."), "", []
        mine, right = (matrices(result.jacobian or [], sizes, case.rows),
                       matrices(case.ref["jacobian"], sizes, case.rows))
        for (name, a), m, r in zip(tensors, mine, right):
            if _float32(m, r):
                noted = noted or note(FLOAT32.format(what="the Jacobian from forward mode (jvp)"))
                continue
            said = difference_cause(m, r, tuple(a["shape"]), name,
                           f"The Jacobian from forward mode (jvp) with respect to {name}")
            if said and "everywhere" in said and problem.elementwise and m.shape[0] == m.shape[1]:
                said += _tangent_times(view, case, name, m.diagonal(), r.diagonal())
            if said:
                return said, "", [jacobian_panels(f"Jacobian with respect to {name}", name, "the output",
                                                  m, r, ("yours (jvp)", "right"))]
        return noted
    if check == "vmap":
        (name, a), = tensors
        x = float64(a["values"]).reshape(a["shape"])
        batch = torch.stack([x, 2 * x, -x])
        want = torch.stack([problem.reference(t) for t in batch])
        got = result.batched or Output()
        if got.shape != list(want.shape):
            said = (f"vmap over a batch of 3 gave shape {got.shape} instead of {list(want.shape)}: the "
                    f"vmap rule must put the batch dimension first.")
            if got.shape == [3, *want.shape]:  # the batched output declared unbatched, so vmap adds one
                said = (f"vmap over a batch of 3 gave shape {got.shape} instead of {list(want.shape)}: one "
                        f"batch dimension too many. The vmap rule's output already carries the batch, but "
                        f"its out_dims say it does not (None), so vmap adds the batch dimension again: "
                        f"return the output with out_dims 0, (output, 0), where it is batched along "
                        f"dimension 0.")
            return said, "", []
        got_values = float64([got.values])
        if _float32(got_values, want.reshape(1, -1)):
            noted = note(FLOAT32.format(what="the output under torch.func.vmap"))
        else:
            said = difference_cause(got_values, want.reshape(1, -1), tuple(want.shape), "the batch",
                                    "The output under torch.func.vmap")
            if said:
                return said, "", []
        xg = x.clone().requires_grad_()
        (want_grad,) = torch.autograd.grad(problem.reference(xg).sum(), xg)
        got_grad = float64([(result.grad or Output()).values])
        if _float32(got_grad, want_grad.reshape(1, -1)):
            return noted or note(FLOAT32.format(what="the gradient from torch.func.grad"))
        said = difference_cause(got_grad, want_grad.reshape(1, -1), tuple(want_grad.shape), name,
                                "The gradient from torch.func.grad")
        if said and result.inputs_changed:
            said += (f" {name} itself comes back changed from these calls (see inputs unchanged): a change "
                     f"in place of {name} is the likely cause.")
        return (said, "", []) if said else noted
    if result.report is None:
        return "torch.library.opcheck's report came back malformed, so it is treated as wrong.", "", []
    report = dict(result.report)
    failed = {k: v for k, v in report.items() if v != "SUCCESS"}
    if failed:
        first = next(iter(failed))
        said = opcheck_cause(first, failed[first], view, case) or \
            f"torch.library.opcheck's {first} fails: {failed[first].splitlines()[0][:300]}"
        return (said,
                "\n\n".join(f"{k}: {v}" for k, v in report.items()), [])
    return None
