"""Runs student code in worker processes forked from this (torch-loaded) process, and brings back data.

A worker runs a submission's cells, then forks one child per problem to probe it, so that a hang or a
crash inside one Function costs only that problem. Workers get a new session, their own user id when
the grader runs as root (so they cannot write the output folder, and every process they leave behind
can be killed), resource limits, a private working directory and a scrubbed environment. They send
back JSON lines only; nothing they send is executed or unpickled here.
"""

from __future__ import annotations

import builtins
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from autograder.probe import probe as _probe

_dumps, _write, _fork, _exit, _waitpid = json.dumps, os.write, os.fork, os._exit, os.waitpid  # captured early
MAX_LINE = 8 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Per submission. Times are wall-clock seconds."""

    load_seconds: float = 60.0  # running all cells
    problem_seconds: float = 20.0  # probing one problem
    memory_bytes: int = 3 * 1024**3  # address space on top of what the grader already maps
    processes: int = 64  # processes and threads of the worker's user id
    file_bytes: int = 16 * 1024**2  # largest file a worker may write
    output_bytes: int = 64 * 1024  # printed output kept for the feedback
    # Keep CAP_DAC_READ_SEARCH after dropping to the worker uid (an interpreter under /root still imports).
    # False drops every capability: the worker reads only what its uid may, so a folder of mode 700
    # (Gradescope's /autograder/source) is closed to it; Python must then be world-readable.
    keep_read_search: bool = True


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


PR_SET_KEEPCAPS, CAP_DAC_READ_SEARCH, CAPABILITY_VERSION_3 = 8, 2, 0x20080522


def _prctl(option: int, value: int) -> None:
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _keep_only_read_search() -> None:
    """After dropping to the worker's user id, keep one capability: reading and listing any path, so
    that Python can import from an interpreter installed where that user may not look (e.g. under
    /root). Writing stays limited to what the worker's own user id may write: its private folder."""
    import ctypes

    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    bit = 1 << CAP_DAC_READ_SEARCH
    data = (ctypes.c_uint32 * 6)(bit, bit, 0, 0, 0, 0)  # effective, permitted, inheritable (x2 words)
    ctypes.CDLL(None, use_errno=True).capset(header, data)


def _send(fd: int, message: dict) -> None:
    data = (_dumps(message) + "\n").encode()
    while data:
        data = data[_write(fd, data):]


def _confine(uid: int | None, workdir: str, limits: Limits, baseline: int) -> None:
    os.setsid()
    for res, value in ((resource.RLIMIT_AS, baseline + limits.memory_bytes), (resource.RLIMIT_FSIZE, limits.file_bytes),
                       (resource.RLIMIT_CORE, 0)):
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
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update(SAFE_ENV, HOME=workdir, TMPDIR=workdir)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(os.path.join(workdir, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    sys.stdout = sys.stderr = _CappedWriter(1, limits.output_bytes)
    sys.stdin = open(os.devnull)  # noqa: SIM115


def _worker(fd: int, cells: list[str], jobs: list[tuple[Any, list]], seed: int) -> None:
    """The worker's whole life: run the cells, then probe each problem in a child of its own."""
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    for index, source in enumerate(cells):
        _send(fd, {"event": "cell", "index": index})
        try:
            exec(compile(source, f"<cell {index + 1}>", "exec"), namespace)  # noqa: S102 - this is the job
        except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            _send(fd, {"event": "cell-error", "index": index, "error": text[-4000:]})
    _send(fd, {"event": "loaded"})
    for problem, cases in jobs:
        pid = _fork()
        if pid == 0:
            os.setpgid(0, 0)
            _send(fd, {"event": "problem-start", "problem": problem.name, "pid": os.getpid()})
            try:
                data = _probe(problem, namespace, cases, seed)
                _send(fd, {"event": "problem", "problem": problem.name, "data": data})
            finally:
                _exit(0)
        _, status = _waitpid(pid, 0)
        _send(fd, {"event": "problem-end", "problem": problem.name, "status": status})


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = " (out of memory?)" if sig == signal.SIGKILL else " (a crash, e.g. endless recursion)" \
            if sig == signal.SIGSEGV else ""
        return f"was killed by {name}{hint}"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _baseline_memory() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _close_except(keep: int) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != keep:
            try:
                os.close(fd)
            except OSError:
                pass


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


UID_BASE, UID_COUNT = 64000, 1000  # the worker user ids, when the grader runs as root


def _claim_uids(count: int) -> tuple[list[int], list[socket.socket]]:
    """`count` worker user ids that no other grader on this machine is using. Two graders sharing a uid
    would kill each other's workers (_kill_user kills every process of the uid), so each uid is claimed
    by binding an abstract Unix socket named after it; the claim ends when this process closes the
    sockets or dies."""
    uids, claims = [], []
    for uid in range(UID_BASE, UID_BASE + UID_COUNT):
        if len(uids) == count:
            break
        claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            claim.bind(f"\0autograder-uid-{uid}")
        except OSError:
            claim.close()
            continue
        uids.append(uid)
        claims.append(claim)
    if len(uids) < count:
        for claim in claims:
            claim.close()
        raise RuntimeError(f"No free worker user id in {UID_BASE}..{UID_BASE + UID_COUNT - 1}: too many graders "
                           f"run at once on this machine.")
    return uids, claims


class _Job:
    """One running submission, seen from the grader: a pipe to read and deadlines to keep."""

    def __init__(self, key: Any, cells: list[str], jobs: list[tuple[Any, list]], limits: Limits, seed: int,
                 uid: int | None, baseline: int):
        self.key, self.limits, self.uid = key, limits, uid
        self.problems = [p.name for p, _ in jobs]
        self.outcome = Outcome()
        self.started = time.monotonic()
        self.deadline = self.started + limits.load_seconds
        self.cell, self.loaded, self.current, self.child = -1, False, None, None
        self.buffer = b""
        self.workdir = tempfile.mkdtemp(prefix="autograder-")
        if uid is not None:
            os.chown(self.workdir, uid, uid)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker: never returns into the grader's code
            try:
                _close_except(write)  # other workers' pipes are none of this worker's business
                _confine(uid, self.workdir, limits, baseline)
                _worker(write, cells, jobs, seed)
            except BaseException:  # noqa: BLE001
                pass
            os._exit(0)
        os.close(write)
        self.pid, self.fd = pid, read

    def feed(self, chunk: bytes) -> None:
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.handle(line)
        if len(self.buffer) > MAX_LINE:
            self.buffer = b""

    def handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
            event = message["event"]
        except (ValueError, KeyError, TypeError):
            return
        now = time.monotonic()
        if event == "cell":
            self.cell = int(message["index"])
        elif event == "cell-error":
            self.outcome.cell_errors.append({"index": int(message["index"]) + 1, "error": str(message["error"])})
        elif event == "loaded":
            self.loaded = True
        elif event == "problem-start" and message.get("problem") in self.problems:
            self.current, self.child = message["problem"], int(message["pid"])
            self.deadline = now + self.limits.problem_seconds
        elif event == "problem" and message.get("problem") == self.current and isinstance(message.get("data"), dict):
            self.outcome.data[self.current] = message["data"]
        elif event == "problem-end" and message.get("problem") == self.current:
            if self.current not in self.outcome.data and self.current not in self.outcome.failures:
                self.outcome.failures[self.current] = (
                    f"Grading {self.current} stopped: the process running your code "
                    f"{_describe_status(int(message['status']))} while calling it.")
            self.current, self.child = None, None
            self.deadline = now + self.limits.problem_seconds

    def expire(self) -> None:
        """A deadline passed: kill what is running and record why."""
        if self.loaded and self.current is not None:
            self.outcome.failures[self.current] = (
                f"Grading {self.current} did not finish within {self.limits.problem_seconds:g} s: calling it "
                f"loops or waits forever (check forward and backward for endless loops).")
            _kill_group(self.child)
            self.current, self.child = None, None
            self.deadline = time.monotonic() + self.limits.problem_seconds
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
        _kill_group(self.pid)
        if self.child:
            _kill_group(self.child)
        self.deadline = float("inf")

    def finish(self) -> Outcome:
        """The worker closed its pipe: reap it, clean up, and say why any problem has no data."""
        _, status = os.waitpid(self.pid, 0)
        if not self.loaded:
            self.stop(f"Your program {_describe_status(status)} while running cell {self.cell + 1}, so nothing "
                      f"after it could be graded.")
        for name in self.problems:
            if name not in self.outcome.data:
                self.outcome.failures.setdefault(name, f"Grading {name} stopped: the worker {_describe_status(status)}.")
        _kill_group(self.pid)
        if self.uid is not None:
            _kill_user(self.uid)
        self.outcome.output = _read_head(os.path.join(self.workdir, "output.txt"), self.limits.output_bytes)
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.close(self.fd)
        self.outcome.seconds = time.monotonic() - self.started
        return self.outcome


def _read_head(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", "replace")
    return text + ("\n[... output truncated ...]" if len(data) > limit else "")


def run_all(tasks: list[tuple[Any, list[str], list[tuple[Any, list]]]], limits: Limits = Limits(),
            workers: int | None = None, seed: int = 0):
    """Runs (key, cells, [(problem, encoded cases)]) tasks, `workers` at a time; yields (key, Outcome)
    as each finishes."""
    workers = workers or os.cpu_count() or 1
    uids, claims = _claim_uids(workers) if os.geteuid() == 0 else ([None] * workers, [])
    baseline = _baseline_memory()
    free_slots = list(range(workers))
    pending, running = list(tasks), {}
    selector = selectors.DefaultSelector()
    try:
        while pending or running:
            while pending and free_slots:
                key, cells, jobs = pending.pop(0)
                slot = free_slots.pop(0)
                job = _Job(key, cells, jobs, limits, seed, uids[slot], baseline)
                job.slot = slot
                running[job.fd] = job
                selector.register(job.fd, selectors.EVENT_READ, job)
            timeout = max(0.0, min(j.deadline for j in running.values()) - time.monotonic())
            for key, _ in selector.select(timeout=min(timeout, 1.0)):
                job = key.data
                chunk = os.read(job.fd, 1 << 16)
                if chunk:
                    job.feed(chunk)
                    continue
                selector.unregister(job.fd)
                del running[job.fd]
                free_slots.append(job.slot)
                yield job.key, job.finish()
            now = time.monotonic()
            for job in list(running.values()):
                if now >= job.deadline:
                    job.expire()
    finally:
        for job in running.values():
            job.stop("The grader was interrupted.")
        selector.close()
        for claim in claims:
            claim.close()
