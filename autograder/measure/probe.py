"""Measures a student's Function and returns raw numbers only: no comparison, no verdict.

It runs where the student's code runs (a grading worker, or the notebook for the inline check), so it
uses the PyTorch functions captured in `_T` when this module was imported, before any student code
could patch `torch.autograd.grad`, tensor operators or this module's globals. What it returns is plain
data (lists, numbers, strings) that `judge.py` checks against the reference in a clean process.

In a grading worker, `Snapshot` records the grader's modules, classes and functions before the
submission runs; `guard()` puts back whatever the submission patched (at import, or inside its own
forward and backward) and resets torch's global modes before every measurement that follows.
Tensors a Function returns are read through plain `torch.Tensor` views, so a subclass cannot answer
for them. This stops patching; it cannot stop code that shares the process from forging numbers
outright (see sandbox.py).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import gc
import sys
import traceback
import types
from types import SimpleNamespace
from typing import Any

import torch

from autograder.measure import projections
from autograder.measure.graphs import graph_of
from autograder.measure.projections import EPS

MAX_TEXT = 2000

_T = SimpleNamespace(
    Tensor=torch.Tensor,
    Function=torch.autograd.Function,
    tensor=torch.tensor,
    grad=torch.autograd.grad,
    as_subclass=torch.Tensor.as_subclass,
    detach=torch.Tensor.detach,
    to=torch.Tensor.to,
    reshape=torch.Tensor.reshape,
    tolist=torch.Tensor.tolist,
    requires_grad_=torch.Tensor.requires_grad_,
    no_torch_function=torch._C.DisableTorchFunction,
    set_grad_enabled=torch.set_grad_enabled,
    set_default_dtype=torch.set_default_dtype,
    set_detect_anomaly=torch.autograd.set_detect_anomaly,
    gradcheck=torch.autograd.gradcheck,
    gradgradcheck=torch.autograd.gradgradcheck,
    float64=torch.float64,
    isinstance=isinstance,
    issubclass=issubclass,
    type=type,
    apply=torch.autograd.Function.apply.__func__,
    inference_mode=torch._C._InferenceMode,
    is_inference_mode_enabled=torch.is_inference_mode_enabled,
    set_default_device=torch.set_default_device,
    len_function_modes=torch._C._len_torch_function_stack,
    pop_function_mode=torch._C._pop_torch_function_stack,
    len_dispatch_modes=torch._C._len_torch_dispatch_stack,
    pop_dispatch_mode=torch._C._pop_torch_dispatch_stack,
    saved_hooks=torch._C._autograd._top_saved_tensors_default_hooks,
    pop_saved_hooks=torch._C._autograd._pop_saved_tensors_default_hooks,
    setrecursionlimit=sys.setrecursionlimit,
    no_grad=torch.no_grad,
    fork_rng=torch.random.fork_rng,
    manual_seed=torch.manual_seed,
    float32=torch.float32,
    push_saved_hooks=torch._C._autograd._push_saved_tensors_default_hooks,
    BackwardCFunction=torch.autograd.function.BackwardCFunction,
)


# -- the grader's own state, kept from the submission ------------------------------------------------

_MISSING = object()
_BUILTIN_NAMES = frozenset(vars(builtins))
# Modules whose globals the measurements (and the worker's messages) depend on, patched back before use.
_PROTECTED_PREFIXES = ("autograder", "torch.autograd", "json", "traceback", "linecache", "random",
                       "torch.utils._python_dispatch", "torchviz", "graphviz")
_PROTECTED_MODULES = {"torch", "torch._tensor", "torch.functional", "torch.overrides", "torch._C",
                      "torch._C._autograd", "torch._ops", "torch.library", "builtins", "os", "posix", "sys",
                      "types", "functools", "operator", "math", "copy", "contextlib", "resource", "signal",
                      "selectors", "struct", "ctypes", "errno", "stat", "fcntl", "time"}
# The few looked at again after every call into the submission (cheap enough to do hundreds of times):
# every module of the measuring code, so that nothing a call patched is used by the next measurement.
_HOT_MODULES = ("autograder.measure.probe", "autograder.measure.modern", "autograder.measure.graphs", "autograder.measure.projections",
                "autograder.course.checks", "autograder.sandbox.worker", "autograder.sandbox.protocol", "builtins",
                "torch.autograd", "torch.autograd.function", "torch.autograd.graph", "torch.autograd.gradcheck")
_HOT_CLASSES = (torch.Tensor, torch.autograd.Function)


def _protected(name: str) -> bool:
    return name in _PROTECTED_MODULES or any(name == p or name.startswith(p + ".") for p in _PROTECTED_PREFIXES)


def _version_reader():
    """PEP 509: CPython 3.11 gives every dict a version tag that changes whenever the dict changes, so
    restore() can skip, for one read each, the thousands of entries nobody touched (it runs after every
    call into a submission). None where the layout is not the one checked here: every dict is then
    compared entry by entry."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return None
    offset = 3 * ctypes.sizeof(ctypes.c_ssize_t)  # after ob_refcnt, ob_type and ma_used
    from_address = ctypes.c_uint64.from_address

    def version(d: dict, id=id, from_address=from_address, offset=offset) -> int:
        return from_address(id(d) + offset).value

    test: dict = {}
    seen = [version(test)]
    test["x"] = 1
    seen.append(version(test))
    test["x"] = 2
    seen.append(version(test))
    return version if len(set(seen)) == 3 and version(test) == seen[-1] else None


_VERSION = _version_reader()


def _class_dict(cls: type) -> dict:
    """The dict behind a class's read-only __dict__ view."""
    (inner,) = [d for d in gc.get_referents(cls.__dict__) if isinstance(d, dict)]
    return inner


class _Saved:
    """One group of objects with what they held when the snapshot was taken."""

    def __init__(self, modules, classes, functions, instances):
        self.modules = [(vars(m), dict(vars(m))) for m in modules]
        self.classes = [(c, _class_dict(c), dict(vars(c))) for c in classes]
        self.functions = [(f, f.__code__, f.__defaults__, f.__kwdefaults__) for f in functions]
        self.instances = [(vars(o), dict(vars(o))) for o in instances]
        dicts = [d for d, _ in self.modules] + [d for _, d, _ in self.classes] + [d for d, _ in self.instances]
        self.versions = {id(d): _VERSION(d) for d in dicts} if _VERSION else {}

    # The builtins it needs are bound here, so that patching them (or `_T`) cannot stop the restoring.
    def restore(self, setattr=setattr, delattr=delattr, list=list, any=any, vars=vars, id=id,
                builtin_names=_BUILTIN_NAMES, missing=_MISSING, version=_VERSION) -> None:
        versions = self.versions
        for current, saved in self.modules:
            if version is not None and version(current) == versions[id(current)]:
                continue  # untouched since it was last put right
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    current[key] = value
            for key in [k for k in current if k not in saved and k in builtin_names]:
                del current[key]  # a global that would shadow a builtin
            if version is not None:
                versions[id(current)] = version(current)
        for current, saved in self.instances:
            if version is not None and version(current) == versions[id(current)]:
                continue
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    current[key] = value
            for key in [k for k in current if k not in saved]:
                del current[key]
            if version is not None:
                versions[id(current)] = version(current)
        for cls, current, saved in self.classes:
            if version is not None and version(current) == versions[id(current)]:
                continue
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    setattr(cls, key, value)  # through the class, so that its attribute cache follows
            for key in [k for k in current if k not in saved]:
                if any(key in vars(base) for base in cls.__mro__[1:]):
                    delattr(cls, key)  # an attribute that would shadow an inherited one
            if version is not None:
                versions[id(current)] = version(current)
        for function, code, defaults, kwdefaults in self.functions:
            if function.__code__ is not code:
                function.__code__ = code
            if function.__defaults__ is not defaults:
                function.__defaults__ = defaults
            if function.__kwdefaults__ is not kwdefaults:
                function.__kwdefaults__ = kwdefaults


_HEAPTYPE, _IMMUTABLETYPE = 1 << 9, 1 << 8  # type flags: a class whose attributes can be set


def _contents(modules) -> tuple[list, list, list]:
    """The Python classes, functions and namespaces (SimpleNamespace, JSON coders) these modules hold."""
    import json

    classes, functions, instances, seen = [], [], [], set()
    for module in modules:
        for value in list(vars(module).values()):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, types.FunctionType):
                functions.append(value)
            elif isinstance(value, type):
                if value.__flags__ & _HEAPTYPE and not value.__flags__ & _IMMUTABLETYPE \
                        and str(getattr(value, "__module__", "")).startswith(("torch", "autograder", "json")):
                    classes.append(value)
                    for member in vars(value).values():
                        inner = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                        if isinstance(inner, types.FunctionType):
                            functions.append(inner)
            elif isinstance(value, (SimpleNamespace, json.JSONEncoder, json.JSONDecoder)):
                instances.append(value)
    return classes, functions, instances


class Snapshot:
    """The grader's state before a submission runs, to put back before measuring (grading workers only).

    Taken in the worker before the submission's first cell, so it is what the trusted grader had."""

    def __init__(self):
        modules = [m for n, m in list(sys.modules.items()) if isinstance(m, types.ModuleType) and _protected(n)]
        own = [sys.modules[n] for n in _HOT_MODULES if n in sys.modules and n.startswith("autograder")]
        hot = own + [sys.modules[n] for n in _HOT_MODULES if n in sys.modules and not n.startswith("autograder")]
        classes, functions, instances = _contents(modules)
        _, own_functions, own_instances = _contents(own)
        self.all = _Saved(modules, classes + [c for c in _HOT_CLASSES if c not in classes], functions, instances)
        self.hot = _Saved(hot, _HOT_CLASSES, own_functions, own_instances)
        self.recursion_limit = sys.getrecursionlimit()
        self.keep: list[Any] = []

    def restore(self, everything: bool = True) -> None:
        self.hot.restore()
        if everything:
            self.all.restore()
        _reset_modes(self)


_ACTIVE: list[Snapshot] = []  # the worker's snapshot, once sandbox.py has taken one


def activate(snapshot: Snapshot) -> None:
    _ACTIVE[:] = [snapshot]


def guard() -> None:
    """After every call into the submission: put back what it patched in the grader (workers only)."""
    if _ACTIVE:
        _ACTIVE[0].restore(everything=False)


def _reset_modes(snapshot: Snapshot) -> None:
    """Global modes a submission may have left on: torch function and dispatch modes (which could answer
    for any operation), a default device, inference mode, default saved-tensor hooks."""
    while _T.len_function_modes() > 0:
        _T.pop_function_mode()
    while _T.len_dispatch_modes() > 0:
        _T.pop_dispatch_mode()
    while _T.saved_hooks(False) is not None:
        _T.pop_saved_hooks()
    with contextlib.suppress(Exception):  # older torch: no default device to reset
        _T.set_default_device(None)
    if _T.is_inference_mode_enabled():
        snapshot.keep.append(_T.inference_mode(False))  # kept alive: inference mode stays off
    _T.setrecursionlimit(snapshot.recursion_limit)
    _T.set_grad_enabled(True)
    _T.set_default_dtype(_T.float32)
    _T.set_detect_anomaly(False)


# -- plain data <-> tensors -------------------------------------------------------------------------

# Tensors of another dtype than float64 are passed as they are, constants: no gradient is asked for them.
_DTYPES = {name: getattr(torch, name) for name in ("float64", "float32", "float16", "bfloat16", "int64", "int32",
                                                     "int16", "int8", "uint8", "bool", "complex128")}


def encode_args(args: list[Any], kwargs: dict | None = None) -> list[Any]:
    """Inputs as plain data: tensors become {"shape", "values"} (with "dtype" when it is not float64, the
    differentiable inputs' dtype); other arguments stay as they are; keyword arguments, if any, are a
    last {"kwargs": {...}}."""
    out: list[Any] = []
    for a in args:
        if _T.isinstance(a, _T.Tensor):
            encoded = {"shape": list(a.shape), "values": _T.tolist(_T.reshape(a, (-1,)))}
            if a.dtype != _T.float64:
                encoded["dtype"] = str(a.dtype).removeprefix("torch.")
            out.append(encoded)
        else:
            out.append(a)
    if kwargs:
        out.append({"kwargs": dict(kwargs)})
    return out


def _make(shape: list[int], values: list[float], requires_grad: bool = True) -> torch.Tensor:
    t = _T.reshape(_T.tensor(values, dtype=_T.float64), tuple(shape))
    return _T.requires_grad_(t, requires_grad)


def _is_kwargs(a: Any) -> bool:
    return _T.isinstance(a, dict) and "kwargs" in a and "values" not in a


def differentiable(a: Any) -> bool:
    """An encoded float64 tensor: an input gradients are asked for."""
    return _T.isinstance(a, dict) and "values" in a and a.get("dtype", "float64") == "float64"


def positional(encoded: list[Any]) -> list[Any]:
    """The encoded positional arguments (without the keyword arguments)."""
    return [a for a in encoded if not _is_kwargs(a)]


class Args(list):
    """Decoded positional arguments, with the call's keyword arguments and which are differentiable."""

    kwargs: dict
    inputs: list


def decode_args(encoded: list[Any]) -> Args:
    """Fresh tensors for every call, so that a Function changing its input cannot spoil the next."""
    args, inputs, kwargs = Args(), [], {}
    for a in encoded:
        if _is_kwargs(a):
            kwargs = dict(a["kwargs"])
        elif differentiable(a):
            t = _make(a["shape"], a["values"])
            args.append(t)
            inputs.append(t)
        elif _T.isinstance(a, dict) and "values" in a:
            t = _T.reshape(_T.tensor(a["values"], dtype=_DTYPES[a["dtype"]]), tuple(a["shape"]))
            args.append(t)
        else:
            args.append(a)
    args.kwargs, args.inputs = kwargs, inputs
    return args


def with_kwargs(args: list[Any], like: Any) -> Args:
    """args (e.g. gradcheck's tuple) with the keyword arguments of `like`."""
    out = Args(args)
    out.kwargs, out.inputs = dict(getattr(like, "kwargs", {}) or {}), [a for a in args if _is_tensor(a)]
    return out


def _inputs(args: list[Any]) -> list[Any]:
    """The differentiable inputs among decoded arguments (every tensor, for arguments made elsewhere)."""
    inputs = getattr(args, "inputs", None)
    return list(inputs) if inputs is not None else [a for a in args if _is_tensor(a)]


def plain(t: torch.Tensor) -> dict:
    """A tensor's dtype, shape and float64 values, read past any subclass or __torch_function__."""
    with _T.no_torch_function():
        base = _T.as_subclass(t, _T.Tensor)
        values = _T.tolist(_T.reshape(_T.to(_T.detach(base), _T.float64), (-1,)))
        return {"dtype": str(base.dtype), "shape": list(base.shape), "values": values}


def _is_tensor(x: Any) -> bool:
    return _T.issubclass(_T.type(x), _T.Tensor)  # not isinstance: an object can fake its __class__


def _view(t: torch.Tensor) -> torch.Tensor:
    """A plain torch.Tensor alias of t (same values, same autograd history), so that no subclass or
    __torch_function__ answers for it when its shape, grad_fn or gradient is asked for."""
    with _T.no_torch_function():
        return _T.as_subclass(t, _T.Tensor)


def _call(problem, obj, args: list[Any]) -> Any:
    """Calls the submission through torch's own Function.apply (a class cannot swap it for something
    else), then puts back whatever the call patched in the grader."""
    try:
        kwargs = getattr(args, "kwargs", None) or {}
        if problem.kind == "function" and _T.isinstance(obj, type) and _T.issubclass(obj, _T.Function):
            return _T.apply(obj, *args, **kwargs)
        return problem.call(obj, list(args), kwargs)
    finally:
        guard()


def _grad(outputs, inputs, grad_outputs, **kwargs):
    """torch.autograd.grad on plain views (no subclass can intercept the call); the submission's backward
    runs inside it, so whatever it patched is put back afterwards."""
    try:
        outputs = _view(outputs) if _is_tensor(outputs) else outputs
        return _T.grad(outputs, inputs, grad_outputs, **kwargs)
    finally:
        guard()


def _excluded_prefixes() -> tuple[str, ...]:
    """Where code that is not the learner's lives: torch, this package, Python's own library and the
    installed packages. A traceback shows only the frames outside them."""
    import os
    import sysconfig

    paths = {os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            paths.add(sysconfig.get_paths()[key])
    return tuple(sorted(p.rstrip("/") + "/" for p in paths if p)) + ("<frozen ",)


_EXCLUDED = _excluded_prefixes()


def _shown_file(filename: str) -> str:
    """A frame's file as the learner knows it: a notebook cell rather than IPython's temporary file."""
    if "/ipykernel_" in filename or filename.startswith("<ipython-input"):
        return "<your notebook>"
    return filename


def student_frames(tb) -> list[dict]:
    """The frames of a traceback that run the learner's code, innermost last, as plain data."""
    frames = []
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(_EXCLUDED):
            continue
        frames.append({"file": _shown_file(frame.filename), "line": frame.lineno or 0, "name": frame.name,
                       "code": (frame.line or "").strip()[:200]})
    return frames[-8:]


def error_data(error: BaseException, where: str) -> dict:
    """An exception of student code as plain data: its type, message and the learner's own frames (a
    traceback without torch's or the grader's frames and paths; empty when no frame is the learner's)."""
    frames = student_frames(error.__traceback__)
    message = str(error)[:MAX_TEXT]
    text = ""
    if frames:
        lines = ["Traceback (your code only, most recent call last):"]
        for f in frames:
            lines.append(f'  File "{f["file"]}", line {f["line"]}, in {f["name"]}')
            if f["code"]:
                lines.append(f"    {f['code']}")
        lines.append(f"{_T.type(error).__name__}: {message}")
        text = "\n".join(lines)[-MAX_TEXT:]
    return {"type": _T.type(error).__name__, "message": message, "where": where, "traceback": text,
            "frames": frames}


# -- the measurements --------------------------------------------------------------------------------

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
    "outputs_backward")."""
    names: dict[str, list[str]] = {}
    with contextlib.suppress(BaseException):
        if problem.kind == "function":
            own_context = getattr(obj, "setup_context", None) is not getattr(_T.Function, "setup_context", None)
            names["forward"], names["optional"] = _parameters(getattr(obj, "forward", None), 0 if own_context else 1)
        else:
            names["forward"], names["optional"] = _parameters(obj, 0)
        owner = obj if problem.kind == "function" else namespace.get(problem.all_outputs or "")
        if owner is not None:
            names["backward"], _ = _parameters(getattr(owner, "backward", None), 1)
        if problem.all_outputs:
            names["outputs_backward"] = names.get("backward", [])
    guard()
    return {k: [n[:40] for n in v[:12]] for k, v in names.items()}


def measure(problem, namespace: dict, encoded_cases: list[list[Any]], seed: int = 0, report=None) -> dict:
    """Everything the judge needs about one problem in a submission's namespace, through random
    projections (projections.py): no reference is needed or known here. It is measured in parts, in the
    order of judge.PARTS, and `report(data)` is called after each, so that a part that never finishes
    costs only the checks that need it. Which failures deserve to be measured in full is decided by the
    grader (`explain_plan`), which then asks for `explain`."""
    obj, data = _function_of(problem, namespace)
    if obj is None:
        return data
    _reset_torch()
    guard()
    data["names"] = learner_names(problem, obj, namespace)
    data["parts"] = []
    recorded: list[Any] = []
    backward_owner = obj if problem.kind == "function" else namespace.get(next(iter(problem.also_functions), ""))
    from autograder.course import checks  # already loaded in the clean parent (sandbox/server.py)

    own = checks.measurements(problem)

    def done(part: str) -> None:
        data["parts"].append(part)
        if report is not None:
            report(data)

    with _recording_backward(backward_owner, recorded):
        data["cases"] = cases = [forward_case(problem, obj, case) for case in encoded_cases]
        done("forward")
        for i, (case, encoded) in enumerate(zip(cases, encoded_cases)):
            if "output" in case and case["output"].get("type") == "Tensor":
                backward_case(problem, obj, namespace, encoded, seed, i, recorded, case)
        for check, measure_check in own.get("backward", []):
            data.setdefault("checks", {})[check] = measure_check(problem, obj, namespace, encoded_cases, seed)
        done("backward")
        if problem.double_backward:
            d_cases = [(i, c) for i, c in enumerate(cases) if "vjp" in c]
            for i, case in d_cases:
                case["second"] = second_projections(problem, obj, encoded_cases[i], _directions_of(case, seed, i))
        for check, measure_check in own.get("second", []):
            data.setdefault("checks", {})[check] = measure_check(problem, obj, namespace, encoded_cases, seed)
        done("second")
        data["torch_says"] = torch_checks(problem, obj, encoded_cases[0], seed, _worth_quoting(cases, seed))
        done("torch")
    if problem.extra_checks:
        data["extra"] = measure_extra(problem, obj, encoded_cases)
    done("extra")
    return data


def explain_plan(problem, data: dict, expected: list[dict] | None, seed: int = 0) -> dict | None:
    """Which cases to measure in full, from a first measurement and the reference's vector-Jacobian
    products (`expected`, from judge.expectations; None: explain every failure found without them). Pure
    arithmetic on plain data: the grader runs it, so reference answers never reach a worker. The judge
    explains a check's first failure, so one case in full for each order is enough."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        return None
    plan, explained = [], [False, False]
    for i, case in enumerate(cases):
        expect = None if expected is None or i >= len(expected) else expected[i]
        wanted = _worth_explaining(case, expect, seed, i)
        first, second = (want and not done for want, done in zip(wanted, explained))
        if first or second:
            plan.append([i, first, second])
            explained = [explained[0] or first, explained[1] or second]
    return {"cases": plan} if plan else None


def explain(problem, namespace: dict, encoded_cases: list[list[Any]], seed: int, measured: dict,
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
            found["cases"][str(i)] = explain_case(problem, obj, encoded_cases[i], seed, i, first, second, case)
        except (IndexError, TypeError, ValueError, KeyError):
            continue
    if found["cases"]:
        names = (measured.get("names") or {}).get("forward") if isinstance(measured.get("names"), dict) else None
        found["graph"] = backward_graph(problem, obj, encoded_cases[0], names)
    return found


def with_explanation(measured: dict, found: dict | None) -> dict:
    """The measurement with the failures measured in full merged in (both untrusted: anything malformed
    is left out, and the judge works from the projections alone)."""
    data = dict(measured)
    data.setdefault("graph", None)
    if not isinstance(found, dict) or not isinstance(data.get("cases"), list):
        return data
    cases = [dict(c) if isinstance(c, dict) else c for c in data["cases"]]
    for key, extra in (found.get("cases") or {}).items():
        if str(key).isdigit() and int(key) < len(cases) and isinstance(extra, dict) \
                and isinstance(cases[int(key)], dict):
            cases[int(key)].update({k: v for k, v in extra.items() if k in ("jacobian", "numerical", "second")})
    data["cases"] = cases
    if isinstance(found.get("graph"), dict):
        data["graph"] = found["graph"]
    return data


def probe(problem, namespace: dict, encoded_cases: list[list[Any]], seed: int = 0,
          expected: list[dict] | None = None) -> dict:
    """measure, plan and explain in one process: the inline check(), where the reference is the
    notebook's own business."""
    data = measure(problem, namespace, encoded_cases, seed)
    plan = explain_plan(problem, data, expected, seed)
    found = explain(problem, namespace, encoded_cases, seed, data, plan) if plan else None
    return with_explanation(data, found)


def describe_kind(obj: Any) -> str:
    if obj is None:
        return "missing"
    if _T.isinstance(obj, type) and _T.issubclass(obj, _T.Function):
        return "Function"
    if _T.isinstance(obj, type):
        return "class"
    return "callable" if callable(obj) else _T.type(obj).__name__


def _reset_torch() -> None:
    """Global settings a submission may have changed at import do not make its answer wrong."""
    _T.set_grad_enabled(True)
    _T.set_default_dtype(_T.float32)
    _T.set_detect_anomaly(False)


class _recording_backward:
    """Wraps the class's backward to note what it returned, before autograd validates it, and what
    ctx.needs_input_grad said."""

    def __init__(self, cls, recorded: list):
        self.cls, self.recorded = cls, recorded
        self.original = cls.__dict__.get("backward") if _T.isinstance(cls, type) else None

    def __enter__(self):
        if self.original is None:
            return self
        backward = self.cls.backward
        recorded = self.recorded

        def recording_backward(ctx, *grads):
            needs = getattr(ctx, "needs_input_grad", None)
            result = backward(ctx, *grads)
            recorded.append({"returns": describe_returns(result),
                             "needs": [bool(n) for n in needs] if _T.isinstance(needs, tuple) else None})
            return result

        self.cls.backward = staticmethod(recording_backward)
        return self

    def __exit__(self, *exc):
        if self.original is not None:
            self.cls.backward = self.original


def describe_returns(result: Any) -> list[dict]:
    values = result if _T.isinstance(result, tuple) else (result,)
    out = []
    for v in values:
        if v is None:
            out.append({"kind": "None"})
        elif _is_tensor(v):
            out.append({"kind": "Tensor", "shape": list(_view(v).shape)})
        else:
            out.append({"kind": _T.type(v).__name__})
    return out


def _sizes(encoded: list[Any]) -> list[int]:
    return [len(a["values"]) for a in encoded if differentiable(a)]


def _directions_of(case: dict, seed: int, index: int) -> projections.Directions:
    """The directions a measured case was projected on (its output and its tensor inputs' sizes)."""
    return projections.directions(seed, index, len(case["output"]["values"]), tuple(len(g) for g in case["vjp"]))


class _SavedLog:
    """Saved-tensor hooks around one call of forward: every tensor that goes through save_for_backward
    (the hooks see nothing else). Pushed by hand, and popped whether or not guard() already cleared it."""

    def __init__(self):
        self.tensors: list[torch.Tensor] = []
        self.unpacked = 0
        log = self

        def pack(t):
            log.tensors.append(t)
            return t

        def unpack(t):
            log.unpacked += 1
            return t

        self.hooks = (pack, unpack)

    def __enter__(self):
        _T.push_saved_hooks(*self.hooks)
        return self

    def __exit__(self, *exc):
        top = _T.saved_hooks(False)
        if top is not None and top[0] is self.hooks[0]:
            _T.pop_saved_hooks()


def _node_of(t: torch.Tensor) -> Any:
    """The node that made a tensor, past the alias a plain view of it (`_view`) adds."""
    node = _view(t).grad_fn
    for _ in range(4):
        if node is None or _T.type(node).__name__ != "AliasBackward0":
            break
        node = node.next_functions[0][0]
    return node


def _kind_of(t: Any, args: list[Any], node: Any, out: Any = None) -> dict:
    """What a tensor kept by forward is: one of its inputs, one of its outputs, or computed inside forward
    (an intermediate, or a detached copy of an input or of the output)."""
    for k, a in enumerate(args):
        if t is a:
            return {"kind": "input", "index": k}
    with _T.no_torch_function():
        v = _T.as_subclass(t, _T.Tensor)
        if node is not None and _node_of(v) is node:
            return {"kind": "output"}
        for k, a in enumerate(args):
            if _is_tensor(a) and v.data_ptr() == _view(a).data_ptr() and v.data_ptr() != 0:
                return {"kind": "detached", "index": k}
        if out is not None and v.data_ptr() == _view(out).data_ptr() and v.data_ptr() != 0:
            return {"kind": "detached", "of": "output"}
        if v.grad_fn is not None or v.requires_grad:
            return {"kind": "other"}
    return {"kind": "intermediate"}


def _ctx_tensors(node: Any, args: list[Any], out: Any = None) -> list[dict]:
    """The tensors forward kept as plain attributes of ctx (`ctx.x = x`), directly or in a tuple or list."""
    found = []
    try:
        attributes = dict(vars(node))
    except TypeError:
        return found
    for attr, value in list(attributes.items())[:50]:
        values = value if _T.isinstance(value, (tuple, list)) else (value,)
        for item in list(values)[:10]:
            if _is_tensor(item):
                found.append({"attr": str(attr)[:40], **_kind_of(item, args, node, out)})
    return found


def forward_case(problem, obj, encoded: list[Any]) -> dict:
    """One call of forward: its output, whether it changed its inputs (and said so with ctx.mark_dirty),
    which tensors it passed to save_for_backward and which it kept as attributes of ctx."""
    case: dict[str, Any] = {"arg_kinds": ["Tensor" if differentiable(a) else f"Tensor({a.get('dtype')})"
                                          if _T.isinstance(a, dict) else _T.type(a).__name__
                                          for a in positional(encoded)]}
    args = decode_args(encoded)
    try:
        with _SavedLog() as log:
            out = _call(problem, obj, args)
    except BaseException as error:  # noqa: BLE001 - any failure of student code is data
        case["error"] = error_data(error, "forward")
        return case
    changed, dirty = [], []
    for k, (a, e) in enumerate(zip(args, encoded)):
        if _T.isinstance(e, dict) and _is_tensor(a):
            if plain(a)["values"] != e["values"]:
                changed.append(k)
            if out is a:
                dirty.append(k)
    case["inputs_changed"], case["dirty"] = changed, dirty
    if not _is_tensor(out):
        case["output"] = {"type": _T.type(out).__name__}
        return case
    out = _view(out)
    case["output"] = {"type": "Tensor", **plain(out), "has_grad_fn": out.grad_fn is not None}
    node = _node_of(out)
    case["saved"] = [_kind_of(t, args, node, out) for t in log.tensors[:20]]
    case["ctx_tensors"] = _ctx_tensors(node, args, out) if node is not None and _is_function_node(node) else []
    return case


def _is_function_node(node: Any) -> bool:
    """A custom Function's node (its ctx), as opposed to one of PyTorch's own."""
    return _T.isinstance(node, _T.BackwardCFunction)


def backward_case(problem, obj, namespace: dict, encoded: list[Any], seed: int, index: int, recorded: list,
                  case: dict) -> None:
    """Backward on a fresh call: one vector-Jacobian product twice on the same graph (saved tensors still
    intact?), whether backward changed grad_output, what it returned, finite differences of forward along
    one direction and, for a Function with several outputs, each output's gradient."""
    args = decode_args(encoded)
    try:
        out = _view(_call(problem, obj, args))
    except BaseException as error:  # noqa: BLE001 - forward failed this time only
        case["backward_error"] = error_data(error, "forward")
        return
    tensors = _inputs(args)
    d = projections.directions(seed, index, out.numel(), tuple(_sizes(encoded)))
    recorded.clear()
    try:
        first, changed = _vector_jacobian(out, tensors, d.v, watch=True)
        case["grad_output_changed"] = changed
        case["vjp2"], _ = _vector_jacobian(out, tensors, d.v2)
        case["vjp"] = first
    except BaseException as error:  # noqa: BLE001
        case["backward_error"] = error_data(error, "backward")
    case["backward_returns"] = recorded[0]["returns"] if recorded else None
    try:
        case["fd"] = _directional(problem, obj, encoded, d.u)
    except BaseException as error:  # noqa: BLE001
        case["numerical_error"] = error_data(error, "forward")
    if "vjp" in case and sum(1 for a in encoded if differentiable(a)) > 1:
        case["subsets"] = _subsets(problem, obj, encoded, d.v, recorded)
    if problem.all_outputs and "vjp" in case:
        case["extra_outputs"] = _extra_outputs(problem, namespace.get(problem.all_outputs), encoded, seed, index)


def _subsets(problem, obj, encoded: list[Any], v: list[float], recorded: list) -> list[dict]:
    """The Function called with only some tensor inputs requiring a gradient (every such subset but all
    and none): what ctx.needs_input_grad said, what backward returned, and the gradients of the inputs
    that need one."""
    positions = [k for k, a in enumerate(positional(encoded)) if differentiable(a)]
    found = []
    for mask in range(1, (1 << len(positions)) - 1):
        wanted = [bool(mask >> j & 1) for j in range(len(positions))]
        args = decode_args(encoded)
        for k, want in zip(positions, wanted):
            _T.requires_grad_(args[k], want)
        result: dict[str, Any] = {"requires": wanted}
        recorded.clear()
        try:
            out = _view(_call(problem, obj, args))
            if out.grad_fn is None:
                result["no_grad_fn"] = True
            else:
                needing = [args[k] for k, want in zip(positions, wanted) if want]
                grads = _grad(out, needing, _make(list(out.shape), v, requires_grad=False), allow_unused=True)
                result["vjp"] = [_flat(g, t.numel()) for g, t in zip(grads, needing)]
        except BaseException as error:  # noqa: BLE001
            result["error"] = error_data(error, "backward")
        if recorded:
            result["returns"], result["needs"] = recorded[0]["returns"], recorded[0]["needs"]
        found.append(result)
    return found


def _apply(function, args: list[Any]) -> Any:
    try:
        return _T.apply(function, *args)
    finally:
        guard()


def _extra_outputs(problem, function, encoded: list[Any], seed: int, index: int) -> list[dict]:
    """For each output after the first of the Function that the graded callable wraps (Sinh's exp(x) and
    exp(-x)): the vector-Jacobian product through backward with a gradient on that output only, and
    finite differences of that output along a direction, as gradcheck asks of every output."""
    if not (_T.isinstance(function, type) and _T.issubclass(function, _T.Function)):
        return []
    found = []
    try:
        args = decode_args(encoded)
        tensors = _inputs(args)
        outputs = [_view(o) for o in _outputs_of_args(function, decode_args(encoded)) if _is_tensor(o)]
    except BaseException:  # noqa: BLE001 - the first output's measurements hold the failure
        return []
    del args, tensors
    for j in range(1, min(len(outputs), 6)):
        d = projections.directions(seed, 1000 * (index + 1) + j, outputs[j].numel(), tuple(_sizes(encoded)))
        entry: dict[str, Any] = {"output": j}
        try:
            args = decode_args(encoded)
            tensors = _inputs(args)
            out = _view(_outputs_of_args(function, args)[j])
            entry["vjp"], _ = _vector_jacobian(out, tensors, d.v)

            def values(enc: list[Any], j: int = j) -> list[float]:
                with _T.no_grad():
                    return plain(_outputs_of_args(function, decode_args(enc))[j])["values"]

            entry["fd"] = _difference(values(_moved(encoded, d.u, EPS)), values(_moved(encoded, d.u, -EPS)))
        except BaseException as error:  # noqa: BLE001
            entry["error"] = error_data(error, "backward")
        found.append(entry)
    return found


def _outputs_of_args(function, args: list[Any]) -> list[Any]:
    result = _apply(function, args)
    return list(result) if _T.isinstance(result, tuple) else [result]


def reference_case(problem, obj, encoded: list[Any]) -> dict:
    """What the judge needs of the reference: its output and its whole Jacobian."""
    args = decode_args(encoded)
    out = _view(_call(problem, obj, args))
    return {"output": {"type": "Tensor", **plain(out), "has_grad_fn": out.grad_fn is not None},
            "jacobian": analytical_jacobian(out, _inputs(args))}


def _worth_explaining(case: dict, expect: dict | None, seed: int, index: int) -> tuple[bool, bool]:
    """Whether to measure this case's first and second derivatives in full: where the projections
    disagree (so the judge can say where and how), or with nothing to compare them with. This only
    chooses what to measure; the verdicts are the judge's, from the projections and whatever else
    comes back."""
    if not isinstance(case, dict) or "vjp" not in case:
        return False, False
    d = _directions_of(case, seed, index)
    first = expect is None or not projections.all_close([case["vjp"], case.get("vjp2")], expect.get("vjps")) \
        or ("fd" in case and not projections.gradcheck_agrees([case["vjp"], case["vjp2"]], case["fd"], d))
    second = case.get("second", {})
    second_worth = "hvp" in second and "fd_v" in second and (expect is None
                                                             or not projections.gradgradcheck_agrees(second, d))
    return first, second_worth


def explain_case(problem, obj, encoded: list[Any], seed: int, index: int, first: bool, second: bool,
                 case: dict) -> dict:
    """The whole Jacobians (from backward and by finite differences) and, for second derivatives, the
    whole matrices, to show where a projection went wrong."""
    found: dict[str, Any] = {}
    if first:
        args = decode_args(encoded)
        with contextlib.suppress(BaseException):  # the projections already hold the failure
            found["jacobian"] = analytical_jacobian(_view(_call(problem, obj, args)),
                                                    _inputs(args))
        with contextlib.suppress(BaseException):
            found["numerical"] = numerical_jacobian(problem, obj, encoded)
    if second:
        d = _directions_of(case, seed, index)
        found["second"] = {**case["second"], **second_order(problem, obj, encoded, d.v)}
    return found


def _unit(shape: list[int], size: int, index: int) -> torch.Tensor:
    values = [0.0] * size
    values[index] = 1.0
    return _make(shape, values, requires_grad=False)


def _flat(t: torch.Tensor | None, size: int) -> list[float]:
    return [0.0] * size if t is None else plain(t)["values"]


def _vector_jacobian(out: torch.Tensor, tensors: list[torch.Tensor], v: list[float],
                     watch: bool = False) -> tuple[list[list[float]], bool]:
    """vᵀJ, one list per tensor input: a single backward call; and whether backward changed the
    grad_output it was given (`watch`)."""
    if out.numel() == 0 or out.grad_fn is None:
        return [[0.0] * t.numel() for t in tensors], False
    grad_output = _make(list(out.shape), v, requires_grad=False)
    grads = _grad(out, tensors, grad_output, retain_graph=True, allow_unused=True)
    changed = watch and plain(grad_output)["values"] != list(v)
    return [_flat(g, t.numel()) for g, t in zip(grads, tensors)], changed


def analytical_jacobian(out: torch.Tensor, tensors: list[torch.Tensor]) -> list[list[list[float]]]:
    """J[k][i][j] = d out_i / d input_k[j], one vector-Jacobian product per output element."""
    out = _view(out)
    size = out.numel()
    rows: list[list[list[float]]] = [[] for _ in tensors]
    if size == 0 or out.grad_fn is None:
        return [[[0.0] * t.numel() for _ in range(size)] for t in tensors]
    for i in range(size):
        grads = _grad(out, tensors, _unit(list(out.shape), size, i), retain_graph=True, allow_unused=True)
        for k, (g, t) in enumerate(zip(grads, tensors)):
            rows[k].append(_flat(g, t.numel()))
    return rows


def _forward_values(problem, obj, encoded: list[Any]) -> list[float]:
    with _T.no_grad():
        out = _call(problem, obj, decode_args(encoded))
    return plain(out)["values"]


def _perturbed(encoded: list[Any], k: int, j: int, step: float) -> list[Any]:
    copy = [dict(a, values=list(a["values"])) if differentiable(a) else a for a in encoded]
    copy[k]["values"][j] += step
    return copy


def _moved(encoded: list[Any], direction: list[list[float]], step: float) -> list[Any]:
    """The inputs moved by step along a direction (one list per tensor input)."""
    moved, tensors = [], iter(direction)
    for a in encoded:
        if differentiable(a):
            a = dict(a, values=[x + step * u for x, u in zip(a["values"], next(tensors))])
        moved.append(a)
    return moved


def _difference(plus: list[float], minus: list[float]) -> list[float]:
    return [(p - m) / (2 * EPS) for p, m in zip(plus, minus)]


def _directional(problem, obj, encoded: list[Any], direction: list[list[float]]) -> list[float]:
    """Ju by central differences of the student's own forward: two calls."""
    return _difference(_forward_values(problem, obj, _moved(encoded, direction, EPS)),
                       _forward_values(problem, obj, _moved(encoded, direction, -EPS)))


def numerical_jacobian(problem, obj, encoded: list[Any]) -> list[list[list[float]]]:
    """Central differences of the student's own forward, entry by entry, as gradcheck computes them."""
    jac = []
    for k, arg in enumerate(encoded):
        if not differentiable(arg):
            continue
        columns = []
        for j in range(len(arg["values"])):
            columns.append(_difference(_forward_values(problem, obj, _perturbed(encoded, k, j, EPS)),
                                       _forward_values(problem, obj, _perturbed(encoded, k, j, -EPS))))
        jac.append([list(row) for row in zip(*columns)] if columns else [])
    return jac


def _vjp(problem, obj, encoded: list[Any], v_values: list[float], create_graph: bool):
    args = decode_args(encoded)
    tensors = _inputs(args)
    out = _view(_call(problem, obj, args))
    v = _make(list(out.shape), v_values, requires_grad=create_graph)
    grads = _grad(out, tensors, v, create_graph=create_graph, allow_unused=True)
    grads = [None if g is None else _view(g) for g in grads]
    return tensors, v, out, grads


def _first_order(problem, obj, encoded: list[Any], v: list[float]) -> list[list[float]]:
    """vᵀJ at these inputs, through the student's backward, one list per tensor input."""
    _, _, _, grads = _vjp(problem, obj, encoded, v, create_graph=False)
    return [_flat(g, n) for g, n in zip(grads, _sizes(encoded))]


def second_projections(problem, obj, encoded: list[Any], d: projections.Directions) -> dict:
    """Second derivatives along one direction: hvp, the gradient of w·(vᵀJ) with respect to the inputs
    and v through autograd of the student's backward; fd_x and fd_v, how vᵀJ moves along ux and uv by
    central differences of the student's first-order backward."""
    result: dict[str, Any] = {}
    try:
        tensors, v, _, grads = _vjp(problem, obj, encoded, d.v, create_graph=True)
        result["has_history"] = any(g.grad_fn is not None for g in grads if g is not None)
        sizes = [t.numel() for t in tensors] + [v.numel()]
        live = [(g, w) for g, w in zip(grads, d.w) if g is not None and g.grad_fn is not None]
        if live:
            found = _grad([g for g, _ in live], tensors + [v], [_make(list(g.shape), w, False) for g, w in live],
                          allow_unused=True)
            result["hvp"] = [_flat(h, n) for h, n in zip(found, sizes)]
        else:
            result["hvp"] = [[0.0] * n for n in sizes]
    except BaseException as error:  # noqa: BLE001
        result["error"] = error_data(error, "double backward")
        return result
    try:
        def along_inputs(step: float) -> list[list[float]]:
            return _first_order(problem, obj, _moved(encoded, d.ux, step), d.v)

        def along_v(step: float) -> list[list[float]]:
            return _first_order(problem, obj, encoded, [x + step * u for x, u in zip(d.v, d.uv)])

        result["fd_x"] = [_difference(p, m) for p, m in zip(along_inputs(EPS), along_inputs(-EPS))]
        result["fd_v"] = [_difference(p, m) for p, m in zip(along_v(EPS), along_v(-EPS))]
    except BaseException as error:  # noqa: BLE001
        result["error"] = error_data(error, "backward")
    return result


def second_order(problem, obj, encoded: list[Any], v_values: list[float]) -> dict:
    """The whole Jacobian of the map (inputs, v) -> vᵀJ(inputs), analytically (autograd through the
    student's backward) and by central differences of the student's first-order backward."""
    result: dict[str, Any] = {}
    try:
        tensors, v, _, grads = _vjp(problem, obj, encoded, v_values, create_graph=True)
        sizes = [t.numel() for t in tensors] + [v.numel()]
        rows = []
        for g, t in zip(grads, tensors):
            for i in range(t.numel()):
                if g is None or g.grad_fn is None:
                    rows.append([0.0] * sum(sizes))
                    continue
                seconds = _grad(g, tensors + [v], _unit(list(g.shape), g.numel(), i),
                                retain_graph=True, allow_unused=True)
                rows.append([x for s, n in zip(seconds, sizes) for x in _flat(s, n)])
        result["analytical"] = rows
    except BaseException:  # noqa: BLE001 - the projection already holds the failure
        return result
    try:
        result["numerical"] = _numerical_second(problem, obj, encoded, v_values)
    except BaseException:  # noqa: BLE001
        result.pop("analytical")
    return result


def _numerical_second(problem, obj, encoded: list[Any], v_values: list[float]) -> list[list[float]]:
    def first_order(enc, v):
        return [x for g in _first_order(problem, obj, enc, v) for x in g]

    columns = []
    for k, arg in enumerate(encoded):
        if differentiable(arg):
            for j in range(len(arg["values"])):
                columns.append(_difference(first_order(_perturbed(encoded, k, j, EPS), v_values),
                                           first_order(_perturbed(encoded, k, j, -EPS), v_values)))
    for j in range(len(v_values)):
        vp, vm = list(v_values), list(v_values)
        vp[j] += EPS
        vm[j] -= EPS
        columns.append(_difference(first_order(encoded, vp), first_order(encoded, vm)))
    return [list(row) for row in zip(*columns)]


def backward_graph(problem, obj, encoded: list[Any], names: list[str] | None = None) -> dict | None:
    """The graph of backward, built with create_graph=True and read by torchviz, as plain data: the
    gradients named grad_<input>, the inputs by their names in forward (`names`), and the output `out`."""
    try:
        args = decode_args(encoded)
        labels = list(names or [])
        labels += [f"input{k + 1}" for k in range(len(labels), len(args))]
        inputs = _inputs(args)
        tensors = [(label, a) for label, a in zip(labels, args) if any(a is t for t in inputs)]
        if len(tensors) == 1 and not names:
            tensors = [("x", tensors[0][1])]
        raw = _call(problem, obj, args)
        out = raw if _T.type(raw) is _T.Tensor else _view(raw)  # a plain tensor is drawn as it is: no alias
        grads = _grad(out, [t for _, t in tensors], _make(list(out.shape), [1.0] * out.numel(), False),
                      create_graph=True, allow_unused=True)
        named = {f"grad_{label}": g if _T.type(g) is _T.Tensor else _view(g)
                 for (label, _), g in zip(tensors, grads) if g is not None}
        named.update({label: t for label, t in tensors})
        named["out"] = out
        return graph_of(**named).to_dict()
    except BaseException:  # noqa: BLE001 - no picture is better than a crash
        return None
    finally:
        guard()


def _plain_result(result: Any) -> Any:
    """What gradcheck sees of a call: plain tensors, so that a subclass cannot answer its questions."""
    if _is_tensor(result):
        return _view(result)
    if _T.isinstance(result, tuple):
        return tuple(_view(r) if _is_tensor(r) else r for r in result)
    return result


def _worth_quoting(cases: list[dict], seed: int) -> set[str]:
    """The checks whose PyTorch message would help a student: those where the projections already
    disagree with finite differences. It only saves running gradcheck on right answers; the verdicts
    are still the judge's."""
    worth = set()
    for index, case in enumerate(cases):
        if "vjp" not in case or "fd" not in case:
            worth.add("gradcheck")
            continue
        d = _directions_of(case, seed, index)
        if not projections.gradcheck_agrees([case["vjp"], case["vjp2"]], case["fd"], d):
            worth.add("gradcheck")
        second = case.get("second", {})
        if "hvp" not in second or "fd_v" not in second or not projections.gradgradcheck_agrees(second, d):
            worth.add("gradgradcheck")
    return worth


def torch_checks(problem, obj, encoded: list[Any], seed: int = 0, worth: set[str] | None = None) -> dict:
    """What torch.autograd.gradcheck (and gradgradcheck) print for the first case, where the numbers
    disagree (`worth`): shown to the student as PyTorch's own words; the verdicts are computed by the
    judge, not taken from here."""
    says = {}
    checks = [("gradcheck", _T.gradcheck)] + ([("gradgradcheck", _T.gradgradcheck)] if problem.double_backward else [])
    for name, run in checks:
        if worth is not None and name not in worth:
            continue
        try:
            with _T.fork_rng(devices=[]):  # gradgradcheck draws random grad_outputs: same seed, same words
                _T.manual_seed(seed)
                args = decode_args(encoded)
                run(lambda *a, like=args: _plain_result(_call(problem, obj, with_kwargs(list(a), like))), tuple(args),
                    eps=EPS, atol=1e-5, raise_exception=True)
            says[name] = "passed"
        except BaseException as error:  # noqa: BLE001
            says[name] = f"{_T.type(error).__name__}: {str(error)[:MAX_TEXT]}"
        finally:
            guard()
    return says


from autograder.measure.modern import measure_extra  # last: it builds on the helpers above
