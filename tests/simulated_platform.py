"""Makes this Linux process look like macOS or Windows to the course's package, as far as Python can tell:

    from tests.simulated_platform import simulate
    simulate("win32")   # or "darwin"

What the other system lacks becomes unavailable: its modules cannot be imported (a meta path finder
refuses them, and those already imported are forgotten), its functions and constants are gone from `os`
and `signal`, the C library cannot be loaded through ctypes, /proc and /sys do not exist, and
`sys.platform` says the other system's name. Third-party packages that have their own build for each
system (torch, NumPy, Matplotlib, Graphviz's interface, Jinja2) are imported first, as they are there:
their Linux builds use Linux's modules.

Used by tests/test_platforms.py, in a subprocess of its own.
"""

from __future__ import annotations

import builtins
import ctypes
import ctypes.util
import importlib.abc
import os
import signal
import sys

# Linux only: the sandbox's system-call filter, its binding, and what the kernel alone offers.
LINUX_MODULES = {"pyseccomp", "seccomp"}
LINUX_OS = ("sched_getaffinity", "sched_setaffinity", "pidfd_open", "unshare", "setns", "O_PATH",
            "memfd_create", "eventfd", "splice", "copy_file_range", "getrandom", "posix_fadvise",
            "sched_getscheduler")
# POSIX only, missing on Windows too.
POSIX_MODULES = {"resource", "fcntl", "termios", "tty", "pty", "pwd", "grp", "syslog", "posix",
                 "_posixsubprocess", "_posixshmem", "readline", "crypt", "spwd", "nis"}
POSIX_OS = ("fork", "forkpty", "getuid", "geteuid", "getgid", "getegid", "setuid", "setgid", "setsid",
            "setgroups", "getgroups", "killpg", "getpgid", "setpgid", "nice", "getloadavg", "wait3", "wait4",
            "WNOHANG", "register_at_fork", "sysconf", "mkfifo", "O_CLOEXEC", "O_NOFOLLOW")
POSIX_SIGNAL = ("SIGALRM", "SIGKILL", "SIGHUP", "SIGCHLD", "SIGXFSZ", "SIGXCPU", "SIGUSR1", "SIGUSR2",
                "SIGPIPE", "SIGQUIT", "SIGSTOP", "SIGCONT", "alarm", "setitimer", "getitimer", "ITIMER_REAL",
                "ITIMER_VIRTUAL", "ITIMER_PROF", "pause", "siginterrupt", "pthread_kill", "pthread_sigmask",
                "sigwait", "sigpending")
ABSENT_PATHS = ("/proc", "/sys")
# Imported before anything is taken away: each system has its own build of these.
THIRD_PARTY = ("numpy", "torch", "torch.autograd", "torch.autograd.gradcheck", "torch.func",
               "torch.autograd.forward_ad", "matplotlib", "matplotlib.pyplot", "graphviz", "torchviz",
               "jinja2", "filelock", "subprocess", "multiprocessing", "tempfile", "shutil")


class Refuse(importlib.abc.MetaPathFinder):
    def __init__(self, names: set[str], platform: str):
        self.names, self.platform = names, platform

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} (on simulated {self.platform})", name=name)


def _no_libc(platform: str):
    """ctypes.CDLL refusing the C library (on Windows CDLL(None) is a TypeError; on macOS the library
    loads but has no prctl, Landlock or seccomp: refusing it is the stricter test)."""
    real = ctypes.CDLL

    class CDLL(real):
        def __init__(self, name, *args, **kwargs):
            base = os.path.basename(str(name or ""))
            if name is None or base.startswith(("libc.", "libc-", "libseccomp")):
                raise OSError(f"no C library to load as {name!r} on simulated {platform}")
            super().__init__(name, *args, **kwargs)

    return CDLL


def _absent(path) -> bool:
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
    return any(text == p or text.startswith(p + "/") for p in ABSENT_PATHS)


def _without_paths(function):
    def replaced(path=".", *args, **kwargs):
        if _absent(path):
            raise FileNotFoundError(2, "No such file or directory (simulated)", os.fsdecode(path))
        return function(path, *args, **kwargs)
    return replaced


def simulate(platform: str) -> None:
    if platform not in ("darwin", "win32"):
        raise ValueError(f"simulate() knows darwin and win32, not {platform!r}")
    import importlib

    for name in THIRD_PARTY:
        importlib.import_module(name)
    modules = LINUX_MODULES | (POSIX_MODULES if platform == "win32" else set())
    for name in list(sys.modules):
        if name.split(".")[0] in modules:
            del sys.modules[name]
    sys.meta_path.insert(0, Refuse(modules, platform))
    for module, names in ((os, LINUX_OS + (POSIX_OS if platform == "win32" else ())),
                          (signal, POSIX_SIGNAL if platform == "win32" else ())):
        for name in names:
            if hasattr(module, name):
                delattr(module, name)
    ctypes.CDLL = _no_libc(platform)
    ctypes.cdll = ctypes.LibraryLoader(ctypes.CDLL)
    find_library = ctypes.util.find_library
    ctypes.util.find_library = lambda name: None if name in ("c", "seccomp") else find_library(name)
    builtins.open = _without_paths(builtins.open)
    for name in ("open", "listdir", "scandir", "stat"):
        setattr(os, name, _without_paths(getattr(os, name)))
    sys.platform = platform


def unavailable() -> list[str]:
    """What of the simulation is not in force (empty when it all is): proof that it ran."""
    wrong = []
    for name in ("pyseccomp", "resource", "fcntl"):
        if name == "pyseccomp" or sys.platform == "win32":
            try:
                __import__(name)
                wrong.append(f"import {name}")
            except ImportError:
                pass
    for name, there in (("os.sched_getaffinity", hasattr(os, "sched_getaffinity")),
                        ("signal.SIGALRM", sys.platform == "win32" and hasattr(signal, "SIGALRM")),
                        ("/proc", os.path.exists("/proc/self/status"))):
        if there:
            wrong.append(name)
    try:
        ctypes.CDLL(None)
        wrong.append("ctypes.CDLL(None)")
    except OSError:
        pass
    return wrong
