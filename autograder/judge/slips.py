"""Slips of Python and PyTorch usage that raise in the learner's code (a tuple where a tensor belongs,
math.exp on a tensor, a Python if on a tensor, max(dim)'s pair, a method's self before ctx...), each told
in one sentence of ours in the learner's names; errors.py tries them with its own."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView, Judging
    from autograder.measure.contract import StudentError


def _forward_with_self(message: str, kind: str, error: StudentError, view: Judging,
                       case: CaseView) -> str | None:
    names = view.data.names
    forward = names.forward or []
    if kind != "TypeError" or names.setup_context is not None or forward[:1] != ["ctx"] \
            or "forward()" not in message:
        return None
    given = ", ".join(forward[1:]) or "x"
    return (f"{view.lookup}.forward takes a parameter before ctx, as a method's self: a Function's forward "
            f"is a @staticmethod, forward(ctx, {given}), which PyTorch calls with ctx first. Remove the "
            f"first parameter and put @staticmethod above forward (and above backward).")


def _code(error: StudentError) -> str:
    """The line of the learner's code that raised, as written."""
    return error.frames[-1].code if error.frames else ""


def _python_number(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if "only one element tensors can be converted to Python scalars" not in message:
        return None
    called = re.search(r"\bmath\.(\w+)\(", _code(error))
    what = f"math.{called[1]}, which takes one Python number" if called else \
        "a Python function that takes one number (math.exp, float(), int())"
    fix = f"torch.{called[1]}" if called else "the torch function (torch.exp)"
    return (f"{error.raised_in or 'backward'} gives a tensor of several entries to {what}: use "
            f"{fix} instead, which works entry by entry and keeps autograd's history.")


def _tuple_operand(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if kind != "TypeError" or not ("only integer tensors of a single element can be converted to an index"
                                   in message or re.search(r"'Tensor' and 'tuple'|'tuple' and 'Tensor'",
                                                           message)):
        return None
    return (f"{error.raised_in or 'backward'} combines a tensor with a tuple. ctx.saved_tensors is a "
            f"tuple even when one tensor was saved: unpack it with a comma, as result, = ctx.saved_tensors "
            f"(or ctx.saved_tensors[0]), and likewise for any function that returns several values.")


def _none_operand(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    if not re.search(r"unsupported operand type\(s\) for .*'NoneType'", message):
        return None
    omitted = [n for n, e in zip(view.names, list(case.encoded) + [None] * len(view.names))
               if e is None and n in (view.data.names.optional or [])]
    if omitted:
        return (f"{omitted[0]} is None here ({view.lookup}.apply was called without it), and "
                f"{error.raised_in or 'forward'} computes with it all the same: use it only when given "
                f"(if {omitted[0]} is not None: ...).")
    return (f"{error.raised_in or 'forward'} computes with a value that is None: a function or a "
            f"method that returns nothing, or an argument left out.")


def _truth_of_tensor(message: str, kind: str, error: StudentError, view: Judging,
                     case: CaseView) -> str | None:
    if "Boolean value of Tensor with more than one value is ambiguous" not in message:
        return None
    return (f"{error.raised_in or 'backward'} uses a tensor of several entries as one True or False "
            f"(a Python if, and, or, or max()): decide entry by entry instead, with "
            f"torch.where(condition, a, b), a mask, or .sign().")


def _named_tuple(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"torch\.return_types\.(\w+)", message)
    if not match:
        return None
    f = match[1]
    better = {"max": "amax", "min": "amin"}.get(f)
    also = f", or {better}(dim), which returns the values only" if better else ""
    return (f"{error.raised_in or 'forward'} uses the result of {f}(dim) as a tensor, but with a dim "
            f"{f} returns a pair (values, indices): take its .values{also}.")


def _setup_context_arguments(message: str, kind: str, error: StudentError, view: Judging,
                             case: CaseView) -> str | None:
    if kind != "TypeError" or not re.search(r"setup_context\(\) (takes|missing)", message):
        return None
    return (f"PyTorch calls {view.lookup}.setup_context(ctx, inputs, output): three arguments, inputs "
            f"the tuple of forward's arguments and output what forward returned. Write "
            f"setup_context(ctx, inputs, output) ({first_line(message)}).")


def _broadcast(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    match = re.search(r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
                      r"non-singleton dimension (\d+)", message)
    if not match or error.raised_in not in ("forward", "backward"):
        return None
    kept = bool(case.shapes) and tuple(case.out_shape) == tuple(case.shapes[0])
    code, g = _code(error), view.grad_output
    line = f"`{code}`" if code else "a line"
    where = error.frames[-1].name if error.frames and error.frames[-1].name else error.raised_in
    sizes = f"sizes {match[1]} and {match[2]} in dimension {match[3]}"
    reduced = _keepdim(code)
    if error.raised_in == "backward" and kept and reduced:
        return (f"{line} (in {where}) combines tensors whose shapes do not broadcast ({sizes}). {g} has the "
                f"input's shape here (forward reduces nothing away), so the reduction is backward's own: a "
                f".mean() or .sum() over a dimension drops it unless keepdim=True, and then no longer lines "
                f"up with {g}. Write {reduced[1]}.")
    if error.raised_in == "backward" and not kept:
        return None  # diagnose's sentence: grad_output has lost the reduced dimension
    return (f"{line} (in {where}) combines tensors whose shapes do not broadcast ({sizes}). Broadcasting "
            f"lines shapes up from the last dimension, so a statistic reduced over some dimensions (a mean "
            f"per channel, of shape [C]) meets the input's last dimension, not its own: keep the reduced "
            f"dimensions where it is computed (keepdim=True) or put them back (.unsqueeze(dim), or "
            f"mean[None, :, None, None] for a mean per channel) before combining it with the input.")


def _keepdim(code: str) -> tuple[str, str] | None:
    """A reduction without keepdim in the learner's line, as written and with keepdim (g.mean(-1) ->
    g.mean(-1, keepdim=True))."""
    for found in re.finditer(r"([\w.]+(?:\([^()]*\))?)\.(mean|sum|amax|amin)\(([^()]*)\)", code):
        if found[3] and "keepdim" not in found[3]:
            return found[0], f"{found[1]}.{found[2]}({found[3]}, keepdim=True)"
    return None


def first_line(message: str) -> str:
    """The message's first line, without advice of PyTorch's that is wrong for a learner here."""
    lines = message.strip().splitlines()
    line = lines[0][:200] if lines else ""
    return line.replace(" Use tensor.detach().numpy() instead.", "")


SLIPS = [_forward_with_self, _python_number, _tuple_operand, _none_operand, _truth_of_tensor, _named_tuple,
         _setup_context_arguments, _broadcast]
