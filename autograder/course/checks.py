"""The graded checks: each one object with its question, points, prerequisites, what it measures and how
it judges and explains. Adding a check touches only this file: a `Check` in `ALL`, in the order rows are
reported. (An instructor adds one with `add_check` from a private file; see docs/instructors.md.)

How a check is run:
- `part` is the part of the measurement it needs (judge.PARTS: "forward", "backward", "second", "extra",
  or "" for none): when that part never finished (a hang), the check fails, and only it;
- `requires` names checks that must pass first: a check whose prerequisite failed earns nothing (no
  second-derivative points for a wrong first derivative);
- `measure`, when a check needs calls of its own, runs in the worker after its part, beside the student's
  code, and returns plain data (data["checks"][name]); most checks judge the shared measurements of
  probe.py (each case's output, vector-Jacobian products, finite differences, what forward kept);
- `judge(view)` runs in the grader with the reference (judge.Judging) and returns a judge.Finding
  (failed: the cause in one sentence, and pictures) or None (passed); `note(...)` passes with a remark
  that costs nothing, for an observation that changes no result.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from autograder.judge.causes import blind_cause, error_cause, gradient_cause, not_finite, second_cause
from autograder.judge.diagnose import explain
from autograder.judge.verdicts import (
    Figure,
    Finding,
    Judging,
    _encoded,
    _lists,
    _matrices,
    _reference_vjps,
    _t,
    fail,
    jacobian_panels,
    note,
    shaped_panels,
    torch_words,
)
from autograder.measure import probe as probing
from autograder.measure import projections
from autograder.measure.projections import GRADCHECK_ATOL, GRADCHECK_RTOL


@dataclass(frozen=True)
class Check:
    name: str
    question: str  # what it asks, shown in the feedback tables
    points: float
    judge: Callable[[Judging], Finding | None]
    part: str = ""
    requires: tuple[str, ...] = ()
    applies: Callable[[Any], bool] = lambda problem: True
    measure: Callable[..., Any] | None = None  # (problem, obj, namespace, encoded_cases, seed) -> plain data
    extra: bool = False  # asked for by a problem's extra_checks

    def unmet(self, failed: list[str]) -> str:
        return (f"Not graded yet: this check needs {' and '.join(failed)} to pass first, and earns its points "
                f"once {'they pass' if len(failed) > 1 else 'it passes'}.")


def _graphs(view: Judging) -> list[Figure]:
    """The graph of the student's backward beside the reference's (where the student's was measured)."""
    mine, right = view.data.get("graph"), view.reference.get("graph")
    if not isinstance(mine, dict):
        return []
    if isinstance(right, dict):
        right = _relabelled(right, view.reference.get("names") or [], view.names)
    return [Figure("graphs", "The graph of backward, built with create_graph=True and drawn by torchviz: yours, "
                             "then the reference's", [("yours", mine), ("reference", right)])]


def _relabelled(graph: dict, old: list[str], new: list[str]) -> dict:
    """The reference's graph with its tensors named as the learner named them."""
    names = {}
    for a, b in zip(old, new):
        names[a], names[f"grad_{a}"] = b, f"grad_{b}"
    nodes = []
    for node, label, kind in graph.get("nodes", []):
        head, sep, rest = str(label).partition("\n")
        nodes.append([node, names.get(head, head) + sep + rest if kind != "op" else label, kind])
    return dict(graph, nodes=nodes)


# -- is a Function, forward ---------------------------------------------------------------------------

def judge_is_function(view: Judging) -> Finding | None:
    for other, kind in (view.data.get("also") or {}).items():
        if kind != "Function":
            return fail(f"{other} must be a subclass of torch.autograd.Function too "
                        f"(it is {'missing' if kind == 'missing' else 'a ' + str(kind)}).")
    return None


def judge_forward(view: Judging) -> Finding | None:
    said = None
    for case in view.cases:
        out, ref = case.measured["output"], case.ref["output"]
        if out.get("shape") != ref["shape"]:
            return fail(case.where + f"forward returned shape {out.get('shape')} but the right output has shape "
                                     f"{ref['shape']}.")
        if out.get("dtype") != "torch.float64":
            return fail(case.where + f"forward returned {out.get('dtype')} for float64 inputs: keep the input's "
                                     f"dtype (no .float(), no new float32 tensors).")
        (mine,) = _lists([out["values"]], [len(ref["values"])])
        if projections.all_close(mine, ref["values"]):
            continue
        shape = tuple(ref["shape"])
        if projections.all_close(mine, ref["values"], GRADCHECK_RTOL, GRADCHECK_ATOL):
            said = said or note("forward's output agrees with the right one to about 7 digits only: part of it "
                                "ran in float32 (.float(), or a NumPy float32 array). It is within gradcheck's "
                                "tolerance, but finite differences of a float32 forward are too rough for "
                                "gradcheck: compute in float64.")
            continue
        actual, expected = _t([mine]), _t([ref["values"]])
        text = not_finite("The output", actual, case) or explain(actual, expected, shape, "the output", "The output") \
            or "The output differs from the right one."
        return fail(case.where + text, figures=[shaped_panels("forward's output: yours, the right one and the difference",
                                                              shape, "the output", [("yours", mine), ("right", ref["values"])],
                                                              "the output")])
    return said


def judge_inputs_unchanged(view: Judging) -> Finding | None:
    for case in view.cases:
        dirty = set(case.measured.get("dirty") or [])
        changed = [k for k in case.measured.get("inputs_changed") or [] if isinstance(k, int) and k < len(case.names)]
        undeclared = [k for k in changed if k not in dirty]
        if undeclared:
            name = case.names[undeclared[0]]
            return fail(case.where + f"forward changed {name} in place, so the caller's {name} comes back changed "
                                     f"(and nothing said so with ctx.mark_dirty). Leave {name} as it was: work on a "
                                     f"copy, result = {name}.clone(), and change result.")
        if changed:
            return note(f"forward changes {case.names[changed[0]]} in place and declares it with ctx.mark_dirty.")
    return None


# -- backward returns, gradient -----------------------------------------------------------------------

def judge_backward_returns(view: Judging) -> Finding | None:
    said = None
    for case in view.cases:
        returned = case.measured.get("backward_returns")
        if not isinstance(returned, list):
            continue
        encoded, names = case.encoded, case.names
        extra = returned[len(encoded):]  # autograd accepts trailing Nones, e.g. for an omitted bias
        if len(returned) < len(encoded) or any(v.get("kind") != "None" for v in extra):
            return fail(case.where + f"backward returned {len(returned)} value(s) for the {len(encoded)} input(s) "
                                     f"of forward ({', '.join(names[:len(encoded)])}).")
        for k, (value, arg) in enumerate(zip(returned, encoded)):
            label = names[k]
            if isinstance(arg, dict) and not probing.differentiable(arg):
                continue  # a tensor of integers, booleans...: autograd ignores what backward returns for it
            if not isinstance(arg, dict) and value.get("kind") != "None":
                return fail(case.where + f"backward returned a {value.get('kind')} for {label}, which is not a "
                                         f"tensor: return None for it.")
            if isinstance(arg, dict) and value.get("kind") == "Tensor" and value.get("shape") != arg["shape"]:
                said = said or note(f"{case.where}the gradient for {label} has shape {value.get('shape')} where "
                                    f"{label} has shape {arg['shape']}; autograd sums it down to {label}'s shape, "
                                    f"so the result is the same.")
            elif isinstance(arg, dict) and value.get("kind") not in ("Tensor", "None"):
                return fail(case.where + f"backward returned a {value.get('kind')} for {label}; return a tensor "
                                         f"shaped like it.")
    return said


def judge_gradient(view: Judging) -> Finding | None:
    said = None
    for case in view.cases:
        out, ref = case.measured["output"], case.ref["output"]
        if len(out["values"]) != len(ref["values"]):
            return fail(case.where + f"forward's output has {len(out['values'])} entries where the right one has "
                                     f"{len(ref['values'])}, so its gradients cannot be the reference's.")
        vjps = case.vjps()
        ref_vjps = _reference_vjps(view.problem, view.seed, case.index)
        if all(projections.all_close(a, b) for a, b in zip(vjps, ref_vjps)):
            continue
        if all(projections.all_close(a, b, GRADCHECK_RTOL, GRADCHECK_ATOL) for a, b in zip(vjps, ref_vjps)):
            said = said or note("backward's gradients agree with the right ones to about 7 digits only: part of "
                                "backward ran in float32. That is within gradcheck's tolerance.")
            continue
        jacobians = None
        if "jacobian" in case.measured:
            jacobians = (_matrices(case.measured["jacobian"], case.sizes, case.rows),
                         _matrices(case.ref["jacobian"], case.sizes, case.rows))
        text, k = gradient_cause(view, case, vjps[0], ref_vjps[0], vjps[1], ref_vjps[1], jacobians)
        name = case.tensor_names[k]
        figures = [shaped_panels(f"grad_{name} for a random {view.grad_output}: yours, the right one and the "
                                 f"difference", case.shapes[k], name,
                                 [(f"your grad_{name}", vjps[0][k]), (f"right grad_{name}", ref_vjps[0][k])],
                                 f"the gradient with respect to {name}")]
        if jacobians is not None and not view.problem.elementwise:
            jac, ref_jac = jacobians
            if jac[k].numel() <= 2500:
                figures.append(jacobian_panels(f"The whole Jacobian with respect to {name}: yours (from backward), "
                                               f"the right one and the difference", name, "the output",
                                               jac[k], ref_jac[k], ("yours", "right")))
        return fail(case.where + text, figures=figures + _graphs(view))
    return said


def judge_needs_input_grad(view: Judging) -> Finding | None:
    for case in view.cases:
        ref_vjp = _reference_vjps(view.problem, view.seed, case.index)[0]
        for sub in case.measured.get("subsets") or []:
            requires = [bool(r) for r in sub.get("requires", [])]
            if len(requires) != len(case.tensor_names):
                raise ValueError("malformed subset")
            needing = [n for n, r in zip(case.tensor_names, requires) if r]
            others = [n for n, r in zip(case.tensor_names, requires) if not r]
            setting = (f"with {' and '.join(others)} not needing a gradient (requires_grad=False, as for data) and "
                       f"{' and '.join(needing)} needing one")
            where = case.where.rstrip(": ") + ", " + setting + ": "
            if "error" in sub:
                text, details = error_cause(sub["error"], view, case)
                return fail(where + text, details)
            if sub.get("no_grad_fn"):
                return fail(where + f"the output has no grad_fn, although {needing[0]} requires a gradient.")
            wanted = [v for v, r in zip(ref_vjp, requires) if r]
            got = _lists(sub.get("vjp"), [len(v) for v in wanted])
            for name, mine, right in zip(needing, got, wanted):
                if projections.all_close(mine, right, GRADCHECK_RTOL, GRADCHECK_ATOL):
                    continue
                position = case.names.index(name)
                returned = sub.get("returns") or []
                needs = sub.get("needs")
                flags = f"ctx.needs_input_grad is {tuple(bool(n) for n in needs)}, and " if isinstance(needs, list) else ""
                if position < len(returned) and returned[position].get("kind") == "None":
                    return fail(where + f"{flags}backward returned None for {name}, which needs a gradient: read "
                                        f"ctx.needs_input_grad[{position}] for {name} (its flags follow forward's "
                                        f"arguments, in order), and compute every gradient whose flag is True.")
                said = f" ({flags.removesuffix(', and ')})" if flags else ""
                return fail(where + f"backward's gradient for {name} is wrong, although it is right when every "
                                    f"input needs a gradient: the gradient of {name} must not depend on which other "
                                    f"inputs need one{said}.")
    return None


def judge_grad_output_unchanged(view: Judging) -> Finding | None:
    g = view.grad_output
    for case in view.cases:
        if case.measured.get("grad_output_changed"):
            return fail(case.where + f"backward changed {g} in place (such as {g}[...] = 0). {g} belongs to "
                                     f"autograd: it can be shared with other nodes of the graph or be the caller's "
                                     f"own tensor, which then comes back changed. Work on a copy: "
                                     f"grad_input = {g}.clone(), then change grad_input.")
    return None


def judge_save_for_backward(view: Judging) -> Finding | None:
    case = view.cases[0]
    kept = case.measured.get("ctx_tensors") or []
    if kept:
        first = kept[0]
        attr, kind = first.get("attr", "x"), first.get("kind")
        what = f"ctx.{attr}"
        index = first.get("index")
        name = case.names[index] if isinstance(index, int) and index < len(case.names) else None
        adds = ("autograd's check, when backward reads it, that it was not changed in place since forward (with a "
                "plain attribute such a change silently gives a wrong gradient), and visibility to saved-tensor hooks "
                "(torch.autograd.graph.save_on_cpu, activation checkpointing)")
        if kind == "input":
            return fail(f"forward keeps {name}, one of its inputs, as {what}, a plain attribute of ctx. {name} keeps "
                        f"its autograd history either way (even second derivatives work); what "
                        f"ctx.save_for_backward({name}) adds is {adds}. In backward, read it back with "
                        f"{name}, = ctx.saved_tensors.")
        if kind == "output":
            return fail(f"forward keeps its output as {what}, a plain attribute of ctx. The output keeps its autograd "
                        f"history either way; what ctx.save_for_backward adds is {adds}, and no reference cycle "
                        f"(output, its node ctx, output) that keeps the output in memory until Python's garbage "
                        f"collector runs. In backward, read it back from ctx.saved_tensors.")
        if kind == "detached":
            of = name or "its output"
            return fail(f"forward keeps a detached copy of {of} as {what}: a copy without autograd history, kept "
                        f"where autograd does not see it. Save {of} itself with ctx.save_for_backward(...).")
        return fail(f"forward keeps a tensor it computed (neither an input nor an output) as {what}, a plain "
                    f"attribute of ctx. Tensors for backward go through ctx.save_for_backward, which adds {adds}. "
                    f"Save what the exercise asks for (an input or the output) and compute the rest in backward.")
    if not case.measured.get("saved"):
        return fail("forward passes no tensor to ctx.save_for_backward, where the exercise asks it to keep the "
                    "tensors backward needs that way (ctx.save_for_backward(...) in forward, ctx.saved_tensors in "
                    "backward).")
    return None


# -- gradcheck, gradgradcheck --------------------------------------------------------------------------

def judge_gradcheck(view: Judging) -> Finding | None:
    said_by_torch = view.says.get("gradcheck")
    says = torch_words("gradcheck", said_by_torch) if said_by_torch and said_by_torch != "passed" else ""
    for case in view.cases:
        if "fd" not in case.measured:
            text, details = error_cause(case.measured.get("numerical_error") or {}, view, case)
            return fail(case.where + text, details)
        vjps = case.vjps()
        (fd,) = _lists([case.measured["fd"]], [case.rows])
        if not all(math.isfinite(x) for x in fd):
            return fail(case.where + "finite differences of your forward are inf or NaN here, because forward's "
                                     "output is (see forward): gradcheck cannot compare anything with them.")
        d = case.directions
        said, figures = None, []
        if "jacobian" in case.measured and "numerical" in case.measured:
            jac = _matrices(case.measured["jacobian"], case.sizes, case.rows)
            numeric = _matrices(case.measured["numerical"], case.sizes, case.rows)
            v = _t(d.v)
            for k, name in enumerate(case.tensor_names):
                said = explain(jac[k], numeric[k], case.shapes[k], name,
                               f"The gradient with respect to {name} from backward",
                               rtol=projections.gradcheck_tolerance()[0], atol=projections.gradcheck_tolerance()[1])
                if said:
                    said = said.replace("the right one", "finite differences of your forward")
                    figures = [shaped_panels(f"grad_{name} for a random {view.grad_output}: from your backward, by "
                                             f"finite differences of your forward, and the difference", case.shapes[k],
                                             name, [("from backward", (v @ jac[k]).tolist()),
                                                    ("finite differences", (v @ numeric[k]).tolist())],
                                             f"the gradient with respect to {name}")]
                    break
        if said and "gradient" in view.failed and not _float32_forward(case) and _forward_right(case):
            said = ("backward does not compute the derivative of forward: finite differences of your forward "
                    "disagree with it, as the reference does (the cause is told under gradient).")
        if not said:
            for analytical, numerical in projections.gradcheck_pairs(vjps, fd, d):
                if not projections.close(analytical, numerical, *projections.gradcheck_tolerance()):
                    said = (f"Along a random direction u, backward gives vᵀJu = {analytical:.6g} but finite "
                            f"differences of forward give {numerical:.6g}: backward does not compute the derivative "
                            f"of forward.")
                    break
        if said:
            if _float32_forward(case):
                said += (" Your forward computes in float32 (see forward), and finite differences of a float32 "
                         "function are too rough: compute in float64.")
            return fail(case.where + said, says, figures)
        found = _judge_extra_outputs(view, case)
        if found:
            return found
    return None


def _forward_right(case) -> bool:
    return projections.all_close(case.measured["output"]["values"], case.ref["output"]["values"])


def _float32_forward(case) -> bool:
    mine, right = case.measured["output"]["values"], case.ref["output"]["values"]
    return not projections.all_close(mine, right) and projections.all_close(mine, right, GRADCHECK_RTOL, GRADCHECK_ATOL)


def _judge_extra_outputs(view: Judging, case) -> Finding | None:
    """The outputs after the first of the Function the graded callable wraps: backward must add their
    gradients too (gradcheck tests every output)."""
    params = view.learner("outputs_backward", [])
    for entry in case.measured.get("extra_outputs") or []:
        j = int(entry.get("output", 0))
        param = params[j] if j < len(params) else f"the gradient of output {j}"
        if "error" in entry:
            text, details = error_cause(entry["error"], view, case)
            return fail(case.where + f"with a gradient on output {j} of {view.problem.all_outputs}: " + text, details)
        size = len(entry.get("fd") or [])
        d = projections.directions(view.seed, 1000 * (case.index + 1) + j, size, tuple(case.sizes))
        (vjp,) = [_lists(entry.get("vjp"), case.sizes)]
        (fd,) = _lists([entry.get("fd")], [size])
        analytical = sum(projections.dot(g, u) for g, u in zip(vjp, d.u))
        numerical = projections.dot(d.v, fd)
        if not projections.close(analytical, numerical, *projections.gradcheck_tolerance()):
            arriving = f"{param} (the gradient arriving at output {j} of {view.problem.all_outputs}.forward)"
            if all(x == 0 for g in vjp for x in g):
                how = f"backward ignores {arriving}"
            elif projections.close(analytical, -numerical, *projections.gradcheck_tolerance()):
                how = f"backward adds the term of {arriving} with the wrong sign"
            else:
                how = f"backward's term of {arriving} is wrong"
            return fail(case.where + f"{how}: gradcheck tests every output, and with a gradient on output {j} only, "
                                     f"backward gives vᵀJu = {analytical:.6g} where finite differences of forward "
                                     f"give {numerical:.6g}. The gradient backward returns must include {param} "
                                     f"times the derivative of output {j}: zero in a first backward, that term "
                                     f"carries the second derivatives.")
    return None


def judge_gradgradcheck(view: Judging) -> Finding | None:
    said_by_torch = view.says.get("gradgradcheck")
    says = torch_words("gradgradcheck", said_by_torch) if said_by_torch and said_by_torch != "passed" else ""
    for case in view.cases:
        second = case.measured.get("second")
        if not isinstance(second, dict):
            return fail(case.where + "no second derivatives were measured.")
        if "error" in second:
            text, details = error_cause(second["error"], view, case)
            return fail(case.where + text, details or says, _graphs(view))
        d = case.directions
        inputs = [len(u) for u in d.ux]
        second = dict(second, hvp=_lists(second["hvp"], inputs + [len(d.v)]), fd_x=_lists(second["fd_x"], inputs),
                      fd_v=_lists(second["fd_v"], inputs))
        if not second.get("has_history") or projections.blind(second, d):
            return fail(case.where + blind_cause(view, bool(second.get("has_history"))), says, _graphs(view))
        said, figures = None, []
        if "analytical" in second and "numerical" in second:
            analytical, numerical = _t(second["analytical"]), _t(second["numerical"])
            if analytical.shape != numerical.shape:
                raise ValueError("malformed second derivatives")
            found = second_cause(view, case, analytical, numerical, *projections.gradcheck_tolerance())
            if found:
                said, j = found
                figures = [_second_panels(view, case, analytical, numerical, j)]
        for name, analytical_wu, numerical_wu in ([] if said else projections.gradgradcheck_pairs(second, d)):
            if not projections.close(analytical_wu, numerical_wu, *projections.gradcheck_tolerance()):
                said = (f"Along a random direction of {name}, the second derivatives through autograd of your "
                        f"backward give {analytical_wu:.6g} but finite differences of backward give "
                        f"{numerical_wu:.6g}.")
                break
        if said:
            if _float32_backward(view, case):
                said += (" Your backward computes in float32 (see the note under gradient), and finite differences "
                         "of a float32 backward are too rough: compute in float64.")
            return fail(case.where + said, says, figures + _graphs(view))
    return None


def _float32_backward(view: Judging, case) -> bool:
    vjps, right = case.vjps(), _reference_vjps(view.problem, view.seed, case.index)
    return not all(projections.all_close(a, b) for a, b in zip(vjps, right)) \
        and all(projections.all_close(a, b, GRADCHECK_RTOL, GRADCHECK_ATOL) for a, b in zip(vjps, right))


def _second_panels(view: Judging, case, analytical: torch.Tensor, numerical: torch.Tensor, j: int) -> Figure:
    """wᵀ(second derivatives) over the columns of block j (an input, or grad_output), shaped like it: how
    a random weighting w of backward's result changes with that tensor, through autograd of backward and by
    finite differences of backward."""
    sizes = case.sizes + [case.rows]
    shapes = case.shapes + [case.out_shape]
    names = case.tensor_names + [view.grad_output]
    start = sum(sizes[:j])
    w = _t([x for part in case.directions.w for x in part])
    mine = (w @ analytical[:, start:start + sizes[j]]).tolist()
    right = (w @ numerical[:, start:start + sizes[j]]).tolist()
    return shaped_panels(f"How backward's result changes with {names[j]} (weighted by a random w): through "
                         f"autograd of your backward, by finite differences of it, and the difference",
                         shapes[j], names[j], [("autograd of backward", mine), ("finite differences", right)],
                         f"the second derivatives with respect to {names[j]}")


# -- the companion Function ----------------------------------------------------------------------------

def measure_companion(problem, obj, namespace: dict, encoded_cases: list, seed: int) -> dict:
    """Which custom Functions the graph of the gradient (create_graph=True) goes through: Cube's gradient
    must be the output of CubeBackward.apply."""
    from autograder.measure.probe import _T, _call, _grad, _is_tensor, _make, _view, decode_args, error_data

    companion = namespace.get(problem.companion)
    try:
        args = decode_args(encoded_cases[-1])
        tensors = [a for a in args if _is_tensor(a)]
        out = _view(_call(problem, obj, args))
        grads = _grad(out, tensors, _make(list(out.shape), [1.0] * out.numel(), False), create_graph=True,
                      allow_unused=True)
        seen, todo, found, uses = set(), [_view(g).grad_fn for g in grads if g is not None], [], False
        while todo and len(seen) < 500:
            fn = todo.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            cls = getattr(fn, "_forward_cls", None)
            if _T.isinstance(cls, type):
                uses = uses or cls is companion
                found.append(str(getattr(cls, "__name__", "?"))[:40])
            todo.extend(parent for parent, _ in getattr(fn, "next_functions", ()))
        return {"uses": uses, "functions": sorted(set(found))[:10]}
    except BaseException as error:  # noqa: BLE001 - student code failing is data
        return {"error": error_data(error, "backward")}


def judge_companion(view: Judging) -> Finding | None:
    companion, name = view.problem.companion, view.lookup
    measured = (view.data.get("checks") or {}).get("companion used")
    if not isinstance(measured, dict):
        return fail(f"Whether {name}'s gradient goes through {companion} could not be measured.")
    if "error" in measured:
        text, details = error_cause(measured["error"], view, view.cases[0])
        return fail(f"{name}'s gradient could not be built with create_graph=True: {text}", details)
    if not measured.get("uses"):
        functions = [f for f in measured.get("functions") or [] if isinstance(f, str)]
        found = f" (the Functions it goes through: {', '.join(functions)})" if functions else ""
        return fail(f"{name}'s gradient does not go through {companion}{found}: {name}.backward computes it itself, "
                    f"or calls {companion}.forward by hand. The exercise is to return {companion}.apply(...) from "
                    f"{name}.backward, so that autograd records a {companion} node and {companion}.backward gives "
                    f"the second derivatives.", figures=_graphs(view))
    return None


# -- lesson 7's APIs ----------------------------------------------------------------------------------

def _judge_extra(check: str) -> Callable[[Judging], Finding | None]:
    def judge(view: Judging) -> Finding | None:
        results = (view.data.get("extra") or {}).get(check)
        if not results:
            return fail(f"No {check} result came back for {view.lookup}.")
        for case, result in zip(view.cases, results):
            if "error" in result:
                text, details = error_cause(result["error"], view, case)
                return fail(case.where + text, details)
            said = _explain_extra(view, check, result, case)
            if said:
                return fail(case.where + said[0], said[1], said[2])
        return None

    return judge


def _explain_extra(view: Judging, check: str, result: dict, case):
    problem = view.problem
    encoded = _encoded(problem, view.seed)[case.index]
    tensors = [(n, a) for n, a in zip(case.names, encoded) if probing.differentiable(a)]
    if check == "forward mode":
        sizes = [len(a["values"]) for _, a in tensors]
        mine, right = _matrices(result["jacobian"], sizes, case.rows), _matrices(case.ref["jacobian"], sizes, case.rows)
        for (name, a), m, r in zip(tensors, mine, right):
            said = explain(m, r, tuple(a["shape"]), name, f"The Jacobian from forward mode (jvp) with respect to {name}")
            if said:
                return said, "", [jacobian_panels(f"Jacobian with respect to {name}", name, "the output", m, r,
                                                  ("yours (jvp)", "right"))]
        return None
    if check == "vmap":
        (name, a), = tensors
        x = _t(a["values"]).reshape(a["shape"])
        batch = torch.stack([x, 2 * x, -x])
        want = torch.stack([problem.reference(t) for t in batch])
        got = result["batched"]
        if got["shape"] != list(want.shape):
            said = (f"vmap over a batch of 3 gave shape {got['shape']} instead of {list(want.shape)}: the vmap rule "
                    f"must put the batch dimension first.")
            return said, "", []
        said = explain(_t([got["values"]]), want.reshape(1, -1), tuple(want.shape), "the batch",
                       "The output under torch.func.vmap")
        if said:
            return said, "", []
        xg = x.clone().requires_grad_()
        (want_grad,) = torch.autograd.grad(problem.reference(xg).sum(), xg)
        said = explain(_t([result["grad"]["values"]]), want_grad.reshape(1, -1), tuple(want_grad.shape), name,
                       "The gradient from torch.func.grad")
        return (said, "", []) if said else None
    report = {str(k): str(v) for k, v in result["report"].items()}
    failed = {k: v for k, v in report.items() if v != "SUCCESS"}
    if failed:
        first = next(iter(failed))
        return (f"torch.library.opcheck's {first} fails: {failed[first].splitlines()[0][:300]}",
                "\n\n".join(f"{k}: {v}" for k, v in report.items()), [])
    return None


# -- the registry ----------------------------------------------------------------------------------------

def _has(attribute: str) -> Callable[[Any], bool]:
    return lambda problem: bool(getattr(problem, attribute, None))


def _several_tensors(problem) -> bool:
    return getattr(problem, "tensor_inputs", 0) > 1


def _extra(check: str) -> Callable[[Any], bool]:
    return lambda problem: check in problem.extra_checks


ALL: list[Check] = [
    Check("is a Function", "the name is defined and is what the problem asks for", 0, judge_is_function),
    Check("forward", "forward returns a tensor of the right shape, dtype and values", 2, judge_forward, "forward"),
    Check("inputs unchanged", "forward leaves its inputs as they were (or says it changed them with "
          "ctx.mark_dirty)", 1, judge_inputs_unchanged, "forward"),
    Check("backward returns", "backward returns one value per forward input: a gradient shaped like each tensor "
          "input, None for the others", 1, judge_backward_returns, "backward"),
    Check("gradient", "the gradients (vector-Jacobian products) equal the reference's", 3, judge_gradient, "backward"),
    Check("needs_input_grad", "the gradients stay right when some inputs need no gradient "
          "(ctx.needs_input_grad)", 1, judge_needs_input_grad, "backward", requires=("gradient",),
          applies=_several_tensors),
    Check("grad_output unchanged", "backward leaves the grad_output it is given as it was", 1,
          judge_grad_output_unchanged, "backward"),
    Check("save_for_backward", "tensors kept for backward go through ctx.save_for_backward, not attributes of ctx",
          1, judge_save_for_backward, "forward", applies=_has("saves")),
    Check("gradcheck", "the analytical Jacobian agrees with finite differences (float64)", 3, judge_gradcheck,
          "backward"),
    Check("companion used", ("backward calls the companion Function through apply, so that it appears in the "
                             "graph of the gradient"), 2, judge_companion, "second", applies=_has("companion"), measure=measure_companion),
    Check("gradgradcheck", "the second derivatives agree with finite differences of backward (float64)", 2,
          judge_gradgradcheck, "second", requires=("gradient", "gradcheck"), applies=_has("double_backward")),
    Check("forward mode", "forward-mode AD (the jvp staticmethod) gives the right Jacobian", 2,
          _judge_extra("forward mode"), "extra", requires=("forward",), applies=_extra("forward mode"), extra=True),
    Check("vmap", "torch.func.vmap and torch.func.grad over the Function give the right values", 2,
          _judge_extra("vmap"), "extra", requires=("forward", "gradient"), applies=_extra("vmap"), extra=True),
    Check("opcheck", "torch.library.opcheck finds the custom op registered correctly", 2, _judge_extra("opcheck"),
          "extra", applies=_extra("opcheck"), extra=True),
]
BY_NAME = {c.name: c for c in ALL}
EXTRA = tuple(c.name for c in ALL if c.extra)
_MEASURING = tuple(c for c in ALL if c.measure is not None)  # what a worker may run: fixed at import


def add_check(check: Check, before: str | None = None) -> None:
    """Adds a check (an instructor's own, from a private file): it applies to the problems its `applies`
    accepts, and is reported before the check named `before` (at the end otherwise). It judges from the
    measurements every problem gets (judge.Judging); a check that needs calls of its own is added here,
    with a `measure`, since grading workers start before any private file is read."""
    if check.name in BY_NAME:
        raise ValueError(f"add_check: there is already a check called {check.name!r}.")
    position = next((i for i, c in enumerate(ALL) if c.name == before), len(ALL))
    ALL.insert(position, check)
    BY_NAME[check.name] = check


def measurements(problem) -> dict[str, list[tuple[str, Callable]]]:
    """The checks of a problem that measure something of their own, by the part they follow."""
    found: dict[str, list[tuple[str, Callable]]] = {}
    for check in _MEASURING:
        if check.name in problem.checks:
            found.setdefault(check.part, []).append((check.name, check.measure))
    return found
