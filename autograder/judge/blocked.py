"""What stops a case from being judged (forward raised, returned no tensor, returned the wrong shape,
backward raised...): told once, in full, under the check it belongs to, and pointed at by the others."""

from __future__ import annotations

from dataclasses import dataclass

from autograder.judge.errors import error_cause
from autograder.judge.judging import CaseView, Judging
from autograder.measure.contract import Output, StudentError


@dataclass
class Blocked:
    """A case a check cannot judge: the cause, told in full under the check it belongs to."""

    owner: str
    message: str
    details: str = ""
    short: str = ""  # for the other checks: "backward raises TypeError"


def blocked(view: Judging, case: CaseView, part: str) -> Blocked | None:
    """Why this case cannot be judged by a check of `part` ("forward", "backward", "second"), or None."""
    m, name = case.measured, view.lookup
    if m.error is not None:
        said, details = error_cause(m.error, view, case)
        return Blocked("forward", case.intro + said, details, f"forward raises {m.error.type}")
    out = m.output or Output()
    if out.type != "Tensor":
        hint = ""
        if view.problem.kind == "callable" and view.problem.all_outputs:
            hint = (f" (call {view.problem.all_outputs}.apply(x)[0]: the wrapper returns only the first "
                    f"output)")
        hint = hint or _not_a_tensor_hint(str(out.type))
        a = "an" if str(out.type)[:1] in "aeiou" or out.type == "ndarray" else "a"
        return Blocked("forward", case.intro + f"{name} returned {a} {out.type}, not a "
                                               f"Tensor{hint}.",
                       short=f"{name} returns {a} {out.type}, not a Tensor")
    if part == "forward":
        return None
    shape, right = out.shape, case.ref["output"]["shape"]
    if shape != right:
        return Blocked("forward", case.intro + f"forward returned shape {shape} but the right output has "
                                               f"shape {right}.",
                       short=f"forward returns shape {shape} instead of {right}")
    if m.backward_error is not None:
        said, details = error_cause(m.backward_error, view, case)
        owner = "backward returns" if _validation_error(m.backward_error) else "gradient"
        where = m.backward_error.raised_in or "backward"
        return Blocked(owner, case.intro + said, details,
                       f"{where} raises {m.backward_error.type}")
    if not out.has_grad_fn:
        # Function.apply gives every floating output a grad_fn, even one forward detached: only
        # ctx.mark_non_differentiable (or an integer output) takes it away.
        why = ("forward marks it with ctx.mark_non_differentiable, which is only for outputs that have no "
               "derivative (indices, masks), or returns an integer or bool tensor: remove that line and "
               "return a floating-point tensor" if view.problem.kind == "function" else
               "forward computed it outside autograd's view, or returned a tensor made with .detach() or "
               "torch.no_grad()")
        return Blocked("gradient", case.intro + f"{name}'s output has no grad_fn, so no gradient can "
                                                f"flow back through it ({why}).",
                       short="the output has no grad_fn")
    return None


def _not_a_tensor_hint(kind: str) -> str:
    """What learners return instead of a tensor, and how to return the tensor itself."""
    if kind == "tuple":
        return (": a trailing comma (return result,) makes a tuple, and so does torch.max(x, dim), which "
                "returns (values, indices). Return the tensor itself")
    if kind == "ndarray":
        return (": NumPy's result must become a tensor again, with torch.from_numpy(result) or "
                "input.new(result)")
    if kind in ("float", "int"):
        return (": .item(), float() or a math function turned the tensor into a number. Compute with torch "
                "operations")
    return ""


def _validation_error(error: StudentError) -> bool:
    """Autograd refused what backward returned (a count, a gradient for a non-tensor, a shape)."""
    message = error.message
    return any(p in message for p in ("incorrect number of gradients", "different than None at position",
                                      "invalid gradient at index", "expected Variable or None"))
