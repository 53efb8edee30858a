"""Judging gradcheck: the analytical Jacobian (backward) against finite differences of the learner's own
forward, as torch.autograd.gradcheck compares them, for every output of the Function."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from autograder.judge.diagnose import difference_cause, float32_rounding, only_where
from autograder.judge.errors import error_cause
from autograder.judge.findings import Finding, fail, shaped_panels, torch_words
from autograder.judge.judging import telling_first
from autograder.judge.kinks import without_kink_entries, without_kinks
from autograder.judge.saved_order import own_order
from autograder.judge.untrusted import float64, lists, matrices
from autograder.measure import projections
from autograder.measure.contract import Output, StudentError
from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


def judge_gradcheck(view: Judging) -> Finding | None:
    said_by_torch = view.says.gradcheck
    says = torch_words("gradcheck", said_by_torch) if said_by_torch and said_by_torch != "passed" else ""
    for case in telling_first(view.cases):
        if case.measured.fd is None:
            text, details = error_cause(case.measured.numerical_error or StudentError(), view, case)
            return fail(case.intro + text, details)
        (fd,) = lists([case.measured.fd], [case.rows])
        vjps, fd = without_kinks(view, case, case.vjps(), fd)
        if not all(math.isfinite(x) for x in fd):
            return fail(case.intro + "finite differences of your forward are inf or NaN here, because "
                                     "forward's output is (see forward): gradcheck cannot compare anything "
                                     "with them.")
        d = case.directions
        said, figures = None, []
        if case.measured.jacobian is not None and case.measured.numerical is not None:
            jac = matrices(case.measured.jacobian, case.sizes, case.rows)
            numeric = matrices(case.measured.numerical, case.sizes, case.rows)
            jac, numeric = without_kink_entries(view, case, jac), without_kink_entries(view, case, numeric)
            v = float64(d.v)
            for k, name in enumerate(case.tensor_names):
                said = difference_cause(jac[k], numeric[k], case.shapes[k], name,
                               f"The gradient with respect to {name} from backward",
                               rtol=projections.gradcheck_tolerance()[0],
                               atol=projections.gradcheck_tolerance()[1])
                if said:
                    said = said.replace("the right one", "finite differences of your forward")
                    figures = [shaped_panels(f"grad_{name} for a random {view.grad_output}: from your "
                                             f"backward, by finite differences of your forward, and the "
                                             f"difference", case.shapes[k],
                                             name, [("from backward", (v @ jac[k]).tolist()),
                                                    ("finite differences", (v @ numeric[k]).tolist())],
                                             f"the gradient with respect to {name}")]
                    break
        if said and "gradient" in view.failed and not _float32_forward(case) and _forward_right(case):
            # gradient's sentence names the cause, or at least where backward goes wrong: never claimed
            told = "where it goes wrong is shown" if only_where(view.failed["gradient"][0]) else \
                "the cause is told"
            said = (f"backward does not compute the derivative of forward: finite differences of your "
                    f"forward disagree with it, as the reference does ({told} under gradient).")
            figures = []  # gradient's picture already shows the same difference
        if not said:
            for analytical, numerical in projections.gradcheck_pairs(vjps, fd, d):
                if not projections.close(analytical, numerical, *projections.gradcheck_tolerance()):
                    said = (f"Along a random direction u, backward gives vᵀJu = {analytical:.6g} but finite "
                            f"differences of forward give {numerical:.6g}: backward does not compute the "
                            f"derivative of forward.")
                    break
        if said:
            if _float32_forward(case):
                said += (" Your forward computes in float32 (see forward), and finite differences of a "
                         "float32 function are too rough: compute in float64.")
            elif "forward" in view.failed and "gradient" not in view.failed:
                said += (" Your backward gives the right gradients (gradient passes) but your forward is "
                         "wrong (see forward): finite differences follow forward, so fix forward.")
            return fail(case.intro + said, says, figures)
        found = _judge_extra_outputs(view, case)
        if found:
            return found
    return None


def _forward_right(case) -> bool:
    return projections.all_close((case.measured.output or Output()).values, case.ref["output"]["values"])


def _float32_forward(case) -> bool:
    mine, right = (case.measured.output or Output()).values, case.ref["output"]["values"]
    return not projections.all_close(mine, right) \
        and projections.all_close(mine, right, GRADCHECK_RTOL, GRADCHECK_ATOL) \
        and float32_rounding(mine, right)


def _judge_extra_outputs(view: Judging, case) -> Finding | None:
    """The outputs after the first of the Function the graded callable wraps: backward must add their
    gradients too (gradcheck tests every output)."""
    params = view.learner("outputs_backward", [])
    for entry in case.measured.extra_outputs or []:
        j = entry.output or 0
        param = params[j] if j < len(params) else f"the gradient of output {j}"
        if entry.error is not None:
            text, details = error_cause(entry.error, view, case)
            return fail(case.intro + f"with a gradient on output {j} of {view.problem.all_outputs}: " + text,
                        details)
        if entry.has_grad_fn is False:
            function = view.problem.all_outputs
            return fail(case.intro + f"output {j} of {function}.forward has no grad_fn: forward marks it "
                                     f"with ctx.mark_non_differentiable, so autograd never sends a gradient "
                                     f"through it ({param} is always zero in backward) although it depends "
                                     f"on the input. gradcheck tests every output, and the term of {param} "
                                     f"is what carries the second derivatives: remove the "
                                     f"ctx.mark_non_differentiable line (it is for outputs such as indices, "
                                     f"that have no derivative).")
        size = len(entry.fd or [])
        d = projections.directions(view.seed, 1000 * (case.index + 1) + j, size, tuple(case.sizes))
        (vjp,) = [lists(entry.vjp, case.sizes)]
        (fd,) = lists([entry.fd], [size])
        analytical = sum(projections.dot(g, u) for g, u in zip(vjp, d.u))
        numerical = projections.dot(d.v, fd)
        if not projections.close(analytical, numerical, *projections.gradcheck_tolerance()):
            if own_order(view):
                return fail(case.intro + own_order(view))
            arriving = f"{param} (the gradient arriving at output {j} of {view.problem.all_outputs}.forward)"
            if all(x == 0 for g in vjp for x in g):
                how = f"backward ignores {arriving}"
            elif projections.close(analytical, -numerical, *projections.gradcheck_tolerance()):
                how = f"backward adds the term of {arriving} with the wrong sign"
            else:
                how = f"backward's term of {arriving} is wrong"
            return fail(case.intro + f"{how}: gradcheck tests every output, and with a gradient on output "
                                     f"{j} only, backward gives vᵀJu = {analytical:.6g} where finite "
                                     f"differences of forward give {numerical:.6g}. The gradient backward "
                                     f"returns must include {param} times the derivative of output {j}: zero "
                                     f"in a first backward, that term carries the second derivatives.")
    return None
