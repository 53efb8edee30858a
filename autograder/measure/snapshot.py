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


def _fields_reader():
    """A function's code, defaults and keyword defaults are three pointers side by side in CPython's
    function object (3.11 to 3.13: after its globals, builtins, name and qualname). What this returns
    makes, for a function, a view of those bytes (made once, in the snapshot), so that restore() can
    compare all the functions it saved at once with the bytes they held: reading `f.__code__` is an
    audited event in a worker, and the snapshot compared thousands of functions after every call into the
    submission (three events each, most of a worker's time). None where the layout is not that one: the
    attributes are read then."""
    if sys.implementation.name != "cpython":
        return None
    size = ctypes.sizeof(ctypes.c_void_p)
    offset, view_type = 6 * size, ctypes.c_char * (3 * size)  # after ob_refcnt, ob_type and four pointers
    from_address = view_type.from_address

    def fields(f, id=id, from_address=from_address, offset=offset):
        return from_address(id(f) + offset)

    def test(x, y=1, *, z=2):
        return x

    def expected(f) -> bytes:
        return b"".join(ctypes.c_size_t(0 if v is None else id(v))
                        for v in (f.__code__, f.__defaults__, f.__kwdefaults__))

    view = fields(test)
    seen = [view.raw == expected(test)]
    test.__code__ = (lambda x, y=1, *, z=2: y).__code__
    test.__defaults__, test.__kwdefaults__ = (3,), None
    seen.append(view.raw == expected(test))
    return fields if all(seen) else None


_FIELDS = _fields_reader()


def _class_dict(cls: type) -> dict:
    """The dict behind a class's read-only __dict__ view."""
    (inner,) = [d for d in gc.get_referents(cls.__dict__) if isinstance(d, dict)]
    return inner


def _tagged(d: dict) -> list:
    """[the dict, what it holds, a view of its version tag (None without), the tag's value]"""
    tag = _VERSION(d) if _VERSION else None
    return [d, dict(d), tag, tag.value if tag is not None else None]


class _Saved:
    """One group of objects with what they held when the snapshot was taken.

    restore() runs after every call into a submission (hundreds of times in a worker): it first compares,
    in one go, the version tags of all the dicts and the code and defaults of all the functions with what
    they were when last put right (b"".join of views made once: no audited event, no Python loop), and
    goes through them one by one only where something changed."""

    def __init__(self, modules, classes, functions, instances):
        self.modules = [_tagged(vars(m)) for m in modules]
        self.classes = [[*_tagged(_class_dict(c)), c] for c in classes]
        self.instances = [_tagged(vars(o)) for o in instances]
        self.functions = [(f, f.__code__, f.__defaults__, f.__kwdefaults__) for f in functions]
        self.tagged, self.viewed = _VERSION is not None, _FIELDS is not None
        dicts = self.modules + self.classes + self.instances
        self.tags = [entry[2] for entry in dicts] if self.tagged else []
        self.tags_seen = b"".join(self.tags)
        # the saved code and defaults are held in self.functions: their addresses stay theirs
        self.fields = [_FIELDS(f) for f in functions] if self.viewed else []
        self.each_saved = [view.raw for view in self.fields]
        self.fields_saved = b"".join(self.each_saved)

    # The builtins it needs are bound here, so that patching them (or `T`) cannot stop the restoring.
    # No id() here, nor any attribute of a function read while nothing changed: both are audited events
    # in a worker, each a call of its hook.
    def restore(self, setattr=setattr, delattr=delattr, list=list, any=any, vars=vars, join=b"".join,
                enumerate=enumerate,
                builtin_names=_BUILTIN_NAMES, missing=_MISSING) -> None:
        tagged = self.tagged
        if not tagged or join(self.tags) != self.tags_seen:
            self._restore_dicts(setattr, delattr, list, any, vars, builtin_names, missing)
            if tagged:
                self.tags_seen = join(self.tags)
        viewed = self.viewed
        if not viewed or join(self.fields) != self.fields_saved:
            for k, (function, code, defaults, kwdefaults) in enumerate(self.functions):
                if viewed and self.fields[k].raw == self.each_saved[k]:
                    continue  # this one as saved: its attributes are not read (audited events)
                if function.__code__ is not code:
                    function.__code__ = code
                if function.__defaults__ is not defaults:
                    function.__defaults__ = defaults
                if function.__kwdefaults__ is not kwdefaults:
                    function.__kwdefaults__ = kwdefaults

    def _restore_dicts(self, setattr, delattr, list, any, vars, builtin_names, missing) -> None:
        tagged = self.tagged
        for entry in self.modules:
            current, saved, tag, version = entry
            if tagged and tag.value == version:
                continue  # untouched since it was last put right
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    current[key] = value
            for key in [k for k in current if k not in saved and k in builtin_names]:
                del current[key]  # a global that would shadow a builtin
            if tagged:
                entry[3] = tag.value
        for entry in self.instances:
            current, saved, tag, version = entry
            if tagged and tag.value == version:
                continue
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    current[key] = value
            for key in [k for k in current if k not in saved]:
                del current[key]
            if tagged:
                entry[3] = tag.value
        for entry in self.classes:
            current, saved, tag, version, cls = entry
            if tagged and tag.value == version:
                continue
            for key, value in saved.items():
                if current.get(key, missing) is not value:
                    setattr(cls, key, value)  # through the class, so that its attribute cache follows
            for key in [k for k in current if k not in saved]:
                if any(key in vars(base) for base in cls.__mro__[1:]):
                    delattr(cls, key)  # an attribute that would shadow an inherited one
            if tagged:
                entry[3] = tag.value


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

    def read_back(self) -> frozenset:
        """The functions whose code and defaults restore() reads as attributes (where it has no view of
        them), for the worker's audit hook to let those reads through at once (sandbox/watch.py)."""
        return frozenset(f for group in (self.all, self.hot) if not group.viewed for f, *_ in group.functions)

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


@contextlib.contextmanager
def allowing(module: types.ModuleType, name: str, value: Any):
    """module.name is `value` for the length of the block, which guard() keeps (the worker's snapshot
    holds it as saved meanwhile); then both are what they were when the snapshot was taken."""
    namespace = vars(module)
    saved = [entry[1] for snapshot in _ACTIVE for group in (snapshot.hot, snapshot.all)
             for entry in group.modules if entry[0] is namespace]
    original = (saved[0] if saved else namespace).get(name, _MISSING)
    for held in [*saved, namespace]:
        held[name] = value
    try:
        yield
    finally:
        for held in [*saved, namespace]:
            if original is _MISSING:
                held.pop(name, None)
            else:
                held[name] = original


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
    try:  # not contextlib.suppress: making its object is a third of this function's time
        T.set_default_device(None)
    except Exception:  # noqa: BLE001, S110 - older torch: no default device to reset
        pass
    if T.is_inference_mode_enabled():
        snapshot.keep.append(T.inference_mode(False))  # kept alive: inference mode stays off
    # each read first (tens of nanoseconds) and set only where it changed: setting all four took most of
    # the 10 us of a guard(), which runs after every call into the submission (600 in a wrong one)
    if T.getrecursionlimit() != snapshot.recursion_limit:
        T.setrecursionlimit(snapshot.recursion_limit)
    if not T.is_grad_enabled():
        T.set_grad_enabled(True)
    if T.get_default_dtype() is not T.float32:
        T.set_default_dtype(T.float32)
    if T.is_anomaly_enabled():
        T.set_detect_anomaly(False)

