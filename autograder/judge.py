"""Turns a probe's raw numbers into verdicts, scores and explanations, against the reference.

This runs in the trusted process only: the reference is measured here with PyTorch's own operations,
and every comparison is made here on tensors rebuilt from plain data.
"""

from __future__ import annotations

import inspect
import traceback
from dataclasses import dataclass, field
from functools import cache
from types import SimpleNamespace
from typing import Any

import torch

from autograder import probe as probing
from autograder import projections
from autograder.diagnose import explain, explain_error, explain_swap
from autograder.problems import Problem
from autograder.projections import GRADCHECK_ATOL, GRADCHECK_RTOL


@dataclass
class Figure:
    """A picture to draw with the explanation: heat maps of matrices, or autograd graphs."""

    kind: str  # "heatmaps" or "graphs"
    title: str
    panels: list[tuple[str, Any]]  # (caption, matrix as nested lists | Graph dict)


@dataclass
class CheckResult:
    problem: str
    check: str
    passed: bool
    max_score: float
    message: str = ""
    details: str = ""
    figures: list[Figure] = field(default_factory=list)
    hidden: bool = False

    @property
    def name(self) -> str:
        return f"{self.problem}: {self.check}"

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0


class Verdicts:
    """Collects one result per check; the first failure of a check is the one explained."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.failures: dict[str, tuple[str, str, list[Figure]]] = {}

    def fail(self, check: str, message: str, details: str = "", figures: list[Figure] | None = None) -> None:
        if check in self.problem.checks and check not in self.failures:
            self.failures[check] = (message, details, figures or [])

    def fail_all(self, message: str, details: str = "", checks: list[str] | None = None) -> None:
        for check in checks or self.problem.checks:
            self.fail(check, message, details)

    def results(self, passed_details: dict[str, str]) -> list[CheckResult]:
        out = []
        hints = getattr(self.problem, "hints", {}) or {}
        for check in self.problem.checks:
            message, details, figures = self.failures.get(check, ("", passed_details.get(check, ""), []))
            if check in self.failures and hints.get(check):
                message = f"{message} {hints[check]}".strip()
            out.append(CheckResult(self.problem.name, check, check not in self.failures,
                                   self.problem.points[check], message, details, figures,
                                   self.problem.hidden or check in self.problem.hidden_checks))
        return out


def input_names(problem: Problem) -> list[str]:
    try:
        return list(inspect.signature(problem.reference).parameters)
    except (TypeError, ValueError):
        count = max(len(c.args) for c in problem.cases)
        return ["x"] if count == 1 else [f"input{i + 1}" for i in range(count)]


def encoded_cases(problem: Problem, seed: int = 0) -> list[list[Any]]:
    return [probing.encode_args(problem.inputs(i, seed), problem.kwargs(i)) for i in range(len(problem.cases))]


@cache
def _encoded(problem: Problem, seed: int) -> list[list[Any]]:
    """encoded_cases, once: the judge only reads them."""
    return encoded_cases(problem, seed)


@cache
def reference_data(problem: Problem, seed: int = 0) -> dict:
    """The reference's outputs and whole Jacobians, with PyTorch's own autograd, and its graph."""
    obj = SimpleNamespace(apply=problem.reference) if problem.kind == "function" else problem.reference
    cases = _encoded(problem, seed)
    return {"cases": [probing.reference_case(problem, obj, c) for c in cases],
            "graph": probing.backward_graph(problem, obj, cases[0])}


def _sizes(encoded: list[Any]) -> list[int]:
    return [len(a["values"]) for a in encoded if probing.differentiable(a)]


@cache
def _reference_vjps(problem: Problem, seed: int, index: int) -> list[list[list[float]]]:
    """vᵀJ and v2ᵀJ of the reference, along the vectors a student's case of the same output size is
    projected on (shared: not to be changed)."""
    ref, sizes = reference_data(problem, seed)["cases"][index], _sizes(_encoded(problem, seed)[index])
    rows = len(ref["output"]["values"])
    d = projections.directions(seed, index, rows, tuple(sizes))
    jacobian = _matrices(ref["jacobian"], sizes, rows)
    return [[(_t(v) @ jac).tolist() for jac in jacobian] for v in (d.v, d.v2)]


@cache
def expectations(problem: Problem, seed: int = 0) -> list[dict]:
    """Per case, the reference's vector-Jacobian products, which the probe compares a student's with to
    decide what to measure in full (probe.probe's `expected`)."""
    return [{"vjps": _reference_vjps(problem, seed, i)} for i in range(len(problem.cases))]


def _t(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def _matrices(jac: list, sizes: list[int], rows: int) -> list[torch.Tensor]:
    """Validated (rows x size) float64 matrices from untrusted nested lists."""
    out = []
    for block, size in zip(jac, sizes):
        m = _t(block) if rows and size else torch.zeros(rows, size, dtype=torch.float64)
        if m.shape != (rows, size):
            raise ValueError("malformed Jacobian")
        out.append(m)
    if len(out) != len(sizes):
        raise ValueError("malformed Jacobian")
    return out


def _heatmaps(title: str, left: tuple[str, torch.Tensor], right: tuple[str, torch.Tensor]) -> Figure:
    return Figure("heatmaps", title, [(left[0], left[1].tolist()), (right[0], right[1].tolist()),
                                      ("difference", (left[1] - right[1]).tolist())])


def judge(problem: Problem, data: dict, seed: int = 0) -> list[CheckResult]:
    """Every check of the problem, from the probe's data of one submission."""
    verdicts = Verdicts(problem)
    passed_details: dict[str, str] = {}
    try:
        _judge(problem, data, reference_data(problem, seed), seed, verdicts, passed_details)
    except (ValueError, TypeError, KeyError, IndexError, RuntimeError) as error:
        verdicts.fail_all(f"The grader could not read what {problem.lookup} produced ({error}); it is "
                          f"treated as wrong. Make sure it returns plain float64 tensors.", traceback.format_exc())
    return verdicts.results(passed_details)


def _judge(problem: Problem, data: dict, reference: dict, seed: int, verdicts: Verdicts,
           passed: dict[str, str]) -> None:
    name = problem.lookup
    if not data.get("defined"):
        verdicts.fail_all(f"{name} is not defined in the submission: define it with exactly this name "
                          f"(names are case-sensitive).")
        return
    want = "Function" if problem.kind == "function" else "callable"
    kind = data.get("kind")
    if (want == "Function" and kind != "Function") or (want == "callable" and kind not in ("callable", "Function")):
        verdicts.fail_all(f"{name} is a {kind}, but the problem asks for "
                          f"{'a subclass of torch.autograd.Function' if want == 'Function' else 'a function'}.")
        return
    for other, other_kind in data.get("also", {}).items():
        if other_kind != "Function":
            verdicts.fail("is a Function", f"{other} must be a subclass of torch.autograd.Function too "
                                           f"(it is {'missing' if other_kind == 'missing' else 'a ' + other_kind}).")
    names = input_names(problem)
    says = data.get("torch_says", {})
    for check in ("gradcheck", "gradgradcheck"):
        if check in says:
            passed[check] = f"torch.autograd.{check} says: {says[check]}"
    student_graph, reference_graph = data.get("graph"), reference.get("graph")
    graphs = [Figure("graphs", "the graph of backward, built with create_graph=True",
                     [("yours", student_graph), ("reference", reference_graph)])] if student_graph else []

    if problem.extra_checks:
        _judge_extra(problem, data.get("extra", {}), reference, verdicts)
    for i, (case, ref) in enumerate(zip(data["cases"], reference["cases"])):
        where = f"For inputs {problem.cases[i].describe()}: "
        tensor_names = [n for n, k in zip(names, case["arg_kinds"]) if k == "Tensor"]
        encoded = _encoded(problem, seed)[i]
        if "error" in case:
            text = explain_error(case["error"])
            verdicts.fail_all(where + text, case["error"].get("traceback", ""),
                              [c for c in problem.checks if c != "is a Function"])
            continue
        out, ref_out = case["output"], ref["output"]
        if out.get("type") != "Tensor":
            verdicts.fail_all(where + f"{name} returned a {out.get('type')}, not a Tensor"
                              + (" (call Sinh.apply(x)[0]: the wrapper returns only the first output)."
                                 if problem.kind == "callable" else "."),
                              checks=[c for c in problem.checks if c != "is a Function"])
            continue
        if out["shape"] != ref_out["shape"]:
            verdicts.fail("forward", where + f"forward returned shape {out['shape']} but the right output has "
                                             f"shape {ref_out['shape']}.")
        elif out["dtype"] != "torch.float64":
            verdicts.fail("forward", where + f"forward returned {out['dtype']} for float64 inputs: keep the "
                                             f"input's dtype (no .float(), no new float32 tensors).")
        elif not projections.all_close(_lists([out["values"]], [len(ref_out["values"])])[0], ref_out["values"],
                                       *problem.rtol_atol):
            shape = tuple(out["shape"])
            actual, expected = _t([out["values"]]), _t([ref_out["values"]])
            rtol, atol = problem.rtol_atol
            said = explain(actual, expected, shape, "the output", "The output", rtol=rtol, atol=atol) \
                or "The output differs from the right one."
            if said:
                verdicts.fail("forward", where + said,
                              figures=[_heatmaps("forward output", ("yours", actual), ("reference", expected))])
        if not out.get("has_grad_fn") and "backward_error" not in case:
            verdicts.fail_all(where + f"{name}'s output has no grad_fn, so no gradient can flow back through it.",
                              checks=["backward returns", "gradient", "gradcheck", "gradgradcheck"])
            continue
        if "backward_error" in case:
            text = explain_error(case["backward_error"])
            verdicts.fail_all(where + text, case["backward_error"].get("traceback", ""),
                              ["backward returns", "gradient", "gradcheck", "gradgradcheck"])
            continue
        _judge_returns(case, encoded, names, where, verdicts)
        sizes, shapes = _sizes(encoded), [tuple(a["shape"]) for a in encoded if probing.differentiable(a)]
        d = projections.directions(seed, i, len(out["values"]), tuple(sizes))
        vjps = [_lists(case[key], sizes) for key in ("vjp", "vjp2")]
        fit = _Fit(names=tensor_names, sizes=sizes, shapes=shapes, rows=len(out["values"]), where=where,
                   tol=problem.rtol_atol, gtol=problem.gradcheck_rtol_atol)
        if len(out["values"]) != len(ref_out["values"]):
            verdicts.fail("gradient", where + f"forward's output has {len(out['values'])} entries where the right "
                                              f"one has {len(ref_out['values'])}, so its gradients cannot be "
                                              f"the reference's.")
        else:
            _judge_gradient(case, ref, vjps, _reference_vjps(problem, seed, i), fit, verdicts, graphs)
        _judge_gradcheck(case, vjps, d, fit, verdicts, says)
        if problem.double_backward:
            _judge_second(case.get("second", {}), d, where, verdicts, says, graphs, problem.gradcheck_rtol_atol)


@dataclass
class _Fit:
    """How one case's numbers are laid out: the tensor inputs' names, sizes and shapes, output entries."""

    names: list[str]
    sizes: list[int]
    shapes: list[tuple[int, ...]]
    rows: int
    where: str
    tol: tuple[float, float] = (projections.RTOL, projections.ATOL)  # against the reference
    gtol: tuple[float, float] = (GRADCHECK_RTOL, GRADCHECK_ATOL)  # against finite differences


def _lists(values: Any, sizes: list[int]) -> list[list[float]]:
    """Untrusted lists of numbers, one per tensor input, checked against the inputs' sizes."""
    if not isinstance(values, list) or len(values) != len(sizes) \
            or any(not isinstance(v, list) or len(v) != n for v, n in zip(values, sizes)):
        raise ValueError("malformed vector-Jacobian product")
    return [[float(x) for x in v] for v in values]


def _judge_gradient(case: dict, ref: dict, vjps: list[list[list[float]]], ref_vjps: list[list[list[float]]],
                    fit: _Fit, verdicts: Verdicts, graphs: list[Figure]) -> None:
    """Backward against the reference: the whole Jacobians where they were measured (to show them),
    and always both vector-Jacobian products, entry by entry."""
    said, figures = None, []
    if "jacobian" in case:
        jac, ref_jac = _matrices(case["jacobian"], fit.sizes, fit.rows), _matrices(ref["jacobian"], fit.sizes, fit.rows)
        said, bad = _explain_blocks(jac, ref_jac, fit)
        if said:
            figures = [_heatmaps(f"Jacobian with respect to {fit.names[bad]} (rows: output entries, columns: "
                                 f"{fit.names[bad]} entries)", ("yours (from backward)", jac[bad]),
                                 ("reference", ref_jac[bad]))]
    for vjp, ref_vjp in zip(vjps, ref_vjps):  # vᵀJ locates a wrong entry of the input as well as J does
        if not said and not projections.all_close(vjp, ref_vjp, *fit.tol):
            said, _ = _explain_blocks([_t([g]) for g in vjp], [_t([g]) for g in ref_vjp], fit)
            said = said or "The vector-Jacobian products from backward differ from the reference's."
    if said:
        verdicts.fail("gradient", fit.where + said, figures=figures + graphs)


def _explain_blocks(mine: list[torch.Tensor], right: list[torch.Tensor], fit: _Fit) -> tuple[str | None, int]:
    said = explain_swap(mine, right, fit.names)
    for k in range(len(mine)):
        if said:
            return said, k
        said = explain(mine[k], right[k], fit.shapes[k], fit.names[k], f"The gradient with respect to {fit.names[k]}",
                       rtol=fit.tol[0], atol=fit.tol[1])
    return said, len(mine) - 1


def _judge_gradcheck(case: dict, vjps: list[list[list[float]]], d: projections.Directions, fit: _Fit,
                     verdicts: Verdicts, says: dict) -> None:
    """Backward against finite differences of the student's own forward: vᵀJu, as gradcheck's fast
    mode compares them, and the whole matrices where they were measured."""
    if "fd" not in case:
        verdicts.fail("gradcheck", fit.where + explain_error(case["numerical_error"]))
        return
    (fd,) = _lists([case["fd"]], [fit.rows])
    said, figures = None, []
    if "jacobian" in case and "numerical" in case:
        jac = _matrices(case["jacobian"], fit.sizes, fit.rows)
        numeric = _matrices(case["numerical"], fit.sizes, fit.rows)
        for k in range(len(jac)):
            said = explain(jac[k], numeric[k], fit.shapes[k], fit.names[k],
                           f"The analytical Jacobian (from backward) with respect to {fit.names[k]}",
                           rtol=fit.gtol[0], atol=fit.gtol[1])
            if said:
                said = said.replace("the right one", "the numerical one (finite differences of forward)")
                figures = [_heatmaps(f"Jacobian with respect to {fit.names[k]}", ("analytical (backward)", jac[k]),
                                     ("numerical (finite differences)", numeric[k]))]
                break
    if not said:
        for analytical, numerical in projections.gradcheck_pairs(vjps, fd, d):
            if not said and not projections.close(analytical, numerical, *fit.gtol):
                said = (f"Along a random direction u, backward gives vᵀJu = {analytical:.6g} but finite differences "
                        f"of forward give {numerical:.6g}: backward does not compute the derivative of forward.")
    if said:
        verdicts.fail("gradcheck", fit.where + said, says.get("gradcheck", ""), figures)


def _judge_extra(problem: Problem, extra: dict, reference: dict, verdicts: Verdicts) -> None:
    """Lesson 7's checks: forward mode against the reference Jacobian, vmap/grad against the reference
    applied sample by sample, and opcheck's own report."""
    names = input_names(problem)
    for check in problem.extra_checks:
        results = extra.get(check)
        if not results:
            verdicts.fail(check, f"No {check} result came back for {problem.lookup}.")
            continue
        for i, (result, ref) in enumerate(zip(results, reference["cases"])):
            where = f"For inputs {problem.cases[i].describe()}: "
            if "error" in result:
                verdicts.fail(check, where + explain_error(result["error"]), result["error"].get("traceback", ""))
                break
            said = _explain_extra(problem, check, result, ref, encoded_cases(problem)[i], names)
            if said:
                verdicts.fail(check, where + said[0], said[1], said[2])
                break


def _explain_extra(problem: Problem, check: str, result: dict, ref: dict, encoded: list, names: list[str]):
    tensors = [(n, a) for n, a in zip(names, encoded) if probing.differentiable(a)]
    if check == "forward mode":
        sizes = [len(a["values"]) for _, a in tensors]
        rows = len(ref["output"]["values"])
        mine, right = _matrices(result["jacobian"], sizes, rows), _matrices(ref["jacobian"], sizes, rows)
        for (name, a), m, r in zip(tensors, mine, right):
            said = explain(m, r, tuple(a["shape"]), name, f"The Jacobian from forward mode (jvp) with respect to {name}")
            if said:
                return said, "", [_heatmaps(f"Jacobian with respect to {name}", ("yours (jvp)", m), ("reference", r))]
        return None
    if check == "vmap":
        (name, a), = tensors
        x = _t(a["values"]).reshape(a["shape"])
        batch = torch.stack([x, 2 * x, -x])
        want = torch.stack([problem.reference(t) for t in batch])
        got = result["batched"]
        if got["shape"] != list(want.shape):
            return (f"vmap over a batch of 3 gave shape {got['shape']} instead of {list(want.shape)}: the vmap rule "
                    f"must put the batch dimension first.", "", [])
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


def _judge_returns(case: dict, encoded: list[Any], names: list[str], where: str, verdicts: Verdicts) -> None:
    returned = case.get("backward_returns")
    if returned is None:
        return
    encoded = probing.positional(encoded)
    extra = returned[len(encoded):]  # autograd accepts trailing Nones, e.g. for an omitted bias
    if len(returned) < len(encoded) or any(v["kind"] != "None" for v in extra):
        verdicts.fail("backward returns", where + f"backward returned {len(returned)} value(s) for the "
                                                  f"{len(encoded)} input(s) of forward.")
        return
    for k, (value, arg) in enumerate(zip(returned, encoded)):
        label = names[k] if k < len(names) else f"input {k + 1}"
        if isinstance(arg, dict) and not probing.differentiable(arg):
            continue  # a tensor of integers, booleans...: autograd ignores what backward returns for it
        if not isinstance(arg, dict) and value["kind"] != "None":
            verdicts.fail("backward returns", where + f"backward returned a {value['kind']} for {label}, which "
                                                      f"is not a tensor: return None for it.")
        elif isinstance(arg, dict) and value["kind"] == "Tensor" and value["shape"] != arg["shape"]:
            verdicts.fail("backward returns", where + f"the gradient for {label} has shape {value['shape']} but "
                                                      f"{label} has shape {arg['shape']}.")
        elif isinstance(arg, dict) and value["kind"] not in ("Tensor", "None"):
            verdicts.fail("backward returns", where + f"backward returned a {value['kind']} for {label}; "
                                                      f"return a tensor shaped like it.")


def _judge_second(second: dict, d: projections.Directions, where: str, verdicts: Verdicts, says: dict,
                  graphs: list[Figure], gtol: tuple[float, float] = (GRADCHECK_RTOL, GRADCHECK_ATOL)) -> None:
    """Second derivatives through the student's backward against finite differences of that backward,
    along random directions of the inputs and of v; the whole matrices where they were measured."""
    if "error" in second:
        verdicts.fail("gradgradcheck", where + explain_error(second["error"]), says.get("gradgradcheck", ""), graphs)
        return
    inputs = [len(u) for u in d.ux]
    second = dict(second, hvp=_lists(second["hvp"], inputs + [len(d.v)]), fd_x=_lists(second["fd_x"], inputs),
                  fd_v=_lists(second["fd_v"], inputs))
    if not second.get("has_history") or projections.blind(second, d):
        verdicts.fail("gradgradcheck", where + (
            "backward's result has no autograd history linking it to the inputs, so autograd sees "
            "second derivatives of zero where finite differences do not: backward used values autograd cannot see (tensors "
            "stashed on ctx instead of save_for_backward, NumPy, .detach() or torch.no_grad()). Save "
            "inputs and outputs with save_for_backward, return intermediates as extra outputs (as Sinh "
            "does), and compute backward with torch operations."), says.get("gradgradcheck", ""), graphs)
        return
    said, figures = None, []
    if "analytical" in second and "numerical" in second:
        analytical, numerical = _t(second["analytical"]), _t(second["numerical"])
        if analytical.shape != numerical.shape:
            raise ValueError("malformed second derivatives")
        said = explain(analytical, numerical, (analytical.shape[1],), "the inputs and grad_output",
                       "The matrix of second derivatives (autograd through your backward)",
                       rtol=gtol[0], atol=gtol[1])
        if said:
            said = said.replace("the right one", "the numerical one (finite differences of backward)")
            figures = [_heatmaps("second derivatives (rows: gradient entries, columns: inputs then grad_output)",
                                 ("analytical", analytical), ("numerical", numerical))]
    for name, analytical_wu, numerical_wu in ([] if said else projections.gradgradcheck_pairs(second, d)):
        if not projections.close(analytical_wu, numerical_wu, *gtol):
            said = (f"Along a random direction of {name}, the second derivatives through autograd of your backward "
                    f"give {analytical_wu:.6g} but finite differences of backward give {numerical_wu:.6g}.")
            break
    if said:
        verdicts.fail("gradgradcheck", where + said, says.get("gradgradcheck", ""), figures + graphs)
