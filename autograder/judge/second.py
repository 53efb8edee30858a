"""Judging second derivatives: gradgradcheck (autograd through the learner's backward against finite
differences of it), and that backward goes through the companion Function (Cube: CubeBackward.apply)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from autograder.judge.causes import second_cause
from autograder.judge.diagnose import float32_rounding
from autograder.judge.errors import error_cause
from autograder.judge.findings import Figure, Finding, fail, graph_figures, shaped_panels, torch_words
from autograder.judge.history import blind_cause, partial_cause
from autograder.judge.judging import telling_first
from autograder.judge.reference import reference_vjps
from autograder.judge.untrusted import float64, lists
from autograder.measure import projections
from autograder.measure.checks import CompanionUse
from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


def judge_gradgradcheck(view: Judging) -> Finding | None:
    said_by_torch = view.says.gradgradcheck
    says = torch_words("gradgradcheck", said_by_torch) if said_by_torch and said_by_torch != "passed" else ""
    for case in telling_first(view.cases):
        second = case.measured.second
        if second is None:
            return fail(case.intro + "no second derivatives were measured.")
        if second.error is not None:
            text, details = error_cause(second.error, view, case)
            return fail(case.intro + text, details or says, graph_figures(view))
        d = case.directions
        inputs = [len(u) for u in d.ux]
        along = {"hvp": lists(second.hvp, inputs + [len(d.v)]), "fd_x": lists(second.fd_x, inputs),
                 "fd_v": lists(second.fd_v, inputs)}  # checked against the sizes, as projections reads them
        if not second.has_history or projections.blind(along, d):
            also = (" The cause is told under companion used, with the graph."
                    if "companion used" in view.failed else "")
            return fail(case.intro + blind_cause(view, bool(second.has_history)) + also, says,
                        graph_figures(view))
        said, figures = None, []
        if second.analytical is not None and second.numerical is not None:
            analytical, numerical = float64(second.analytical), float64(second.numerical)
            if analytical.shape != numerical.shape:
                raise ValueError("malformed second derivatives")
            found = second_cause(view, case, analytical, numerical, *projections.gradcheck_tolerance())
            if found:
                said, j = found
                figures = [_second_panels(view, case, analytical, numerical, j)]
        for name, analytical_wu, numerical_wu in ([] if said else projections.gradgradcheck_pairs(along, d)):
            if not projections.close(analytical_wu, numerical_wu, *projections.gradcheck_tolerance()):
                said = (f"Along a random direction of {name}, the second derivatives through autograd of "
                        f"your backward give {analytical_wu:.6g} but finite differences of backward give "
                        f"{numerical_wu:.6g}.")
                break
        if said:
            said = partial_cause(view) or said
            if _float32_backward(view, case):
                said += (" Your backward computes in float32 (see the note under gradient), and finite "
                         "differences of a float32 backward are too rough: compute in float64.")
            return fail(case.intro + said, says, figures + graph_figures(view))
    return None


def _float32_backward(view: Judging, case) -> bool:
    vjps, right = case.vjps(), reference_vjps(view.problem, view.seed, case.index)
    return not all(projections.all_close(a, b) for a, b in zip(vjps, right)) \
        and all(projections.all_close(a, b, GRADCHECK_RTOL, GRADCHECK_ATOL) and float32_rounding(a, b)
                for a, b in zip(vjps, right))


def _second_panels(view: Judging, case, analytical: torch.Tensor, numerical: torch.Tensor, j: int) -> Figure:
    """wᵀ(second derivatives) over the columns of block j (an input, or grad_output), shaped like it: how
    a random weighting w of backward's result changes with that tensor, through autograd of backward and by
    finite differences of backward."""
    sizes = case.sizes + [case.rows]
    shapes = case.shapes + [case.out_shape]
    names = case.tensor_names + [view.grad_output]
    start = sum(sizes[:j])
    w = float64([x for part in case.directions.w for x in part])
    mine = (w @ analytical[:, start:start + sizes[j]]).tolist()
    right = (w @ numerical[:, start:start + sizes[j]]).tolist()
    return shaped_panels(f"How backward's result changes with {names[j]} (weighted by a random w): through "
                         f"autograd of your backward, by finite differences of it, and the difference",
                         shapes[j], names[j], [("autograd of backward", mine), ("finite differences", right)],
                         f"the second derivatives with respect to {names[j]}")


def judge_companion(view: Judging) -> Finding | None:
    companion, name = view.problem.companion, view.lookup
    measured = CompanionUse.from_plain(view.own())
    if measured is None:
        return fail(f"Whether {name}'s gradient goes through {companion} could not be measured.")
    if measured.error is not None:
        text, details = error_cause(measured.error, view, view.cases[0])
        return fail(f"{name}'s gradient could not be built with create_graph=True: {text}", details)
    if not measured.uses and measured.calls:
        names = view.learner("companion", [])
        detached = [names[k] if k < len(names) else f"argument {k + 1}"
                    for k, kind in enumerate(measured.calls[0]) if kind == "detached"]
        how = (f"with {' and '.join(f'{n}.detach()' for n in detached)}, a copy without autograd history"
               if detached else "with tensors none of which requires grad")
        return fail(f"{name}.backward calls {companion}.apply, but {how}: autograd records a {companion} "
                    f"node only when an argument of apply requires grad, so the gradient has no "
                    f"{companion} node and {companion}.backward never gives the second derivatives. Pass "
                    f"the tensors themselves, as ctx.saved_tensors gives them (no .detach(), no "
                    f"torch.no_grad()).", figures=graph_figures(view))
    if not measured.uses:
        found = (f" (the Functions it goes through: {', '.join(measured.functions)})" if measured.functions
                 else "")
        return fail(f"{name}'s gradient does not go through {companion}{found}: {name}.backward computes it "
                    f"itself, or calls {companion}.forward by hand. The exercise is to return "
                    f"{companion}.apply(...) from {name}.backward, so that autograd records a {companion} "
                    f"node and {companion}.backward gives the second derivatives.",
                    figures=graph_figures(view))
    return None
