"""What counts as reaching into the grader when read in a submission's source (reaching.py reads it).

Everything a grading worker runs beside the submission is the submission's to find: the frames above its
calls, the garbage collector's objects, memory through ctypes, the grader's modules, the worker's file
descriptors. Right submissions, written in every way the lessons teach, use none of the names below
(tests/judge/test_reaching.py reads every solution and every right Function of tests/wrong_functions.py).
Each name maps to the phrase a page shows, saying what the submission does with it.
"""

from __future__ import annotations

import re

FRAMES = "looks at the frames of the code running it"
OBJECTS = "walks the objects of the process (the garbage collector's, a function's inside)"
MEMORY = "reads or writes the process's memory directly"
GRADER = "reaches into the grader's own modules"
DYNAMIC = "runs code built while it runs"
BY_NAME = "looks up attributes or modules by names built while it runs"
PROCESS = "uses the process's file descriptors, processes or signals directly"
HOOKS = "installs a hook that sees the code running around it"

# Attribute names that give frames, code or the inside of objects, whatever object they are read on.
ATTRIBUTES = {
    **dict.fromkeys(("f_back", "f_locals", "f_globals", "f_builtins", "f_code", "f_trace", "f_lasti",
                     "tb_frame", "tb_next", "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code",
                     "cr_await", "ag_frame", "ag_code", "_getframe", "_getframemodulename",
                     "_current_frames", "_current_exceptions", "currentframe", "getouterframes",
                     "getinnerframes", "getframeinfo", "getargvalues", "walk_stack", "walk_tb",
                     "extract_stack", "print_stack", "format_stack", "StackSummary", "FrameSummary",
                     "eval_frame", "set_eval_frame", "_set_eval_frame", "convert_frame"), FRAMES),
    **dict.fromkeys(("get_objects", "get_referrers", "get_referents", "cell_contents", "co_code",
                     "co_consts", "co_names", "__globals__", "__code__", "__closure__", "__builtins__",
                     "__subclasses__", "__traceback__", "__dict__", "__getattribute__", "__self__",
                     "__func__", "__defaults__", "__kwdefaults__", "__reduce__", "__reduce_ex__", "__bases__",
                     "__base__", "__mro__", "__wrapped__", "__objclass__", "__loader__", "__spec__", "_C",
                     "__annotations__", "ForwardRef", "get_type_hints"),
                    OBJECTS),
    **dict.fromkeys(("ctypes", "_ctypes", "pythonapi", "CDLL", "PyDLL", "cdll", "pydll", "from_address",
                     "ctypeslib", "as_strided", "__array_interface__", "__array_struct__",
                     "__cuda_array_interface__", "cpp_extension", "load_inline", "load_library"), MEMORY),
    **dict.fromkeys(("__import__", "attrgetter", "methodcaller", "get_field", "_import_dotted_name",
                     "resolve_name", "import_module", "sys", "os", "gc", "inspect", "builtins", "importlib",
                     "subprocess", "pickle", "marshal", "mmap", "socket", "pdb", "multiprocessing", "posix",
                     "types"), BY_NAME),
    **dict.fromkeys(("settrace", "setprofile", "gettrace", "getprofile", "addaudithook", "monitoring",
                     "settrace_all_threads", "setprofile_all_threads"), HOOKS),
}

# torch._C's names a tensor subclass is taught to use (the rest of torch._C reaches memory by address)
C_ALLOWED = {"DisableTorchFunctionSubclass", "DisableTorchFunction", "_disabled_torch_function_impl"}

# Modules no right submission imports, whatever it takes from them.
MODULES = {
    **dict.fromkeys(("inspect", "pdb", "bdb", "cgitb", "pydoc"), FRAMES),
    **dict.fromkeys(("ctypes", "_ctypes", "cffi", "mmap", "numpy.ctypeslib",
                     "torch._C", "torch.utils.cpp_extension"), MEMORY),
    **dict.fromkeys(("code", "codeop", "runpy", "py_compile", "compileall", "marshal", "pickle", "_pickle",
                     "cPickle", "shelve", "copyreg", "dill", "cloudpickle", "torch.package", "sympy"),
                    DYNAMIC),
    **dict.fromkeys(("importlib", "imp", "pkgutil", "zipimport", "builtins", "__builtin__", "site",
                     "sitecustomize", "usercustomize", "unittest", "logging.config"), BY_NAME),
    **dict.fromkeys(("subprocess", "multiprocessing", "torch.multiprocessing", "_posixsubprocess", "pty",
                     "socket", "_socket", "posix", "nt", "_io"), PROCESS),
}

# Modules a right submission may use for these attributes only (sys.path, os.environ, gc.collect, ...).
ALLOWED = {
    "sys": {"path", "version", "version_info", "float_info", "int_info", "maxsize", "platform", "stdout",
            "stderr", "argv", "byteorder", "getrecursionlimit", "setrecursionlimit", "getsizeof", "exit",
            "float_repr_style", "implementation", "hexversion", "executable", "prefix", "__stdout__",
            "__stderr__", "setswitchinterval", "getswitchinterval", "intern", "getdefaultencoding",
            "getfilesystemencoding", "flags", "maxunicode", "api_version", "copyright",
            "dont_write_bytecode"},
    "gc": {"collect", "disable", "enable", "isenabled", "get_count", "get_threshold", "set_threshold",
           "get_stats", "garbage", "is_tracked", "is_finalized", "freeze", "unfreeze", "get_freeze_count"},
    "types": {"SimpleNamespace", "MappingProxyType", "GenericAlias", "NoneType", "UnionType"},
    "io": {"BytesIO", "StringIO"},
    "traceback": {"print_exc", "format_exc", "print_exception", "format_exception",
                  "format_exception_only", "TracebackException"},
    "threading": {"Thread", "Lock", "RLock", "Event", "Condition", "Semaphore", "BoundedSemaphore", "Barrier",
                  "Timer", "local", "current_thread", "get_ident", "active_count", "main_thread"},
    "autograder": {"check", "draw", "expect_error", "predict", "warn_if_no_graphviz", "__version__"},
}
# Attributes of os that reach the worker's file descriptors (its channel to the grader among them), or run
# programs that inherit them; the rest of os (paths, the environment, exits, signals) does not.
DENIED = {"os": {"write", "read", "writev", "readv", "pwrite", "pread", "pwritev", "preadv", "fdopen",
                 "dup", "dup2", "open", "close", "closerange", "pipe", "pipe2", "sendfile", "splice",
                 "copy_file_range", "set_inheritable", "set_blocking", "lseek", "memfd_create", "openpty",
                 "mkfifo", "system", "popen", "execl", "execle", "execlp", "execlpe", "execv", "execve",
                 "execvp", "execvpe",
                 "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
                 "posix_spawn", "posix_spawnp", "fchdir", "fchmod", "fchown", "ftruncate", "fsync", "eventfd",
                 "eventfd_write", "login_tty"}}
ALLOWED_WHAT = {"sys": FRAMES, "os": PROCESS, "gc": OBJECTS, "types": DYNAMIC, "io": PROCESS,
                "traceback": FRAMES, "threading": HOOKS, "autograder": GRADER}

# Builtins that run code or reach names from strings: always reaching, whatever they are given.
BUILTINS = {"exec": DYNAMIC, "eval": DYNAMIC, "compile": DYNAMIC, "__import__": BY_NAME, "globals": OBJECTS,
            "locals": FRAMES, "vars": OBJECTS, "breakpoint": FRAMES, "__builtins__": OBJECTS}
# Builtins that are fine with a name written out, and reaching with one built while the code runs.
BY_STRING = {"getattr", "setattr", "delattr", "hasattr"}

# Words in a string that point at the same (a name passed to a resolver such as mock.patch or pydoc).
_WORDS = [n for n in ATTRIBUTES if "_" in n.strip("_") or n.startswith("__")]
_WORDS += ["ctypes", "pythonapi", "CDLL", "importlib", "builtins", "autograder.sandbox", "autograder.measure",
           "autograder.judge"]
STRING_WORDS = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, _WORDS)) + r")(?![A-Za-z0-9_])"
                          r"|/proc/|/dev/fd")
