"""Judging backward: what it returns (one value per input of forward), its gradients against the
reference's, when only some inputs need a gradient (ctx.needs_input_grad), and that it leaves
grad_output as it was."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograder.judge.causes import gradient_cause
from autograder.judge.diagnose import float32_rounding
from autograder.judge.errors import error_cause
from autograder.judge.findings import Finding, fail, jacobian_panels, note, shaped_panels
from autograder.judge.judging import telling_first
from autograder.judge.kinks import settle_kinks
from autograder.judge.reference import reference_vjps
from autograder.judge.saved_order import flag_of_another
from autograder.judge.untrusted import lists, matrices
from autograder.measure import projections
from autograder.measure.contract import Output
from autograder.measure.encoding import differentiable
from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL

if TYPE_CHECKING:
    from autograder.judge.judging import Judging


def judge_backward_returns(view: Judging) -> Finding | None:
    said = None
    for case in view.cases:
        returned = case.measured.backward_returns
        if not isinstance(returned, list):
            continue
        encoded, names = case.encoded, case.names
        extra = returned[len(encoded):]  # autograd accepts trailing Nones, e.g. for an omitted bias
        if len(returned) < len(encoded) or any(v.kind != "None" for v in extra):
            return fail(case.intro + f"backward returned {len(returned)} value(s) for the {len(encoded)} "
                                     f"input(s) of forward ({', '.join(names[:len(encoded)])}).")
        for k, (value, arg) in enumerate(zip(returned, encoded)):
            label = names[k]
            if isinstance(arg, dict) and not differentiable(arg):
                continue  # a tensor of integers, booleans...: autograd ignores what backward returns for it
            if not isinstance(arg, dict) and value.kind != "None":
                return fail(case.intro + f"backward returned a {value.kind} for {label}, which is not "
                                         f"a tensor: return None for it.")
            if isinstance(arg, dict) and value.kind == "Tensor" and value.shape != arg["shape"]:
                said = said or note(f"{case.intro}the gradient for {label} has shape {value.shape} "
                                    f"where {label} has shape {arg['shape']}; autograd sums it down to "
                                    f"{label}'s shape, so the result is the same.")
            elif isinstance(arg, dict) and value.kind not in ("Tensor", "None"):
                return fail(case.intro + f"backward returned a {value.kind} for {label}; return a "
                                         f"tensor shaped like it.")
    return said


def judge_gradient(view: Judging) -> Finding | None:
    said = None
    for case in telling_first(view.cases):
        out, ref = case.measured.output or Output(), case.ref["output"]
        values = out.values or []
        if len(values) != len(ref["values"]):
            return fail(case.intro + f"forward's output has {len(values)} entries where the right one "
                                     f"has {len(ref['values'])}, so its gradients cannot be the reference's.")
        ref_vjps = reference_vjps(view.problem, view.seed, case.index)
        vjps, on_kink = settle_kinks(view, case, case.vjps(), ref_vjps)
        if on_kink:
            return fail(case.intro + on_kink)
        if all(projections.all_close(a, b) for a, b in zip(vjps, ref_vjps)):
            continue
        if all(projections.all_close(a, b, GRADCHECK_RTOL, GRADCHECK_ATOL) and float32_rounding(a, b)
               for a, b in zip(vjps, ref_vjps)):
            said = said or note("backward's gradients agree with the right ones to about 7 digits only: part "
                                "of backward ran in float32. That is within gradcheck's tolerance.")
            continue
        jacobians = None
        if case.measured.jacobian is not None:
            jacobians = (matrices(case.measured.jacobian, case.sizes, case.rows),
                         matrices(case.ref["jacobian"], case.sizes, case.rows))
        text, k = _saved_input_changed(case) or gradient_cause(view, case, vjps[0], ref_vjps[0], vjps[1],
                                                                ref_vjps[1], jacobians)
        if "forward" in view.failed and "forward" not in text:
            text += (" Your forward's output is wrong too (see forward): fix forward first, and this may "
                     "come right.")
        name = case.tensor_names[k]
        figures = [shaped_panels(f"grad_{name} for a random {view.grad_output}: yours, the right one and the "
                                 f"difference", case.shapes[k], name,
                                 [(f"your grad_{name}", vjps[0][k]), (f"right grad_{name}", ref_vjps[0][k])],
                                 f"the gradient with respect to {name}")]
        if jacobians is not None and not view.problem.elementwise:
            jac, ref_jac = jacobians
            if jac[k].numel() <= 2500:
                figures.append(jacobian_panels(f"The whole Jacobian with respect to {name}: yours (from "
                                               f"backward), the right one and the difference", name,
                                               "the output",
                                               jac[k], ref_jac[k], ("yours", "right")))
        return fail(case.intro + text, figures=figures)  # a graph shows nothing of a first derivative
    return said


def _saved_input_changed(case) -> tuple[str, int] | None:
    """An input forward saved and then changed in place (input.clamp_(min=0) after
    ctx.save_for_backward(input)): backward reads the changed values, so the fault is forward's."""
    changed = set(case.measured.inputs_changed or []) - set(case.measured.dirty or [])
    saved = {t.index for t in case.measured.saved or [] if t.kind == "input"}
    for k in sorted(k for k in changed & saved if isinstance(k, int) and k < len(case.names)):
        name = case.names[k]
        if name not in case.tensor_names:
            continue
        said = (f"forward saves {name} with ctx.save_for_backward and then changes it in place (a method "
                f"ending in _, such as {name}.clamp_(...), or {name}[...] = ..., or +=), so backward reads "
                f"the changed values from ctx.saved_tensors, not the {name} forward was called with: "
                f"backward may be right, the fault is forward's. Compute the output as a new tensor (the "
                f"same operation without the trailing _, or on {name}.clone()).")
        return said, case.tensor_names.index(name)
    return None


def judge_needs_input_grad(view: Judging) -> Finding | None:
    for case in view.cases:
        ref_vjp = reference_vjps(view.problem, view.seed, case.index)[0]
        for sub in case.measured.subsets or []:
            requires = list(sub.requires or [])
            if len(requires) != len(case.tensor_names):
                raise ValueError("malformed subset")
            needing = [n for n, r in zip(case.tensor_names, requires) if r]
            others = [n for n, r in zip(case.tensor_names, requires) if not r]
            setting = (f"with {' and '.join(others)} not needing a gradient (requires_grad=False, as for "
                       f"data) and {' and '.join(needing)} needing one")
            where = case.intro.rstrip(": ") + ", " + setting + ": "
            if sub.error is not None:
                text, details = error_cause(sub.error, view, case)
                return fail(where + text, details)
            if sub.no_grad_fn:
                return fail(where + f"the output has no grad_fn, although {needing[0]} requires a gradient.")
            wanted = [v for v, r in zip(ref_vjp, requires) if r]
            got = lists(sub.vjp, [len(v) for v in wanted])
            for name, mine, right in zip(needing, got, wanted):
                if projections.all_close(mine, right, GRADCHECK_RTOL, GRADCHECK_ATOL):
                    continue
                position = case.names.index(name)
                returned = sub.returns or []
                said = flag_of_another(view)
                if said:
                    none = position < len(returned) and returned[position].kind == "None"
                    return fail(where + (f"backward returned None for {name}, which needs a gradient: "
                                         if none else "") + said)
                needs = sub.needs
                flags = (f"ctx.needs_input_grad is {tuple(bool(n) for n in needs)}, and "
                         if isinstance(needs, list) else "")
                if position < len(returned) and returned[position].kind == "None":
                    return fail(where + f"{flags}backward returned None for {name}, which needs a gradient: "
                                        f"read ctx.needs_input_grad[{position}] for {name} (its flags follow "
                                        f"forward's arguments, in order), and compute every gradient whose "
                                        f"flag is True.")
                said = f" ({flags.removesuffix(', and ')})" if flags else ""
                return fail(where + f"backward's gradient for {name} is wrong, although it is right when "
                                    f"every input needs a gradient: the gradient of {name} must not depend "
                                    f"on which other inputs need one{said}.")
    return _work_not_skipped(view) if getattr(view.problem, "skips_unneeded", False) else None


def _work_not_skipped(view: Judging) -> Finding | None:
    """Where the exercise asks backward to skip the gradient of an input that needs none: a gradient
    returned for such an input, or one computed and dropped (backward makes as many torch operations as
    when every input needs a gradient)."""
    def order(sub):  # one input without a gradient first, the first input (the data) before the others
        requires = list(sub.requires or [])
        return requires.count(False), requires.index(False) if False in requires else 0

    for case in view.cases:
        for sub in sorted(case.measured.subsets or [], key=order):
            requires, returned = list(sub.requires or []), sub.returns or []
            unneeded = [n for n, r in zip(case.tensor_names, requires) if not r]
            if not unneeded or len(requires) != len(case.tensor_names):
                continue
            needing = [n for n, r in zip(case.tensor_names, requires) if r]
            where = (case.intro.rstrip(": ") + f", with {' and '.join(unneeded)} not needing a gradient "
                     f"(requires_grad=False, as for data) and {' and '.join(needing)} needing one: ")
            for name in unneeded:
                p = case.names.index(name)
                if p < len(returned) and returned[p].kind == "Tensor":
                    return fail(where + f"backward returns a gradient for {name}, although "
                                        f"ctx.needs_input_grad[{p}] is False (autograd throws it away). The "
                                        f"exercise asks backward to skip that work: compute "
                                        f"grad_{name} only under `if ctx.needs_input_grad[{p}]:`, and leave "
                                        f"it None otherwise.")
            base, made = case.measured.backward_ops, case.measured.backward_made or []
            p = case.names.index(unneeded[0])
            # a gradient made by no operation (grad_output itself, as a broadcast-shaped bias's) costs none
            if len(unneeded) == 1 and sub.ops is not None and base is not None and sub.ops >= base \
                    and p < len(made) and made[p]:
                return fail(where + f"backward returns None for {unneeded[0]}, as ctx.needs_input_grad[{p}] "
                                    f"is False, but computes its gradient all the same: it makes as many "
                                    f"torch operations ({sub.ops}) as when every input needs a gradient. The "
                                    f"exercise asks backward to skip that work: compute grad_{unneeded[0]} "
                                    f"only under `if ctx.needs_input_grad[{p}]:`.")
    return None


def judge_grad_output_unchanged(view: Judging) -> Finding | None:
    g = view.grad_output
    for case in view.cases:
        if case.measured.grad_output_changed:
            return fail(case.intro + f"backward changed {g} in place (such as {g}[...] = 0). {g} belongs to "
                                     f"autograd: it can be shared with other nodes of the graph or be the "
                                     f"caller's own tensor, which then comes back changed. Work on a copy: "
                                     f"grad_input = {g}.clone(), then change grad_input.")
    return None
