"""The worker's watch on reaching into the grader: an audit hook (PEP 578), installed before the cells
run, that sees the interpreter's own events (a frame asked for, the garbage collector walked, ctypes,
code made or run from strings, the worker's descriptors opened through /proc) wherever the call comes
from, however its name was spelled.

When the code that asked is the submission's (its cells, its helper modules, code it built), the event is
written at once to the grader as {"event": "reach", ...}, before the operation happens, and the
operation is refused (PermissionError) where it gives frames, objects or memory. An audit hook cannot be
removed; this one keeps everything it uses in its closure (C functions captured here), so nothing the
submission patches changes what it does, and it never waits for the submission: what it wrote is in the
grader's hands whatever the worker does next. Where its message cannot be written to the very socket it
was given (the descriptor closed or replaced), the worker ends.

Which code is the submission's: the first frame, walking up from the call, that is not one of the
standard library's pass-through modules (inspect, traceback, threading, functools, ...: they act for their
caller) and whose file lies outside the interpreter's and the installed packages' folders. PyTorch asking
for a frame is PyTorch's business; a cell asking through inspect is the cell's.
"""

from __future__ import annotations

import gc
import os
import sys
import sysconfig
from _thread import get_ident
from functools import lru_cache
from types import CodeType, FunctionType

from autograder.sandbox.protocol import encoder

MAX_REPORTS = 50  # written per worker; past that, reaches are still refused

FRAMES = ("sys._getframe", "sys._getframemodulename", "sys._current_frames", "sys._current_exceptions")
HOOKS = ("sys.settrace", "sys.setprofile", "sys.addaudithook", "sys.monitoring.register_callback",
         "sys.monitoring.use_tool_id", "sys.monitoring.set_events", "sys.monitoring.set_local_events")
OBJECTS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents")
# attributed to the code doing it, not walked: libraries read __code__ and make code objects for themselves
IMMEDIATE = ("object.__getattr__", "object.__setattr__", "object.__delattr__", "code.__new__",
             "function.__new__", "marshal.loads", "marshal.load")
RESTORED_READS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})  # what snapshot.py reads back
RESTRICTED_SET = ("__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__", "__class__",
                  "__builtins__", "__dict__", "f_trace", "f_lineno")
# programs that inherit the worker's descriptors, and sockets or maps that could wrap them: told, not refused
PROCESSES = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "socket.__new__",
             "socket.connect", "socket.bind", "mmap.__new__")
PICKLED = ("sys", "gc", "builtins", "ctypes", "_ctypes", "inspect", "os", "posix", "subprocess", "importlib",
           "marshal", "types", "code", "codeop", "runpy", "pdb", "operator", "functools", "autograder")
PASS_THROUGH = ("inspect.py", "traceback.py", "pdb.py", "bdb.py", "cgitb.py", "pydoc.py", "code.py",
                "codeop.py", "runpy.py", "importlib", "threading.py", "concurrent", "functools.py",
                "operator.py", "contextlib.py", "copy.py", "copyreg.py", "pickle.py", "ctypes", "weakref.py",
                "_weakrefset.py", "queue.py", "sched.py", "timeit.py", "unittest", "asyncio", "pkgutil.py",
                "zipimport.py")
INSIDE = frozenset({"fd", "fdinfo", "mem", "maps", "smaps", "smaps_rollup", "pagemap", "map_files"})
CODE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pth", ".zip", ".egg", ".whl")


@lru_cache(maxsize=1)
def trusted_folders() -> tuple[str, ...]:
    """The interpreter's and the installed packages' folders, and this package's: code from there is not
    the submission's (a worker cannot write into them)."""
    paths = sysconfig.get_paths()
    folders = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders |= {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.dirname(__file__))}
    found = set()
    for folder in folders:
        if folder:
            found |= {folder.rstrip("/") + "/", os.path.realpath(folder).rstrip("/") + "/"}
    return tuple(sorted(found))


@lru_cache(maxsize=1)
def stdlib_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    found = set()
    for key in ("stdlib", "platstdlib"):
        if paths.get(key):
            found |= {paths[key].rstrip("/") + "/", os.path.realpath(paths[key]).rstrip("/") + "/"}
    return tuple(sorted(found))


def warm_up() -> None:
    """The folders found once, in the clean parent, rather than in every worker (sysconfig's expansion and
    the paths' realpath cost a worker 10 to 30 ms)."""
    trusted_folders()
    stdlib_folders()


def _text(value) -> str:
    """A plain str for what an event names, without calling anything of a submission's (a str subclass
    or an object's __str__ would run its code inside the hook)."""
    if type(value) is str:
        return value[:200]
    if type(value) is bytes:
        return value[:200].decode("utf-8", "replace")
    if type(value) is int:
        return int.__repr__(value)
    return "an object"


def install(fd: int, own_files: tuple[str, ...] = (), restored: frozenset = frozenset()) -> None:
    """Watches this process from now on, writing reaches to fd (the worker's messages socket).
    own_files: the submission's helper modules, as written beside it (their code is its own, and the
    only code a submission may import from outside the installed packages). restored: the functions
    whose code and defaults the snapshot reads back after every call into the submission (the libraries'
    and the snapshot's own, tens of thousands of reads for a submission): those reads are let through at
    once, before any frame is asked for, which was most of a worker's time. Their code and defaults hold
    no frame and no state of the grader's loop (constants, builtins bound early, a sentinel)."""
    trusted, stdlib = trusted_folders(), stdlib_folders()
    ino = os.fstat(fd).st_ino
    getframe, fstat, write, exit_, encode = sys._getframe, os.fstat, os.write, os._exit, encoder()
    startswith, busy, sent = str.startswith, set(), [0]
    collecting, pause, resume = gc.isenabled, gc.disable, gc.enable
    refused, immediate = frozenset(FRAMES + HOOKS + OBJECTS), frozenset(IMMEDIATE)
    processes = frozenset(PROCESSES)
    watched = refused | immediate | processes | {"open", "os.listdir", "os.scandir", "compile", "exec",
                                                 "import"}
    pickled, helpers = frozenset(PICKLED), frozenset(own_files)

    def through(name: str) -> bool:
        if startswith(name, "<frozen importlib"):
            return True
        for folder in stdlib:
            if startswith(name, folder):
                return name[len(folder):].split("/")[0] in PASS_THROUGH
        return False

    def generated(name: str) -> bool:
        """Code a library made from a string ("<string>", "<eval_with_key>.3": dynamo's guards, fx's
        graphs) answers for nothing itself: whoever runs it does. The cells are "<cell N>"."""
        return startswith(name, "<") and not startswith(name, ("<cell ", "<frozen "))

    def foreign(name: str) -> bool:
        """Code of the submission: neither the interpreter's, the packages' nor frozen."""
        if type(name) is not str:
            return True
        if startswith(name, "<frozen "):
            return False
        for folder in trusted:
            if startswith(name, folder):
                return False
        return True

    def origin(frame, walk: bool):
        """The submission's frame that asked; None for the interpreter's or a library's own business;
        False when only pass-through modules are found up to a thread's start (nobody vouches for it)."""
        while frame is not None:
            name = frame.f_code.co_filename
            if type(name) is not str:
                return frame
            if (walk and through(name)) or generated(name):
                frame = frame.f_back
                continue
            return frame if foreign(name) else None
        return False

    def report(event: str, detail: str, frame, refuse: bool) -> None:
        if sent[0] < MAX_REPORTS:
            sent[0] += 1
            where = (_text(frame.f_code.co_filename), frame.f_lineno) if frame else ("", 0)
            message = {"event": "reach", "what": event, "detail": detail, "file": where[0],
                       "line": where[1] if type(where[1]) is int else 0, "refused": refuse}
            data = ("\n" + "".join(encode(message, 0)) + "\n").encode()
            try:
                if fstat(fd).st_ino != ino:
                    exit_(70)
                while data:
                    data = data[write(fd, data):]
            except OSError:
                exit_(70)  # the grader cannot be told: nothing after this may reach it
        if refuse:
            raise PermissionError(f"The autograder refuses {event} in a submission: it reaches into the "
                                  f"grader, and is shown to your instructor.")

    def inside(path: str) -> bool:
        """A way into the process's descriptors or memory: /proc/<self or a pid>/fd, mem, maps..., /dev/fd."""
        if startswith(path, ("/dev/fd", "/dev/mem", "/dev/kmem", "/dev/std")):
            return True
        return startswith(path, "/proc/") and any(part in INSIDE for part in path.split("/")[2:])

    def code_file(name: str) -> bool | None:
        """For a file of code compiled or run: True (the submission's, from a path), None (a library's or a
        helper module's), False (not a path: ask who compiles it)."""
        if not startswith(name, "/"):
            return False
        return None if name in helpers or not foreign(name) else True

    def judge(event: str, args: tuple) -> tuple[bool, bool, str] | None:
        """(walk the frames, refuse, what to show) for an event worth a look, else None."""
        first = args[0] if args else None
        if event in refused or startswith(event, "ctypes."):
            return True, True, ""
        if event in immediate:
            name = _text(args[1]) if len(args) > 1 else ""
            if event != "object.__getattr__" and startswith(event, "object.") and name not in RESTRICTED_SET:
                return None
            return False, True, name
        if event in processes or startswith(event, ("os.exec", "os.spawn")):
            return True, False, _text(first)
        if event == "open":
            if type(first) is int:
                return True, True, f"descriptor {first}"
            path, mode = _text(first), _text(args[1]) if len(args) > 1 else "r"
            if inside(path):
                return True, True, path
            if any(c in mode for c in "wax+") and path.endswith(CODE_SUFFIXES):
                return True, True, path
            return None
        if event in ("os.listdir", "os.scandir"):
            path = _text(first)
            return (True, True, path) if inside(path) else None
        if event in ("compile", "exec"):
            name = _text(args[1]) if event == "compile" and len(args) > 1 else \
                _text(first.co_filename) if type(first) is CodeType else ""
            from_file = code_file(name)
            return None if from_file is None else (not from_file, True, name)
        if event == "import" and type(first) is str and first.split(".")[0] == "autograder":
            return True, True, first
        return None

    def hook(event: str, args: tuple) -> None:
        if type(event) is not str or type(args) is not tuple:
            return  # an event of the submission's own making (sys.audit with a str subclass): nothing real
        if event == "object.__getattr__" and len(args) == 2 and type(args[1]) is str \
                and args[1] in RESTORED_READS and type(args[0]) is FunctionType and args[0] in restored:
            return  # (exact types: no hash of the submission's runs here; id() would be an event itself)
        if event not in watched and not startswith(event, ("ctypes.", "os.exec", "os.spawn", "pickle.")):
            return
        me = get_ident()
        if me in busy:
            return
        busy.add(me)
        collected = collecting()
        pause()  # no finalizer of the submission's may run while this thread's events are not watched
        try:
            if event == "pickle.find_class":
                if args and _text(args[0]).split(".")[0] in pickled:
                    report(event, ".".join(_text(a) for a in args[:2]), None, True)
                return
            verdict = judge(event, args)
            if verdict is None:
                return
            walk, refuse, detail = verdict
            frame = origin(getframe(1), walk)
            if frame is not None:
                report(event, detail, frame or None, refuse)
        finally:
            if collected:
                resume()
            busy.discard(me)

    sys.addaudithook(hook)
