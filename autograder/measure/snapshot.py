"""The grader's own state, kept from the submission (grading workers only).

`Snapshot` records the grader's modules, classes and functions before the submission runs, in the
worker, before its first cell (so it is what the trusted grader had); `guard()` puts back whatever the
submission patched (at import, or inside its own forward and backward) and resets torch's global modes
after every call into the submission. This stops patching; it cannot stop code that shares the process
from forging numbers outright (see autograder/sandbox/).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import gc
import sys
import types
from types import SimpleNamespace
from typing import Any

import torch

from autograder.measure.captured import UNKNOWN, T

_MISSING = object()
_BUILTIN_NAMES = frozenset(vars(builtins))
# Modules whose globals the measurements (and the worker's messages) depend on, patched back before use.
_PROTECTED_PREFIXES = ("autograder", "torch.autograd", "json", "traceback", "linecache", "random",
                       "torch.utils._python_dispatch", "torchviz", "graphviz")
_PROTECTED_MODULES = {"torch", "torch._tensor", "torch.functional", "torch.overrides", "torch._C",
                      "torch._C._autograd", "torch._ops", "torch.library", "builtins", "os", "posix", "sys",
                      "types", "functools", "operator", "math", "copy", "contextlib", "resource", "signal",
                      "selectors", "struct", "ctypes", "errno", "stat", "fcntl", "time", "ast", "inspect",
                      "textwrap"}
# The few looked at again after every call into the submission (cheap enough to do hundreds of times):
# every module of the measuring code, so that nothing a call patched is used by the next measurement.
_MEASURING = ("captured", "snapshot", "encoding", "calls", "probe", "forward", "backward", "differences",
              "second", "in_full", "checks", "modern", "graphs", "projections", "spec", "contract", "wire",
              "saved_names")
_HOT_MODULES = (*(f"autograder.measure.{name}" for name in _MEASURING), "autograder.sandbox.worker",
                "autograder.sandbox.protocol", "builtins", "torch.autograd", "torch.autograd.function",
                "torch.autograd.graph", "torch.autograd.gradcheck")
_HOT_CLASSES = (torch.Tensor, torch.autograd.Function)


def _protected(name: str) -> bool:
    return name in _PROTECTED_MODULES or any(name == p or name.startswith(p + ".")
                                             for p in _PROTECTED_PREFIXES)


def _version_reader():
    """PEP 509: CPython 3.11 gives every dict a version tag that changes whenever the dict changes, so
    restore() can skip, for one read each, the thousands of entries nobody touched (it runs after every
    call into a submission). What this returns makes, for a dict, a view of its tag to read again and
    again (made once, in the snapshot: making one is an audited event in a worker, reading it is not).
    None where the layout is not the one checked here: every dict is then compared entry by entry."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return None
    offset = 3 * ctypes.sizeof(ctypes.c_ssize_t)  # after ob_refcnt, ob_type and ma_used
    from_address = ctypes.c_uint64.from_address

    def tag(d: dict, id=id, from_address=from_address, offset=offset):
        return from_address(id(d) + offset)

    test: dict = {}
    view = tag(test)
    seen = [view.value]
    test["x"] = 1
    seen.append(view.value)
    test["x"] = 2
    seen.append(view.value)
    return tag if len(set(seen)) == 3 and tag(test).value == seen[-1] else None


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
        dicts = ([d for d, _ in self.modules] + [d for _, d, _ in self.classes]
                 + [d for d, _ in self.instances])
        # each dict's tag (kept alive with the dict, which the snapshot holds) and its last value seen
        self.tags = {id(d): _VERSION(d) for d in dicts} if _VERSION else {}
        self.versions = {key: tag.value for key, tag in self.tags.items()}

    # The builtins it needs are bound here, so that patching them (or `T`) cannot stop the restoring.
    def restore(self, setattr=setattr, delattr=delattr, list=list, any=any, vars=vars, id=id,
                builtin_names=_BUILTIN_NAMES, missing=_MISSING, tagged=_VERSION is not None) -> None:
        versions, tags = self.versions, self.tags
        for current, saved in self.modules:
            if tagged and tags[id(current)].value == versions[id(current)]:
                continue  # untouched since it was last put right
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    current[key] = value
            for key in [k for k in current if k not in saved and k in builtin_names]:
                del current[key]  # a global that would shadow a builtin
            if tagged:
                versions[id(current)] = tags[id(current)].value
        for current, saved in self.instances:
            if tagged and tags[id(current)].value == versions[id(current)]:
                continue
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    current[key] = value
            for key in [k for k in current if k not in saved]:
                del current[key]
            if tagged:
                versions[id(current)] = tags[id(current)].value
        for cls, current, saved in self.classes:
            if tagged and tags[id(current)].value == versions[id(current)]:
                continue
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    setattr(cls, key, value)  # through the class, so that its attribute cache follows
            for key in [k for k in current if k not in saved]:
                if any(key in vars(base) for base in cls.__mro__[1:]):
                    delattr(cls, key)  # an attribute that would shadow an inherited one
            if tagged:
                versions[id(current)] = tags[id(current)].value
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
        modules = [m for n, m in list(sys.modules.items())
                   if isinstance(m, types.ModuleType) and _protected(n)]
        own = [sys.modules[n] for n in _HOT_MODULES if n in sys.modules and n.startswith("autograder")]
        hot = own + [sys.modules[n] for n in _HOT_MODULES
                     if n in sys.modules and not n.startswith("autograder")]
        classes, functions, instances = _contents(modules)
        _, own_functions, own_instances = _contents(own)
        self.all = _Saved(modules, classes + [c for c in _HOT_CLASSES if c not in classes], functions,
                          instances)
        self.hot = _Saved(hot, _HOT_CLASSES, own_functions, own_instances)
        self.recursion_limit = sys.getrecursionlimit()
        self.keep: list[Any] = []

    def restore(self, everything: bool = True) -> None:
        self.hot.restore()
        if everything:
            self.all.restore()
        _reset_modes(self)


_ACTIVE: list[Snapshot] = []  # the worker's snapshot, once sandbox/worker.py has activated it


def activate(snapshot: Snapshot) -> None:
    _ACTIVE[:] = [snapshot]


def guard() -> None:
    """After every call into the submission: put back what it patched in the grader (workers only)."""
    if _ACTIVE:
        _ACTIVE[0].restore(everything=False)


def _pop_saved_hooks() -> None:
    """Removes every default saved-tensor hook left on. Where torch cannot say whether one is on, pop
    until it refuses (it checks before it pops)."""
    if T.saved_hooks(False) is not UNKNOWN:
        while T.saved_hooks(False) is not None:
            T.pop_saved_hooks()
        return
    for _ in range(10_000):
        try:
            T.pop_saved_hooks()
        except T.RuntimeError:
            return


def _reset_modes(snapshot: Snapshot) -> None:
    """Global modes a submission may have left on: torch function and dispatch modes (which could answer
    for any operation), a default device, inference mode, default saved-tensor hooks."""
    while T.len_function_modes() > 0:
        T.pop_function_mode()
    while T.len_dispatch_modes() > 0:
        T.pop_dispatch_mode()
    _pop_saved_hooks()
    with contextlib.suppress(Exception):  # older torch: no default device to reset
        T.set_default_device(None)
    if T.is_inference_mode_enabled():
        snapshot.keep.append(T.inference_mode(False))  # kept alive: inference mode stays off
    T.setrecursionlimit(snapshot.recursion_limit)
    T.set_grad_enabled(True)
    T.set_default_dtype(T.float32)
    T.set_detect_anomaly(False)

