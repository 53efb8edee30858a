"""Why second derivatives through the learner's backward miss paths: backward computes with a tensor
that has no autograd history linking it to the inputs (an intermediate result of forward, a detached
copy of an input or an output, values autograd cannot follow), told with where backward finds it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.measure.contract import CaseMeasurement

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def _detached(view: Judging) -> tuple[str, str] | None:
    """Where backward finds a detached copy of one of forward's inputs or outputs (the 1st tensor passed to
    save_for_backward, ctx.x), and of which."""
    first = view.cases[0].measured if view.cases else CaseMeasurement()
    kept = [(f"ctx.{t.attr}", t) for t in first.ctx_tensors or [] if t.kind == "detached"]
    saved = [(f"the {_ordinal(k + 1)} tensor passed to save_for_backward", t)
             for k, t in enumerate(first.saved or []) if t.kind == "detached"]
    if not kept + saved:
        return None
    where, t = (kept + saved)[0]
    function = view.problem.all_outputs or view.lookup
    if t.of == "output":
        of = f"output {t.output} of {function}.forward" if t.output else "forward's output"
    elif t.index is not None and t.index < len(view.names):
        of = f"the input {view.names[t.index]}"
    else:
        return None
    return where, of


def partial_cause(view: Judging) -> str | None:
    """Why second derivatives differ (without being zero) when forward kept a tensor it computed, or a
    detached copy of an input or output: that tensor has no autograd history, so the second derivatives
    through it are missing."""
    detached = _detached(view)
    name = view.names[0] if view.names else "x"
    if detached:
        where, of = detached
        return (f"backward computes with {where}, a detached copy of {of} (.detach() gives the same values "
                f"without autograd history), so autograd's second derivatives miss how it changes with "
                f"{name} and differ from finite differences of backward. Drop the .detach(): pass {of} "
                f"itself to save_for_backward.")
    first = view.cases[0].measured if view.cases else CaseMeasurement()
    kept = [t for t in (first.ctx_tensors or []) if t.kind == "intermediate"]
    saved = [k for k, t in enumerate(first.saved or []) if t.kind == "intermediate"]
    if not kept and not saved:
        return None
    where = (", ".join(f"ctx.{t.attr}" for t in kept) if kept else
             "the " + " and ".join(_ordinal(k + 1) for k in saved) + " tensor passed to save_for_backward")
    name = view.names[0] if view.names else "x"
    return (f"backward computes with {where}, a tensor forward computed (such as torch.sigmoid({name})): an "
            f"intermediate result has no autograd history, so autograd's second derivatives miss how it "
            f"changes with {name} (only the paths through saved inputs are there), and they differ from "
            f"finite differences of backward. Recompute it in backward from the saved input, or return it "
            f"as an extra output of forward (an output's history is forward's node).")


def blind_cause(view: Judging, has_history: bool) -> str:
    """Why autograd sees second derivatives of zero with respect to the inputs where finite differences do
    not: what backward computed with has no history linking it to the inputs."""
    first = view.cases[0].measured if view.cases else CaseMeasurement()
    kept = [t for t in (first.ctx_tensors or []) if t.kind in ("intermediate", "detached")]
    saved = [t for t in (first.saved or []) if t.kind in ("intermediate", "detached")]
    name = view.names[0] if view.names else "x"
    detached = _detached(view)
    if detached:
        where, of = detached
        return (f"backward computes with {where}, a detached copy of {of} (.detach() gives the same values "
                f"without autograd history), so autograd sees second derivatives of zero where finite "
                f"differences do not. Drop the .detach(): pass {of} itself to save_for_backward.")
    if any(t.kind == "detached" for t in kept + saved):
        return (f"backward computes with a detached copy of a tensor (such as {name}.detach(), or the "
                f"output's), which has no autograd history, so autograd sees second derivatives of zero "
                f"where finite differences do not. Keep the tensor itself, with save_for_backward.")
    if kept or saved:
        where = ", ".join(f"ctx.{t.attr}" for t in kept) if kept else "tensors passed to save_for_backward"
        return (f"backward computes with {where}, computed inside forward: an intermediate result has no "
                f"autograd history, whether it is kept on ctx or passed to save_for_backward, so autograd "
                f"sees second derivatives of zero where finite differences do not. Return it as an extra "
                f"output of forward (an output's history is forward's node), or recompute it in backward "
                f"from a saved input.")
    if has_history:
        return (f"backward's result depends on {name} only through values autograd cannot follow, so "
                f"autograd sees second derivatives of zero where finite differences do not. Compute backward "
                f"with torch operations on the tensors from ctx.saved_tensors (no .detach(), .data, .item(), "
                f"NumPy or torch.no_grad()).")
    return (f"backward's result has no autograd history linking it to {name}, so autograd sees second "
            f"derivatives of zero where finite differences do not: backward computed it with values autograd "
            f"cannot follow (.detach(), .item(), NumPy, torch.no_grad(), or a new tensor built from "
            f"numbers). Compute it with torch operations on {view.grad_output} and on the tensors from "
            f"ctx.saved_tensors.")
