"""Runs student code in worker processes forked from this (torch-loaded) process, and brings back data.

A worker is one fork per submission: it runs the cells, then measures each problem in turn. A hang or a
crash inside one Function costs only that problem: the worker is killed (or dies), the problem fails
with the cause, and a new worker runs the cells again to measure the problems after it. The grader's
snapshot (probe.Snapshot) is taken here once, before any fork, and the objects that exist then are
frozen out of garbage collection, so that a worker writes to as few shared pages as it can: on a
torch-loaded process, copy-on-write faults are most of what a fork costs.

Workers get a new session, their own user id when the grader runs as root (so they cannot write the
output folder, and every process they leave behind can be killed), resource limits (memory, processes,
file size, CPU), a private working directory, a scrubbed environment and, where the kernel has
Landlock, no way to write outside that directory, to open network connections or to signal processes
outside their own sandbox (the grader included), whatever their user id. They send back JSON lines
only; nothing they send is executed or unpickled here, and nothing in a message is trusted: a process
is killed because it belongs to a worker's tree, never because a message names it.

Processes a submission leaves behind are found without trusting it: this process becomes a child
subreaper, so that anything a worker orphans (a double-forked daemon in a session of its own) is
re-parented here and killed; as root, every process of the worker's user id is killed as well. Workers
die with the grader (parent-death signal), so a killed grader leaves no worker running.

What this cannot stop: code in a worker shares the process that measures it, so a determined
submission can still forge the measurements (write made-up numbers into the pipe, patch the probe
through ctypes or the garbage collector). probe.Snapshot undoes ordinary monkeypatching, and a
"loaded" message resets every problem, so that messages written at import count for nothing.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import fcntl
import gc
import json
import os
import resource
import selectors
import shutil
import signal
import stat
import struct
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from autograder import probe as _probing
from autograder.probe import probe as _probe

_dumps, _write, _read, _fork, _exit, _waitpid, _getpid = (json.dumps, os.write, os.read, os.fork, os._exit,
                                                          os.waitpid, os.getpid)  # captured early
MAX_LINE = 8 * 1024 * 1024  # longest message line kept; longer ones are dropped
MAX_CELL_ERRORS = 100
MAX_DRAIN = 64 * 1024 * 1024  # bytes read from a finished worker's pipes, however much a leftover writes
UID_BASE, UID_COUNT = 64000, 1000  # user ids for workers when the grader is root, locked one per worker
UID_LOCKS = ("/run/autograder-uids", os.path.join(tempfile.gettempdir(), "autograder-uids-root"))


@dataclass(frozen=True)
class Limits:
    """Per submission. Times are wall-clock seconds."""

    load_seconds: float = 60.0  # running all cells
    problem_seconds: float = 20.0  # probing one problem
    memory_bytes: int = 3 * 1024**3  # address space on top of what the grader already maps
    processes: int = 64  # processes and threads of the worker's user id (not root: on top of those running)
    file_bytes: int = 16 * 1024**2  # largest file a worker may write
    output_bytes: int = 64 * 1024  # printed output kept for the feedback
    # Keep CAP_DAC_READ_SEARCH after dropping to the worker uid (an interpreter under /root still imports).
    # False drops every capability: the worker reads only what its uid may, so a folder of mode 700
    # (Gradescope's /autograder/source) is closed to it; Python must then be world-readable.
    keep_read_search: bool = True
    landlock: bool = True  # confine writes, network and signals with Landlock where the kernel has it


@dataclass
class Outcome:
    """What came back from one submission's worker."""

    data: dict[str, dict] = field(default_factory=dict)  # problem name -> probe data
    failures: dict[str, str] = field(default_factory=dict)  # problem name -> why there is no data
    cell_errors: list[dict] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0


SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "AUTOGRADER_BATCH": "1", "PYTHONHASHSEED": "0"}


class _CappedWriter:
    """sys.stdout for student code: keeps the first bytes, drops the rest, never fails, so a flood of
    output neither fills the disk nor aborts the cell that printed it."""

    def __init__(self, fd: int, cap: int):
        self.fd, self.left = fd, cap

    def write(self, text: str) -> int:
        if self.left > 0:
            data = str(text).encode("utf-8", "replace")[: self.left]
            self.left -= len(data)
            try:
                _write(self.fd, data)
            except OSError:
                self.left = 0
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


# -- Linux specifics: prctl, capabilities, Landlock ------------------------------------------------------

PR_SET_PDEATHSIG, PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS = 1, 8, 38
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37
CAP_DAC_READ_SEARCH, CAPABILITY_VERSION_3 = 2, 0x20080522
_LIBC: list = []


def _libc():
    if not _LIBC:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _LIBC.append(libc)
    return _LIBC[0]


def _prctl(option: int, value: int) -> int:
    return _libc().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                         ctypes.c_ulong(0))


def _keep_only_read_search() -> None:
    """After dropping to the worker's user id, keep one capability: reading and listing any path, so
    that Python can import from an interpreter installed where that user may not look (e.g. under
    /root). Writing stays limited to what the worker's own user id may write: its private folder."""
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    bit = 1 << CAP_DAC_READ_SEARCH
    data = (ctypes.c_uint32 * 6)(bit, bit, 0, 0, 0, 0)  # effective, permitted, inheritable (x2 words)
    _libc().capset(header, data)


_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LL_EXECUTE, _LL_WRITE_FILE, _LL_READ_FILE, _LL_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_LL_WRITES_V1 = sum(1 << b for b in range(4, 13))  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
_LL_REFER, _LL_TRUNCATE, _LL_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when there is none."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(1))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def _landlock(workdir: str) -> int:
    """Confines this process and everything it starts: files may be written only inside workdir (and
    /dev/null), TCP connections and listening are refused (ABI 4), and no signal reaches a process
    outside this sandbox (ABI 6). Reading is left to the user id and capabilities. Returns the ABI used."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    fs = _LL_WRITE_FILE | _LL_WRITES_V1 | (_LL_REFER if abi >= 2 else 0) | (_LL_TRUNCATE if abi >= 3 else 0) \
        | (_LL_IOCTL_DEV if abi >= 5 else 0)
    net = 0b11 if abi >= 4 else 0  # bind and connect TCP
    scoped = 0b11 if abi >= 6 else 0  # abstract unix sockets and signals
    attr = struct.pack("=QQQ", fs, net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    buffer = ctypes.create_string_buffer(attr, len(attr))
    libc = _libc()
    ruleset = libc.syscall(ctypes.c_long(_SYS_LANDLOCK_CREATE_RULESET), buffer, ctypes.c_size_t(len(attr)),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        return 0
    try:
        file_rights = _LL_WRITE_FILE | (_LL_TRUNCATE if abi >= 3 else 0) | (_LL_IOCTL_DEV if abi >= 5 else 0)
        for path, rights in ((workdir, fs), (os.devnull, file_rights)):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
                added = libc.syscall(ctypes.c_long(_SYS_LANDLOCK_ADD_RULE), ctypes.c_int(ruleset),
                                     ctypes.c_int(1), rule, ctypes.c_uint32(0))
                if added < 0:
                    return 0
            finally:
                os.close(fd)
        if _prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
            return 0
        if libc.syscall(ctypes.c_long(_SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset),
                        ctypes.c_uint32(0)) < 0:
            return 0
        return abi
    finally:
        os.close(ruleset)


# -- the worker side ----------------------------------------------------------------------------------

def _send(fd: int, message: dict) -> None:
    data = (_dumps(message) + "\n").encode()
    while data:
        data = data[_write(fd, data):]


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


def _confine(uid: int | None, workdir: str, limits: Limits, baseline: int, grader: int, output: int,
             cpu_seconds: float) -> None:
    os.setsid()
    for res, value in ((resource.RLIMIT_AS, baseline + limits.memory_bytes), (resource.RLIMIT_FSIZE, limits.file_bytes),
                       (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, int(cpu_seconds) + 1)):
        resource.setrlimit(res, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if uid is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
        if limits.keep_read_search:
            _prctl(PR_SET_KEEPCAPS, 1)  # without it, setuid() clears every capability
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
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid(), which clears it: die with the grader
    if os.getppid() != grader:
        _exit(0)
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update(SAFE_ENV, HOME=workdir, TMPDIR=workdir)
    tempfile.tempdir = workdir
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(null)
    os.close(output)
    if limits.landlock:
        _landlock(workdir)
    sys.stdout = sys.stderr = _CappedWriter(1, limits.output_bytes)
    sys.stdin = open(os.devnull)  # noqa: SIM115


def _reap_children() -> None:
    """Collects the worker's exited children (the grader killed what the cells left running), so that
    they no longer count against the process limit."""
    for _ in range(200):
        try:
            pid, _ = _waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _without_threads() -> None:
    """Threads the cells started would run on while the Functions are measured (and could patch the
    probe between two calls); a forked child has none of them. The worker waits for the child and then
    ends as the child ended, so the grader reads the child's fate as the worker's."""
    try:
        pid = _fork()
    except OSError:
        return  # the process limit is reached: measure here, threads and all
    if pid == 0:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        return
    _, status = _waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(_getpid(), os.WTERMSIG(status))
    _exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _worker(fd: int, control: int, cells: list[str], jobs: list[tuple[Any, list]], seed: int,
            snapshot: _probing.Snapshot) -> None:
    """The worker's whole life: run the cells, then measure each problem in turn. A problem that hangs,
    crashes or ends the process costs only itself: the grader runs the cells again in a new worker for
    the problems after it."""
    me, exec_, compile_, format_exception = _getpid(), exec, compile, traceback.format_exception
    restore, activate, probe = snapshot.restore, _probing.activate, _probe
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    for index, source in enumerate(cells):
        _send(fd, {"event": "cell", "index": index})
        error = None
        try:
            exec_(compile_(source, f"<cell {index + 1}>", "exec"), namespace)  # this is the job
        except BaseException as caught:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            error = caught
        if _getpid() != me:  # a process the cell forked came back here: only the worker speaks
            _exit(0)
        if error is not None:
            text = "".join(format_exception(type(error), error, error.__traceback__))
            _send(fd, {"event": "cell-error", "index": index, "type": type(error).__name__,
                       "error": text[-4000:]})
            del error
    restore()
    activate(snapshot)
    _send(fd, {"event": "loaded"})
    if not _read(control, 1):  # the grader clears away whatever the cells left running, then says go
        _exit(0)
    for sig in (signal.SIGCHLD, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN if sig == signal.SIGPIPE else signal.SIG_DFL)
    signal.alarm(0)
    for timer in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(timer, 0)
    _reap_children()
    if _threads() > 1:
        _without_threads()
        me = _getpid()
    for problem, cases, expected in jobs:
        restore()
        _send(fd, {"event": "problem-start", "problem": problem.name})
        data = probe(problem, namespace, cases, seed, expected)
        if _getpid() != me:  # the Function forked, and its copy came back here
            _exit(0)
        restore()
        _send(fd, {"event": "problem", "problem": problem.name, "data": data})


# -- the grader side --------------------------------------------------------------------------------

def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {signal.SIGKILL: " (out of memory, or killed from outside?)",
                signal.SIGSEGV: " (a crash: a segmentation fault, e.g. from ctypes, a C extension or endless "
                                "recursion)",
                signal.SIGABRT: " (an abort, e.g. os.abort() or a failed check in C code)",
                signal.SIGXCPU: " (it used up its CPU time)",
                signal.SIGBUS: " (a crash: a bus error)"}.get(sig, "")
        return f"was killed by {name}{hint}"
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)} (the code called os._exit() or exit from C)"
    return f"ended (status {status})"


def _baseline_memory() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _close_except(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, state) for every process now running."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        table[int(name)] = (int(fields[1]), int(fields[3]), fields[0].decode())
    return table


def _kill_tree(root: int, keep_root: bool = True) -> int:
    """Kills every descendant of root (and root itself unless keep_root), again and again until none is
    left alive: processes forking while they are being killed (a fork bomb) are caught in a later round.
    Returns how many it found alive at first."""
    found = 0
    for _ in range(100):
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        alive, stack = [], list(children.get(root, []))
        while stack:
            pid = stack.pop()
            stack += children.get(pid, [])
            if table[pid][2] not in ("Z", "X"):
                alive.append(pid)
        if not keep_root and root in table and table[root][2] not in ("Z", "X"):
            alive.append(root)
        if not alive:
            return found
        found = found or len(alive)
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
    return found


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_user(uid: int) -> None:
    """Kills every process of a worker's user id, including ones that left its session."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


class _Reaper:
    """Makes this process a child subreaper while grading: whatever a worker orphans (a daemon that
    double-forked into a session of its own) becomes a child of the grader, to be killed and reaped."""

    def __init__(self):
        self.pid, self.sid = os.getpid(), os.getsid(0)
        self.before = {pid for pid, (ppid, _, _) in _processes().items() if ppid == self.pid}
        flag = ctypes.c_int(0)
        self.was = _libc().prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value
        self.active = _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0

    def sweep(self, workers: set[int]) -> int:
        """Kills and reaps the grader's children that are neither workers nor its own helpers; returns
        how many there were."""
        strays = [pid for pid, (ppid, sid, _) in _processes().items()
                  if ppid == self.pid and pid not in workers and pid not in self.before and sid != self.sid]
        for pid in strays:
            _kill_tree(pid, keep_root=False)
        for pid in strays:
            for _ in range(100):
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        break
                except ChildProcessError:
                    break
                time.sleep(0.01)
        return len(strays)

    def close(self) -> None:
        if self.active and not self.was:
            _prctl(PR_SET_CHILD_SUBREAPER, 0)


class _UserIds:
    """Worker user ids for a root grader, each held under an exclusive lock for as long as the grader
    runs, so that two graders on one machine never share (or kill) each other's worker ids."""

    def __init__(self, count: int):
        self.fds: dict[int, int] = {}
        folder = self._folder()
        for uid in range(UID_BASE, UID_BASE + UID_COUNT):
            if len(self.fds) == count:
                break
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            fd = os.open(os.path.join(folder, str(uid)), flags, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fds[uid] = fd
            _kill_user(uid)  # anything left under this id by a grader that was killed
        if not self.fds:
            raise RuntimeError("no free worker user id: too many graders running at once")
        self.free = sorted(self.fds)

    @staticmethod
    def _folder() -> str:
        for folder in UID_LOCKS:
            try:
                os.makedirs(folder, mode=0o700, exist_ok=True)
                info = os.lstat(folder)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
                return folder  # only root can create or replace lock files in it
        raise RuntimeError(f"cannot make a private lock folder for worker user ids (tried "
                           f"{', '.join(UID_LOCKS)})")

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


class _Job:
    """One running submission, seen from the grader: its pipes, its deadlines and what it said.

    A worker that dies or hangs while a problem is measured costs that problem only: the job ends with
    `remaining` naming the problems still to measure, and run_all starts a new worker for them (the
    cells run again; their errors and output were recorded the first time)."""

    def __init__(self, key: Any, cells: list[str], jobs: list[tuple[Any, list]], limits: Limits, seed: int,
                 uid: int | None, baseline: int, snapshot: _probing.Snapshot, previous: Outcome | None = None):
        self.key, self.cells, self.jobs, self.limits, self.uid = key, cells, jobs, limits, uid
        self.problems = [job[0].name for job in jobs]
        self.outcome = previous or Outcome()
        self.again = previous is not None
        self.remaining: list[str] = []
        self.crowded = False  # the worker was seen with processes of its own
        self.started = time.monotonic()
        self.deadline = self.started + limits.load_seconds
        self.cell, self.loaded, self.current, self.stopped = -1, False, None, False
        self.cleared = float("-inf")  # when leftovers were last looked for
        self.buffer, self.skipping = bytearray(), False
        self.output, self.output_dropped = bytearray(), False
        self.workdir = tempfile.mkdtemp(prefix="autograder-")
        if uid is not None:
            os.chown(self.workdir, uid, uid)
        messages_r, messages_w = os.pipe()
        output_r, output_w = os.pipe()
        control_r, control_w = os.pipe()
        cpu = limits.load_seconds + (len(jobs) + 1) * limits.problem_seconds
        grader = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the grader's code
            try:
                _close_except({messages_w, output_w, control_r})  # other workers' pipes are not its business
                _confine(uid, self.workdir, limits, baseline, grader, output_w, cpu)
                _worker(messages_w, control_r, cells, jobs, seed, snapshot)
            except BaseException:  # noqa: BLE001
                pass
            os._exit(0)
        for fd in (messages_w, output_w, control_r):
            os.close(fd)
        for fd in (messages_r, output_r, control_w):
            os.set_blocking(fd, False)
        self.pid, self.messages, self.printed, self.control = pid, messages_r, output_r, control_w
        try:
            self.pidfd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.pidfd = None

    # -- reading -------------------------------------------------------------------------------------

    def read(self, fd: int, budget: int = 16) -> bool:
        """Reads what is waiting on one of the worker's pipes; False at end of file."""
        for _ in range(budget):
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            if fd == self.messages:
                self.feed(chunk)
            else:
                self.keep_output(chunk)
        return True

    def keep_output(self, chunk: bytes) -> None:
        if self.again:
            return
        room = self.limits.output_bytes - len(self.output)
        if room > 0:
            self.output += chunk[:room]
        if len(chunk) > room:
            self.output_dropped = True

    def feed(self, chunk: bytes) -> None:
        if b"\n" not in chunk:
            self.buffer += chunk
        else:
            *lines, rest = (bytes(self.buffer) + chunk).split(b"\n")
            self.buffer = bytearray(rest)
            for line in lines:
                if self.skipping:
                    self.skipping = False
                elif len(line) <= MAX_LINE:
                    self.handle(line)
        if len(self.buffer) > MAX_LINE:  # drop a line too long to be ours, up to its end
            self.buffer, self.skipping = bytearray(), True

    def handle(self, line: bytes) -> None:
        """One message. Anything malformed is ignored: the worker's process is the submission's."""
        try:
            message = json.loads(line)
            if isinstance(message, dict):
                self._handle(message, str(message.get("event")), message.get("problem"))
        except Exception:  # noqa: BLE001 - RecursionError from deep nesting included
            pass

    def _handle(self, message: dict, event: str, problem: Any) -> None:
        now = time.monotonic()
        if event == "cell":
            self.cell = int(message["index"])
        elif event == "cell-error" and not self.again and len(self.outcome.cell_errors) < MAX_CELL_ERRORS:
            self.outcome.cell_errors.append({"index": int(message["index"]) + 1,
                                             "type": str(message.get("type"))[:100],
                                             "error": str(message["error"])[-4000:]})
        elif event == "loaded" and not self.stopped:
            # Everything about this worker's problems said before this is void: code that ran at import wrote it.
            for name in self.problems:
                self.outcome.data.pop(name, None)
                self.outcome.failures.pop(name, None)
            self.loaded, self.current = True, None
            self.deadline = now + self.limits.problem_seconds
            if now - self.cleared >= 1.0:  # a flood of forged "loaded" lines must not keep the grader busy
                self.cleared = now
                self.crowded |= _kill_tree(self.pid) > 0  # what the cells left running: daemons, fork bombs
            with contextlib.suppress(OSError):
                os.write(self.control, b"g")
        elif not self.loaded or problem not in self.problems:
            return
        elif event == "problem-start":
            self.current = problem
            self.outcome.data.pop(problem, None)
            self.outcome.failures.pop(problem, None)
            self.deadline = now + self.limits.problem_seconds
        elif event == "problem" and problem == self.current and isinstance(message.get("data"), dict):
            self.outcome.data[problem] = message["data"]

    # -- deadlines and the end ---------------------------------------------------------------------------

    def expire(self) -> None:
        """A deadline passed: kill what is running and record why."""
        if self.loaded and self.current is not None:
            self.outcome.data.pop(self.current, None)
            self.outcome.failures[self.current] = (
                f"Grading {self.current} did not finish within {self.limits.problem_seconds:g} s: calling it "
                f"loops or waits forever (check forward and backward for endless loops).")
            self.current = None
            self.deadline = float("inf")
            _kill_group(self.pid)  # the worker and all it started; a new one measures the problems left
            _kill_tree(self.pid, keep_root=False)
        elif self.loaded:
            self.stop("The process running your code stopped responding between two problems.")
        else:
            self.stop(f"Your code did not finish running cell {self.cell + 1} within "
                      f"{self.limits.load_seconds:g} s (an endless loop, or work too long for grading), so "
                      f"nothing after it could be graded.")

    def stop(self, reason: str) -> None:
        for name in self.problems:
            if name not in self.outcome.data:
                self.outcome.failures.setdefault(name, reason)
        self.stopped = True
        _kill_group(self.pid)
        _kill_tree(self.pid, keep_root=False)
        self.deadline = float("inf")

    def exited(self) -> bool:
        """Whether the worker has ended. It is not reaped yet: while it is a zombie, its pid and process
        group id cannot be given to another process, so killing that group stays safe."""
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def drain(self) -> None:
        """Reads what the worker left in its pipes (a bounded amount: a leftover may keep writing)."""
        for fd in (self.messages, self.printed):
            total = 0
            while total < MAX_DRAIN:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                total += len(chunk)
                self.feed(chunk) if fd == self.messages else self.keep_output(chunk)

    def finish(self, reaper: _Reaper | None, workers: set[int]) -> Outcome:
        """The worker has ended: read what it left in the pipes, clear away what it left running, and
        say why any problem has no data."""
        self.drain()
        _kill_group(self.pid)  # stragglers in the worker's group; the worker itself is a zombie
        try:
            status = os.waitpid(self.pid, 0)[1]
        except ChildProcessError:
            status = 0
        if not self.loaded and not self.stopped:
            self.stop(f"Your program {_describe_status(status)} while running cell {self.cell + 1}, so nothing "
                      f"after it could be graded.")
        data, failures = self.outcome.data, self.outcome.failures
        if self.current is not None and self.current not in data:
            failures.setdefault(self.current, f"Grading {self.current} stopped: the process running your code "
                                              f"{_describe_status(status)} while calling it.")
        left = [name for name in self.problems if name not in data and name not in failures]
        if left and len(left) < len(self.problems) and not self.stopped:
            self.remaining = left  # this worker got somewhere: a new one takes over
        else:
            for name in left:
                failures[name] = f"Grading {name} stopped: the worker {_describe_status(status)}."
        strays = reaper.sweep(workers) if reaper is not None else 0
        if self.uid is not None and (strays or self.crowded or reaper is None or not reaper.active):
            _kill_user(self.uid)  # a backstop: the subreaper already caught whatever left the worker's tree
        for fd in (self.messages, self.printed, self.control, self.pidfd):
            if fd is not None:
                os.close(fd)
        _remove(self.workdir)
        if not self.again:
            text = self.output.decode("utf-8", "replace")
            self.outcome.output = text + ("\n[... output truncated ...]" if self.output_dropped else "")
        self.outcome.seconds += time.monotonic() - self.started
        return self.outcome


def _remove(folder: str) -> None:
    """Removes a worker's folder, even where its code took away the permissions."""
    def allow_and_retry(function, path, _):
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            function(path)

    shutil.rmtree(folder, onerror=allow_and_retry)


def default_workers() -> int:
    """Two workers per core this process may run on: a submission that waits (a sleep left in a cell,
    a file to read) then leaves its core to another instead of idling it. Workers that all compute
    share the cores at no loss."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 * max(1, cores)


def run_all(tasks: list[tuple[Any, list[str], list[tuple[Any, list, list | None]]]], limits: Limits = Limits(),
            workers: int | None = None, seed: int = 0):
    """Runs (key, cells, [(problem, encoded cases, expected)]) tasks, `workers` at a time (see probe.probe
    for the cases and expectations); yields (key, Outcome) as each finishes."""
    workers = workers or default_workers()
    baseline = _baseline_memory()
    snapshot = _probing.Snapshot()  # the grader as it is before any submission runs, put back in workers
    # Objects that exist now are never collected: a worker's garbage collector then leaves them alone
    # instead of writing to every page this process shares with it (copy-on-write is most of a fork's cost).
    gc.freeze()
    uids = _UserIds(workers) if os.geteuid() == 0 else None
    slots: list[int | None] = list(uids.free) if uids else [None] * workers
    reaper = _Reaper()
    pending: list[tuple[Any, list[str], list, Outcome | None]] = [(*task, None) for task in tasks]
    running: dict[int, _Job] = {}
    selector = selectors.DefaultSelector()
    last_sweep = time.monotonic()

    def close(job: _Job) -> None:
        for fd in (job.messages, job.printed, job.pidfd):
            if fd is not None and fd in selector.get_map():
                selector.unregister(fd)

    try:
        while pending or running:
            while pending and slots:
                key, cells, jobs, previous = pending.pop(0)
                slot = slots.pop(0)
                job = _Job(key, cells, jobs, limits, seed, slot, baseline, snapshot, previous)
                job.slot = slot
                running[job.pid] = job
                selector.register(job.messages, selectors.EVENT_READ, (job, "messages"))
                selector.register(job.printed, selectors.EVENT_READ, (job, "output"))
                if job.pidfd is not None:
                    selector.register(job.pidfd, selectors.EVENT_READ, (job, "exit"))
            now = time.monotonic()
            wait = min(min(j.deadline for j in running.values()) - now, 1.0)
            if any(j.pidfd is None for j in running.values()):
                wait = min(wait, 0.2)  # no pidfd: look for ended workers often
            for key, _ in selector.select(timeout=max(0.0, wait)):
                job, kind = key.data
                if kind == "exit":
                    selector.unregister(key.fd)
                elif not job.read(key.fd):
                    selector.unregister(key.fd)  # end of file; the worker's end is seen through its pid
            done = [job for job in running.values() if job.exited()]
            for job in done:
                close(job)
                del running[job.pid]
                slots.append(job.slot)
                outcome = job.finish(reaper, set(running))
                if job.remaining:  # the worker died measuring a problem: a new one measures the rest
                    pending.insert(0, (job.key, job.cells, [j for j in job.jobs if j[0].name in job.remaining],
                                       outcome))
                else:
                    yield job.key, outcome
            now = time.monotonic()
            for job in list(running.values()):
                if now >= job.deadline:
                    job.expire()
            if now - last_sweep >= 1.0:
                reaper.sweep(set(running))
                last_sweep = now
    finally:
        for job in list(running.values()):
            job.stop("The grader was interrupted.")
        for job in list(running.values()):
            close(job)
            job.finish(reaper, set(running) - {job.pid})
        reaper.sweep(set())
        reaper.close()
        if uids:
            uids.close()
        selector.close()
