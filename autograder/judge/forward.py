"""Judging forward: the submission defines what the problem asks for, forward's output is right (shape,
dtype, values), its inputs come back unchanged, and what it keeps for backward goes through
ctx.save_for_backward."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from autograder.judge.causes import not_finite
from autograder.judge.diagnose import difference_cause, float32_rounding
from autograder.judge.findings import Finding, fail, note, shaped_panels
from autograder.judge.patterns import off_by_one, row_offset
from autograder.judge.untrusted import float64, lists
from autograder.measure import projections
from autograder.measure.contract import Output
from autograder.measure.encoding import decode_args
from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


def judge_is_function(view: Judging) -> Finding | None:
    for other, kind in (view.data.also or {}).items():
        if kind != "Function":
            return fail(f"{other} must be a subclass of torch.autograd.Function too "
                        f"(it is {'missing' if kind == 'missing' else 'a ' + str(kind)}).")
    return None


def judge_forward(view: Judging) -> Finding | None:
    said = None
    for case in view.cases:
        out, ref = case.measured.output or Output(), case.ref["output"]
        if out.shape != ref["shape"]:
            how = _reduced_over(case, out.shape, ref["shape"])
            return fail(case.intro + f"forward returned shape {out.shape} but the right output has "
                                     f"shape {ref['shape']}{how}.")
        if out.dtype != "torch.float64":
            return fail(case.intro + f"forward returned {out.dtype} for float64 inputs: keep the "
                                     f"input's dtype (no .float(), no new float32 tensors).")
        (mine,) = lists([out.values], [len(ref["values"])])
        if projections.all_close(mine, ref["values"]):
            continue
        mistake = _known_mistake(view, case, mine)
        if mistake:
            return fail(case.intro + f"The output is what forward gives when {mistake}")
        shape = tuple(ref["shape"])
        if projections.all_close(mine, ref["values"], GRADCHECK_RTOL, GRADCHECK_ATOL) \
                and float32_rounding(mine, ref["values"]):
            said = said or note("forward's output agrees with the right one to about 7 digits only: part of "
                                "it ran in float32 (.float(), or a NumPy float32 array). It is within "
                                "gradcheck's tolerance, but finite differences of a float32 forward are too "
                                "rough for gradcheck: compute in float64.")
            continue
        actual, expected = float64([mine]), float64([ref["values"]])
        text = not_finite("The output", actual, case) \
            or difference_cause(actual, expected, shape, "the output", "The output") \
            or "The output differs from the right one."
        text += off_by_one(case, text)
        if "everywhere" in text:
            text += row_offset(actual.reshape(-1), expected.reshape(-1), shape, "output")
        elif " entries of the output" in text and view.problem.elementwise and len(case.inputs) == 1:
            text += _by_value(case, actual.reshape(-1), expected.reshape(-1))
        return fail(case.intro + text, figures=[shaped_panels("forward's output: yours, the right one and "
                                                              "the difference",
                                                              shape, "the output",
                                                              [("yours", mine), ("right", ref["values"])],
                                                              "the output")])
    return said


def _by_value(case, mine: torch.Tensor, right: torch.Tensor) -> str:
    """The input's values where an elementwise output is wrong, and the side of the others they lie on."""
    x = case.inputs[0].reshape(-1).to(torch.float64)
    if x.shape != mine.shape:
        return ""
    wrong = ~torch.isclose(mine, right, rtol=1e-6, atol=1e-10)
    name, bad, good = case.tensor_names[0], x[wrong], x[~wrong]
    if not bool(wrong.any()) or not bool((~wrong).any()):
        return ""
    said = f" It is wrong where {name} is {', '.join(f'{v:g}' for v in bad.tolist()[:4])}"
    if float(bad.min()) > float(good.max()):
        said += f", above every {name} where it is right: is there a clamp or a branch for large {name}?"
    elif float(bad.max()) < float(good.min()):
        said += f", below every {name} where it is right: is there a clamp or a branch for small {name}?"
    return said if said.endswith("?") else said + "."


def _reduced_over(case, shape, right) -> str:
    """Which dimension a reduction took instead of the right one, when the shapes tell."""
    if not case.shapes or not isinstance(shape, list):
        return ""
    first = list(case.shapes[0])

    def without(d: int) -> list[int]:
        return first[:d] + first[d + 1:]

    kept = [d for d in range(len(right) + 1) if right[:d] + [1] + right[d:] == shape]
    if kept and len(first) == len(shape):
        return (f": the reduced dimension is still there, of size 1 (keepdim=True keeps it). Return the "
                f"result without it: reduce with keepdim=False, or .squeeze({kept[-1] - len(shape)}) it")
    took = [d for d in range(len(first)) if without(d) == shape]
    meant = [d for d in range(len(first)) if without(d) == right]
    if len(took) == 1 and meant and took[0] not in meant:
        return (f": it looks reduced over dimension {took[0]} of {case.tensor_names[0]} where the exercise "
                f"reduces over dimension {meant[-1]} (dim=-1, the last)" if meant[-1] == len(first) - 1 else
                f": it looks reduced over dimension {took[0]} of {case.tensor_names[0]} instead of "
                f"{meant[-1]}")
    return ""


def _known_mistake(view: Judging, case, mine: list[float]) -> str | None:
    """The cause of a wrong output that is one of the problem's known mistakes (eps outside the square
    root), computed here on the case's inputs."""
    for mistake in view.problem.mistakes:
        if mistake.forward is None:
            continue
        with torch.no_grad():
            value = mistake.forward(*decode_args(case.encoded), **case.kwargs)
        if projections.all_close(mine, value.reshape(-1).tolist()):
            return mistake.text
    return None


def judge_inputs_unchanged(view: Judging) -> Finding | None:
    for case in view.cases:
        dirty = set(case.measured.dirty or [])
        changed = [k for k in case.measured.inputs_changed or []
                   if isinstance(k, int) and k < len(case.names)]
        undeclared = [k for k in changed if k not in dirty]
        if undeclared:
            name = case.names[undeclared[0]]
            said = ("its mutates_args says it changes nothing" if view.problem.kind != "function"
                    else "nothing said so with ctx.mark_dirty")
            who = ("forward or setup_context" if view.data.names.setup_context is not None
                   or view.problem.kind != "function" else "forward")
            return fail(case.intro + f"{who} changed {name} in place, so the caller's {name} comes back "
                                     f"changed (and {said}). Leave {name} as it was: work on a copy, result "
                                     f"= {name}.clone(), and change result.")
        if changed:
            return note(f"forward changes {case.names[changed[0]]} in place and declares it with "
                        f"ctx.mark_dirty.")
    return _changed_by_the_apis(view)


def _changed_by_the_apis(view: Judging) -> Finding | None:
    """An input changed in place where only lesson 7's ways run: in a jvp (forward mode) or under
    torch.func.vmap (a vmap rule), which the measurement of forward never calls."""
    for check, where, fix in (
            ("forward mode", "jvp, in forward mode,", ("jvp returns a new tensor and leaves the tensors "
                                                       "it reads (saved with ctx.save_for_forward) as they "
                                                       "were")),
            ("vmap", "under torch.func.vmap, the vmap rule (or forward on the batch)",
             "work on a copy, or return a new tensor")):
        for case, result in zip(view.cases, view.data.api_results(check)):
            changed = [k for k in (result.inputs_changed if result is not None else ())
                       if k < len(case.names)]
            if changed:
                name = case.names[changed[0]]
                return fail(case.intro + f"{where} changed {name} in place, so the caller's {name} comes "
                                         f"back changed. Leave {name} as it was: {fix}.")
    return None


def judge_save_for_backward(view: Judging) -> Finding | None:
    found = _saved_for_backward(view)
    if found is not None and not found.passed and view.cases[0].measured.ctx_tensors \
            and view.data.names.jvp is not None:
        return fail(found.message + " The tensors jvp reads go through ctx.save_for_forward in the same way "
                                    "(read back from ctx.saved_tensors in jvp).")
    return found


def _saved_for_backward(view: Judging) -> Finding | None:
    case = view.cases[0]
    kept = case.measured.ctx_tensors or []
    # a forward without ctx leaves ctx to setup_context (a Function's, or a custom op's)
    keeper = ("setup_context" if view.data.names.setup_context is not None or view.problem.kind != "function"
              else "forward")
    if kept:
        first = kept[0]
        attr, kind = first.attr or "x", first.kind
        what = f"ctx.{attr}"
        index = first.index
        name = case.names[index] if isinstance(index, int) and index < len(case.names) else None
        adds = ("autograd's check, when backward reads it, that it was not changed in place since forward "
                "(with a plain attribute such a change silently gives a wrong gradient), and visibility to "
                "saved-tensor hooks (torch.autograd.graph.save_on_cpu, activation checkpointing)")
        if kind == "input":
            return fail(f"{keeper} keeps {name}, one of its inputs, as {what}, a plain attribute of ctx. "
                        f"{name} keeps its autograd history either way (even second derivatives work); what "
                        f"ctx.save_for_backward({name}) adds is {adds}. In backward, read it back with "
                        f"{name}, = ctx.saved_tensors.")
        if kind == "output":
            return fail(f"{keeper} keeps its output as {what}, a plain attribute of ctx. The output keeps "
                        f"its autograd history either way; what ctx.save_for_backward adds is {adds}, and no "
                        f"reference cycle (output, its node ctx, output) that keeps the output in memory "
                        f"until Python's garbage collector runs. In backward, read it back from "
                        f"ctx.saved_tensors.")
        if kind == "detached":
            of = name or "its output"
            return fail(f"{keeper} keeps a detached copy of {of} as {what}: a copy without autograd history, "
                        f"kept where autograd does not see it. Save {of} itself with "
                        f"ctx.save_for_backward(...).")
        return fail(f"{keeper} keeps a tensor it computed (neither an input nor an output) as {what}, a "
                    f"plain attribute of ctx. Tensors for backward go through ctx.save_for_backward, which "
                    f"adds {adds}. Pass it to ctx.save_for_backward with the other tensors the exercise asks "
                    f"for (inputs, outputs or intermediates such as a mean) and read it back from "
                    f"ctx.saved_tensors.")
    if not case.measured.saved:
        return fail("forward passes no tensor to ctx.save_for_backward, where the exercise asks it to keep "
                    "the tensors backward needs that way (ctx.save_for_backward(...) in forward, "
                    "ctx.saved_tensors in backward).")
    return None
