"""The kernel's confinement of one worker, applied by the worker to itself before any student code runs:
a session, resource limits, a user id of its own, IPC and network namespaces, Landlock and seccomp.

Each mechanism is used where the kernel offers it and skipped where it does not; `unavailable()` says which
are missing, for the grader's log, and `available()` which are in force, so that the tests can say what
they skip.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import signal
import struct
import sys
import tempfile

from autograder.sandbox import container
from autograder.sandbox.kernel import (  # noqa: F401 - re-exported for the sandbox's other modules
    CAPABILITY_VERSION_3,
    PR_GET_CHILD_SUBREAPER,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    PR_SET_KEEPCAPS,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
    libc,
    prctl,
)
from autograder.sandbox.limits import Limits
from autograder.sandbox.seccomp import seccomp, seccomp_unavailable

CAP_DAC_READ_SEARCH = 2


def baseline_memory() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def close_except(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _keep_only_read_search() -> None:
    """After dropping to the worker's user id, keep one capability: reading and listing any path, so
    that Python can import from an interpreter installed where that user may not look (e.g. under
    /root). Landlock narrows it to the interpreter and the system's libraries."""
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    bit = 1 << CAP_DAC_READ_SEARCH
    data = (ctypes.c_uint32 * 6)(bit, bit, 0, 0, 0, 0)  # effective, permitted, inheritable (x2 words)
    libc().capset(header, data)


# -- namespaces ----------------------------------------------------------------------------------------

def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def new_namespaces() -> bool:
    """An IPC namespace (no System V shared memory, semaphores or message queues shared with another
    submission: they vanish with the worker) and a network namespace with no interface but a loopback
    that is down. As root directly; otherwise inside a user namespace that maps the same user id."""
    flags = container.CLONE_NEWIPC | container.CLONE_NEWNET
    if os.geteuid() == 0:
        return libc().unshare(ctypes.c_int(flags)) == 0
    uid, gid = os.geteuid(), os.getegid()
    if libc().unshare(ctypes.c_int(flags | container.CLONE_NEWUSER)) != 0:
        return False
    container.map_own_ids(None, uid, gid)
    return True


# -- Landlock ----------------------------------------------------------------------------------------------

_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LL_EXECUTE, _LL_WRITE_FILE, _LL_READ_FILE, _LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_LL_WRITES_V1 = sum(1 << b for b in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
_LL_REFER, _LL_TRUNCATE, _LL_IOCTL_DEV, _LL_RESOLVE_UNIX = 1 << 13, 1 << 14, 1 << 15, 1 << 16
_LL_READS = _LL_EXECUTE | _LL_READ_FILE | _LL_READ_DIR
_SYSTEM_READS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
# Outside a container, Landlock also lets a worker read these of the machine, as container.py gives a
# worker in one: five devices (never a terminal of yours), the processors' description of /sys (not
# /sys/class/net), a few files of /etc; of /proc the kernel's tables of processors and memory, and the
# worker's own entries (own_proc()).
_LANDLOCK_READS = (tuple(f"/dev/{name}" for name in container.DEVICES)
                   + (container.CPU_INFO, "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/etc/passwd",
                      "/etc/group") + container.ETC)
# What of /proc/self a program may ask; never another process's entries (the command lines of your
# programs name your files and tokens), nor its own net (without a network namespace of its own it lists
# the machine's sockets) or mounts. Landlock keeps another process's environ, fd, cwd, root, maps and mem
# from the worker anyway, as it keeps ptrace.
_PROC_OWN = ("task", "fd", "fdinfo", "stat", "statm", "status", "maps", "smaps", "limits", "cmdline", "comm")
_PINNED: list[int] = []  # see landlock()


def own_proc() -> list[str]:
    return [f"/proc/{os.getpid()}/{name}" for name in _PROC_OWN]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when there is none."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = libc().syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                                 ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def _installed(path: str, prefixes: set[str]) -> bool:
    """Whether an import path entry is a place packages are installed: inside the interpreter's prefixes,
    a site-packages or dist-packages folder (a user's site too), or a zip of them."""
    path = os.path.normpath(path)
    return (os.path.basename(path) in ("site-packages", "dist-packages") or path.endswith((".zip", ".egg"))
            or any(path.startswith(os.path.normpath(q) + os.sep) for q in prefixes))


@functools.cache
def readable_paths() -> list[str]:
    """What a worker may read: the interpreter, the packages it imported or may import, the system's
    libraries and a few files of /etc. Not the submissions, the output folder, the instructor's extra
    files, Gradescope's /autograder/source or anyone's home. Worked out once, in the clean parent."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths = {*prefixes, *_SYSTEM_READS}
    # Of the import path, only where packages are installed: never the folder the grader was started from
    # (`python -m` puts it first), which may hold the class's submissions or the instructor's files.
    paths.update(p for p in sys.path if os.path.isabs(p) and _installed(p, prefixes))
    for module in list(sys.modules.values()):
        folders = getattr(module, "__path__", None)
        if isinstance(folders, list):  # a package (some modules answer __path__ with other things)
            paths.update(f for f in folders if isinstance(f, str) and os.path.isabs(f))
    found = sorted(os.path.normpath(p) for p in paths if os.path.exists(p) and p != os.sep)
    # A rule covers its whole tree: a path inside another is one rule too many (a worker adds each one).
    return [p for i, p in enumerate(found) if not any(p.startswith(q + os.sep) for q in found[:i])]


def landlock(workdir: str, reads: list[str] | None) -> int:
    """Confines this process and everything it starts: files may be written only inside workdir (and
    /dev/null), read only there and in `reads` (None: reading is left to the user id), no process outside
    this sandbox may be traced or have its /proc entries that ptrace guards read (ABI 1), TCP connections
    and listening are refused (ABI 4), no abstract Unix socket or signal reaches outside it (ABI 6), nor
    a Unix socket by its path (ABI 9, Linux 7.1; before it only seccomp's refusal of sockets stops that).
    Returns the ABI used, 0 when Landlock is not in force."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    writes = _LL_WRITE_FILE | _LL_WRITES_V1 | (_LL_REFER if abi >= 2 else 0) \
        | (_LL_TRUNCATE if abi >= 3 else 0) | (_LL_IOCTL_DEV if abi >= 5 else 0)
    fs = writes | (_LL_READS if reads is not None else 0) | (_LL_RESOLVE_UNIX if abi >= 9 else 0)
    net = 0b11 if abi >= 4 else 0  # bind and connect TCP
    scoped = 0b11 if abi >= 6 else 0  # abstract unix sockets and signals
    attr = struct.pack("=QQQ", fs, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buffer = ctypes.create_string_buffer(attr, len(attr))
    lib = libc()
    ruleset = lib.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), buffer, ctypes.c_size_t(len(attr)),
                          ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    file_only = _LL_EXECUTE | _LL_WRITE_FILE | _LL_READ_FILE | _LL_TRUNCATE | _LL_IOCTL_DEV
    rules = [(workdir, fs),
             (os.devnull, (_LL_WRITE_FILE | _LL_READ_FILE | _LL_TRUNCATE | _LL_IOCTL_DEV) & fs)]
    rules += [(path, _LL_READS & fs) for path in reads or ()]
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= file_only
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
                if lib.syscall(ctypes.c_long(_SYS_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(1),
                               rule, ctypes.c_uint32(0)) < 0 and path in (workdir, os.devnull):
                    return 0
            finally:
                # A rule names an inode, and the kernel makes a new one for a /proc/<pid> entry each time
                # its cached name was dropped: the descriptor stays open, so that the name stays cached
                # (a submission that closes it can only lose its own entries).
                if path.startswith("/proc/") and path.split("/")[2].isdigit():
                    _PINNED.append(fd)
                else:
                    os.close(fd)
        if prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
            return 0
        if lib.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset),
                       ctypes.c_uint32(0)) < 0:
            return 0
        return abi
    finally:
        os.close(ruleset)


def available() -> dict[str, bool]:
    """Which mechanisms this machine offers a worker (for the tests and the docs)."""
    return {"landlock": landlock_abi() >= 1, "seccomp": not seccomp_unavailable()}


def unavailable(contained: bool, limits: Limits) -> list[str]:
    """The protections the workers will go without on this machine, a sentence each for the grader's log
    (they grade all the same). Landlock is used only without a container."""
    missing = []
    if why := seccomp_unavailable():
        missing.append(f"seccomp is unavailable, so workers may make the system calls it refuses (new "
                       f"namespaces, mounts, tracing, memory behind file descriptors): {why}.")
    if not contained and limits.landlock and landlock_abi() < 1:
        missing.append("Landlock is unavailable (it needs Linux 5.13 or newer, and a container runtime that "
                       "does not refuse its system calls), so a worker without a container may read and "
                       "write whatever its user id may, not only its own folder and the interpreter's files.")
    return missing


# -- the whole confinement -----------------------------------------------------------------------------

SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "AUTOGRADER_BATCH": "1", "PYTHONHASHSEED": "0"}


def _tasks_of_user(uid: int) -> int:
    """Processes and threads running under uid (what RLIMIT_NPROC counts)."""
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return count


def confine(uid: int | None, workdir: str, limits: Limits, baseline: int, cpu_seconds: float,
            contained: bool = False) -> None:
    """Everything but the parent-death signal (set once confined: setuid() would clear it). In a container
    (`contained`: its init made the namespaces, container.py) the worker also takes a user namespace of
    its own and drops every capability; outside one, it makes IPC and network namespaces where it can,
    and Landlock confines its files."""
    os.setsid()
    try:
        _write("/proc/self/oom_score_adj", "1000")  # a worker dies first when memory runs out
    except OSError:
        pass
    if not contained:
        new_namespaces()
    # The address space limit gives an ordinary memory hog a MemoryError it can be told about; the cgroup
    # the cgroup, where there is one, also counts what address space misses: shared memory, memfd, the page
    # cache of its files.
    for res, value in ((resource.RLIMIT_AS, baseline + limits.memory_bytes),
                       (resource.RLIMIT_FSIZE, limits.file_bytes),
                       (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, int(cpu_seconds) + 1),
                       (resource.RLIMIT_NOFILE, limits.open_files)):
        resource.setrlimit(res, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if contained:
        if uid is not None:  # as root: the slot's own user id on the machine
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        if container.enter_own_user():
            # counted in its own user namespace: the worker's processes and threads, no one else's
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        container.drop_capabilities()
    elif uid is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        if limits.keep_read_search:
            prctl(PR_SET_KEEPCAPS, 1)  # without it, setuid() clears every capability
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if limits.keep_read_search:
            _keep_only_read_search()
    else:  # the limit counts every process of this user, the grader's own included
        nproc = _tasks_of_user(os.getuid()) + limits.processes
        _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        if hard == resource.RLIM_INFINITY or nproc < hard:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update(SAFE_ENV, HOME=workdir, TMPDIR=workdir)
    tempfile.tempdir = workdir
    if limits.landlock and not contained:
        landlock(workdir, readable_paths() + list(_LANDLOCK_READS) + own_proc())
    seccomp()
