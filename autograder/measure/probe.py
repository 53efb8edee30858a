"""Measures a student's Function and returns raw numbers only: no comparison, no verdict.

It runs where the student's code runs (a grading worker, or the notebook for the inline check): `measure`
measures a problem in parts through random projections, `measure_in_full` measures in full what the
grader asks (autograder/judge/plan.py decides that, from the reference's answers this side never sees).
What it returns is plain data (lists, numbers, strings; read through contract.py) that autograder/judge/
checks against the reference in a clean process. PyTorch is called through the entry points captured
before any student code ran (captured.py); in a grading worker, whatever a call into the submission
patched is put back before the next measurement (snapshot.py). This stops patching; it cannot stop code
that shares the process from forging numbers outright (see autograder/sandbox/).
"""

from __future__ import annotations

import contextlib
from typing import Any

from autograder.measure.backward import backward_case, torch_checks, worth_quoting
from autograder.measure.captured import T
from autograder.measure.encoding import graph_case
from autograder.measure.forward import RecordingBackward, forward_case
from autograder.measure.in_full import backward_graph, case_in_full
from autograder.measure.modern import measure_extra
from autograder.measure.projections import directions_of
from autograder.measure.saved_names import guarded_names, saved_names, unpacked_names
from autograder.measure.second import second_projections
from autograder.measure.snapshot import guard
from autograder.measure.spec import Spec


def _function_of(problem, namespace: dict) -> tuple[Any, dict]:
    """The submission's object for a problem, and what the judge needs to know about it."""
    obj = namespace.get(problem.lookup)
    data: dict[str, Any] = {"defined": obj is not None, "kind": describe_kind(obj),
                            "also": {n: describe_kind(namespace.get(n)) for n in problem.also_functions}}
    if obj is None or (problem.kind == "function" and data["kind"] != "Function") \
            or (problem.kind == "callable" and not callable(obj)):
        return None, data
    return obj, data


def _parameters(function: Any, skip: int) -> tuple[list[str], list[str]]:
    """A function's positional parameter names after the first `skip`, and those with a default."""
    code = getattr(function, "__code__", None)
    if code is None:
        return [], []
    names = list(code.co_varnames[:code.co_argcount])
    defaults = getattr(function, "__defaults__", None) or ()
    optional = names[len(names) - len(defaults):] if defaults else []
    return [str(n) for n in names[skip:]], [str(n) for n in optional]


def learner_names(problem, obj: Any, namespace: dict) -> dict:
    """The names the learner gave forward's arguments and backward's gradients, so that causes speak of
    `input` and `weight` rather than of the reference's names ("forward", "optional", "backward",
    "outputs_backward"), and those of the tensors saved and unpacked in backward (saved_names.py)."""
    names: dict[str, list[str]] = {}
    with contextlib.suppress(BaseException):
        if problem.kind == "function":
            own_context = (getattr(obj, "setup_context", None)
                           is not getattr(T.Function, "setup_context", None))
            names["forward"], names["optional"] = _parameters(getattr(obj, "forward", None),
                                                              0 if own_context else 1)
            if own_context:  # forward(x) goes with it; forward(ctx, x) is a mistake the judge names
                names["setup_context"], _ = _parameters(getattr(obj, "setup_context", None), 0)
            if getattr(obj, "jvp", None) is not getattr(T.Function, "jvp", None):
                names["jvp"], _ = _parameters(getattr(obj, "jvp", None), 1)
        else:
            names["forward"], names["optional"] = _parameters(obj, 0)
        owner = obj if problem.kind == "function" else namespace.get(problem.all_outputs or "")
        if owner is not None:
            names["backward"], _ = _parameters(getattr(owner, "backward", None), 1)
            names["guarded"] = guarded_names(owner) or []
        if problem.all_outputs:
            names["outputs_backward"] = names.get("backward", [])
        companion = namespace.get(problem.companion) if problem.companion else None
        if companion is not None:
            names["companion"], _ = _parameters(getattr(companion, "forward", None), 1)
        for key, cls in (("", owner), ("companion_", companion)):
            saved = unpacked = None
            if cls is not None:
                saved, unpacked = saved_names(cls, T.Function), unpacked_names(cls)
            if saved is not None and unpacked is not None:
                names[f"{key}saved"], names[f"{key}unpacked"] = saved, unpacked
    guard()
    return {k: [n[:40] for n in v[:12]] for k, v in names.items()}


def measure(problem: Spec, namespace: dict, encoded_cases: list[list[Any]], seed: int = 0,
            report=None) -> dict[str, Any]:
    """Everything the judge needs about one problem in a submission's namespace, through random
    projections (projections.py): no reference is needed or known here. It is measured in parts, in the
    order of spec.PARTS, each followed by the own measurements of the checks that follow it
    (Spec.measurements), and `report(data)` is called before the submission's code runs again after a
    part, so that a part that never finishes costs only the checks that need it (what is done after its
    last call is told by the data returned). Which failures deserve to be measured in full is decided by
    the grader (autograder/judge/plan.py), which then asks for `measure_in_full`."""
    obj, data = _function_of(problem, namespace)
    if obj is None:
        return data
    _reset_torch()
    guard()
    data["names"] = learner_names(problem, obj, namespace)
    data["parts"] = []
    recorded: list[Any] = []
    backward_owner = (obj if problem.kind == "function"
                      else namespace.get(next(iter(problem.also_functions), "")))
    own = problem.measurements()
    untold = False  # a part is done that the grader has not been told of

    def done(part: str) -> None:
        nonlocal untold
        for check, measure_check in own.get(part, []):  # each check's own calls, after the part it follows
            before_calls()
            data.setdefault("checks", {})[check] = measure_check(problem, obj, namespace, encoded_cases, seed)
        data["parts"].append(part)
        untold = True

    def before_calls() -> None:
        """Tells the measurement so far before the submission's code is called again (it may never
        return): once for all the calls up to the next part."""
        nonlocal untold
        if untold and report is not None:
            report(data)
        untold = False

    with RecordingBackward(backward_owner, recorded):
        data["cases"] = cases = [forward_case(problem, obj, case) for case in encoded_cases]
        done("forward")
        for i, (case, encoded) in enumerate(zip(cases, encoded_cases)):
            if "output" in case and case["output"].get("type") == "Tensor":
                before_calls()
                backward_case(problem, obj, namespace, encoded, seed, i, recorded, case)
        done("backward")
    # no more recording of backward from here: only backward_case reads it, and PyTorch's gradcheck calls
    # backward once per output entry, each under a mode counting its torch operations (a wrong
    # submission's gradcheck: 150 calls, a tenth of its time)
    if problem.double_backward:
        d_cases = [(i, c) for i, c in enumerate(cases) if "vjp" in c]
        for i, case in d_cases:
            before_calls()
            case["second"] = second_projections(problem, obj, encoded_cases[i], directions_of(case, seed, i))
    done("second")
    # torch's words are for the first case: worth running only where that case disagrees
    if worth := worth_quoting(problem, cases[:1], seed):
        before_calls()
        if says := torch_checks(problem, obj, encoded_cases[0], seed, worth):
            data["torch_says"] = says
    done("torch")
    if problem.extra_checks:
        before_calls()
        data["extra"] = measure_extra(problem, obj, encoded_cases)
    done("extra")
    return data


def measure_in_full(problem, namespace: dict, encoded_cases: list[list[Any]], seed: int, measured: dict,
            plan: Any) -> dict:
    """What `plan` asks for, measured in full: whole Jacobians of the failing cases and the graph of the
    student's backward, as {"cases": {index: found}, "graph": ...}."""
    obj, _ = _function_of(problem, namespace)
    cases = measured.get("cases") or []
    found: dict[str, Any] = {"cases": {}, "graph": None}
    if obj is None or not isinstance(plan, dict):
        return found
    _reset_torch()
    guard()
    for entry in plan.get("cases", [])[:2]:
        try:
            i, first, second = int(entry[0]), bool(entry[1]), bool(entry[2])
            case = cases[i]
            found["cases"][str(i)] = case_in_full(problem, obj, encoded_cases[i], seed, i, first, second,
                                                  case)
        except (IndexError, TypeError, ValueError, KeyError):
            continue
    if found["cases"]:
        names = ((measured.get("names") or {}).get("forward") if isinstance(measured.get("names"), dict)
                 else None)
        found["graph"] = backward_graph(problem, obj, encoded_cases[graph_case(encoded_cases)], names)
    return found


def describe_kind(obj: Any) -> str:
    if obj is None:
        return "missing"
    if T.isinstance(obj, type) and T.issubclass(obj, T.Function):
        return "Function"
    if T.isinstance(obj, type):
        return "class"
    if T.isinstance(obj, T.Function):
        return "instance"  # of a Function class: Exp = ExpFunction()
    return "callable" if callable(obj) else T.type(obj).__name__


def _reset_torch() -> None:
    """Global settings a submission may have changed at import do not make its answer wrong."""
    T.set_grad_enabled(True)
    T.set_default_dtype(T.float32)
    T.set_detect_anomaly(False)
