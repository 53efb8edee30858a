"""A Linux machine without one of the kernel's protections, for every Python started with this folder
first on PYTHONPATH and the environment variable SIMULATE_WITHOUT naming what is missing (the grader, and
the clean parent where it is started afresh; workers are forked from it):

    libseccomp  pyseccomp is installed but the C library libseccomp is not (a slim container image):
                importing pyseccomp raises RuntimeError("Unable to find libseccomp"), as it does there
    pyseccomp   the binding is not installed (its import fails; `find_spec` finds nothing)
    userns      user namespaces are refused (as on Ubuntu 24.04 by default): the grader makes no
                container, and with --no-isolation runs workers under the older confinement, with Landlock
    landlock    as userns, and the kernel has no Landlock (older than 5.13, or a container runtime's
                seccomp profile refuses its system calls): they answer ENOSYS

Used by tests/sandbox/test_without.py. Python reads this file at start-up, before anything else.
"""

import ctypes
import ctypes.util
import errno
import os
import sys

MISSING = os.environ.get("SIMULATE_WITHOUT", "")
LANDLOCK_CALLS = (444, 445, 446)  # landlock_create_ruleset, landlock_add_rule, landlock_restrict_self
CLONE_NEWUSER = 0x10000000


class _Call:
    """One C function, refusing some calls with an errno (restype and argtypes set on it reach the real
    one)."""

    def __init__(self, real, refuses):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_refuses", refuses)

    def __getattr__(self, name):
        return getattr(self._real, name)

    def __setattr__(self, name, value):
        setattr(self._real, name, value)

    def __call__(self, *args):
        values = [getattr(a, "value", a) for a in args]
        refused = self._refuses(values)
        if refused:
            ctypes.set_errno(refused)
            return -1
        return self._real(*args)


def _landlock(values):
    return errno.ENOSYS if values and values[0] in LANDLOCK_CALLS else 0


def _user_namespace(values):
    return errno.EPERM if values and isinstance(values[0], int) and values[0] & CLONE_NEWUSER else 0


class _Libc:
    def __init__(self, lib, landlock: bool):
        self._lib = lib
        if landlock:
            self.syscall = _Call(lib.syscall, _landlock)
        self.unshare = _Call(lib.unshare, _user_namespace)

    def __getattr__(self, name):
        return getattr(self._lib, name)


def _refusing(landlock: bool):
    """ctypes.CDLL(None), the C library the sandbox calls, refusing user namespaces (and Landlock)."""
    real = ctypes.CDLL

    class CDLL(real):
        def __new__(cls, name, *args, **kwargs):
            if name is None:  # not an instance of cls: __init__ is not called again
                return _Libc(real(name, *args, **kwargs), landlock)
            return super().__new__(cls)

    ctypes.CDLL = CDLL


def _without_libseccomp():
    find_library = ctypes.util.find_library
    ctypes.util.find_library = lambda name: None if name == "seccomp" else find_library(name)


def _without_pyseccomp():
    sys.modules["pyseccomp"] = None  # import fails, and importlib.util.find_spec finds nothing


if MISSING:
    {"landlock": lambda: _refusing(landlock=True), "userns": lambda: _refusing(landlock=False),
     "libseccomp": _without_libseccomp, "pyseccomp": _without_pyseccomp}[MISSING]()
