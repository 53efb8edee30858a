"""The grader's side of the sandbox: it starts the clean parent, hands each submission to a worker (job.py),
and collects what comes back, a few workers at a time.

A hang or a crash inside one Function costs only that problem: the worker is killed (or dies), the
problem fails with the cause, and a new worker runs the cells again to measure the problems after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from autograder.sandbox.cgroups import Cgroups
from autograder.sandbox.confine import PR_SET_DUMPABLE, Limits, prctl
from autograder.sandbox.job import Job, Measure, Outcome, Task, failed
from autograder.sandbox.processes import Reaper, UserIds, sweep_leftovers


def default_workers() -> int:
    """Two workers per core this process may run on: a submission that waits (a sleep left in a cell,
    a file to read) then leaves its core to another instead of idling it."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 * max(1, cores)


class ServerGone(RuntimeError):
    pass


class Server:
    """The clean parent (server.py). By default a fresh interpreter, whatever the caller has loaded. A
    caller that starts it before anything about the class is loaded (the command line does, first
    thing) may fork it instead (`fork=True`): it then shares the torch this process already imported
    instead of importing it again."""

    def __init__(self, fork: bool = False):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.channel, self.ready, grader = ours, False, os.getpid()
        if fork:
            self.process: subprocess.Popen | None = None
            self.pid = os.fork()
            if self.pid == 0:
                try:
                    from autograder.sandbox import server

                    sys.argv[1:] = []
                    server.run(theirs.fileno(), grader)
                finally:
                    os._exit(0)
        else:
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-m", "autograder.sandbox", str(theirs.fileno()), str(grader)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, close_fds=True, cwd="/")
            self.pid = self.process.pid
        theirs.close()

    def _ask(self, request: dict, fds: list[int] = ()) -> dict:
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], list(fds))
            reply = self.channel.recv(1 << 16)
        except OSError as error:
            raise ServerGone(str(error)) from None
        if not reply:
            raise ServerGone("the worker parent ended")
        return json.loads(reply)

    def prepare(self, preload: list[str], extra_checks: list[str]) -> None:
        self._ask({"do": "prepare", "preload": preload, "extra_checks": extra_checks})
        self.ready = True

    def spawn(self, request: dict, fds: list[int]) -> int:
        pid = int(self._ask(dict(request, do="spawn"), fds).get("pid", 0))
        if pid <= 0:
            raise ServerGone("no worker could be forked")
        return pid

    def close(self) -> None:
        """Ends the clean parent (it ends when its socket closes) and reaps it; idempotent."""
        self.channel.close()
        for _ in range(500):
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                break
            time.sleep(0.01)
        else:
            with contextlib.suppress(OSError):
                os.kill(self.pid, 9)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


class Pool:
    """Runs tasks in workers forked from one clean parent, `workers` at a time."""

    def __init__(self, limits: Limits | None = None, workers: int | None = None, preload: tuple[str, ...] = (),
                 extra_checks: tuple[str, ...] = (), server: Server | None = None):
        self.limits, self.workers = limits or Limits(), workers or default_workers()
        self.preload, self.extra_checks = list(preload), sorted(extra_checks)
        # Started as early as the caller could (Server() before importing torch): its interpreter loads
        # while the grader does its own work.
        self.server = server or Server()

    def _server(self) -> Server:
        if not self.server.ready:
            try:
                self.server.prepare(self.preload, self.extra_checks)
            except ServerGone:
                self.server.close()
                self.server = Server()
                self.server.prepare(self.preload, self.extra_checks)
        return self.server

    def close(self) -> None:
        self.server.close()

    def _start(self, task: Task, problems: list[Measure], seed: int, uid: int | None, cgroups: Cgroups | None,
               previous: Outcome | None) -> Job | Outcome:
        """A running job, or the outcome of a task whose worker could not be started."""
        for _ in range(2):
            try:
                return Job(task, problems, self.limits, seed, uid, self._server(), cgroups, previous)
            except ServerGone:
                self.server.close()
                self.server = Server()
            except OSError as error:
                reason = f"The grader could not start a worker for this submission ({error.strerror or error})."
                return failed(problems, previous, reason)
        return failed(problems, previous, "The grader could not start a worker for this submission.")

    def run(self, tasks: list[Task], seed: int = 0) -> Iterator[tuple[Any, Outcome]]:
        """Yields (key, Outcome) as each task finishes."""
        limits = self.limits
        dumpable = prctl(PR_SET_DUMPABLE, 0) == 0  # no worker may read this process's memory through /proc
        sweep_leftovers()
        cgroups = Cgroups.find() if limits.cgroups else None
        if cgroups is not None:
            cgroups.sweep()
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as f:
            f.write("-500")  # when memory runs out, a worker goes first
        uids = UserIds(self.workers) if os.geteuid() == 0 else None
        slots: list[int | None] = list(uids.free) if uids else [None] * self.workers
        reaper = Reaper()
        pending: list[tuple[Task, list[Measure], Outcome | None]] = [(t, list(t.problems), None) for t in tasks]
        running: dict[int, Job] = {}
        selector = selectors.DefaultSelector()
        last_sweep = time.monotonic()

        def close(job: Job) -> None:
            for fd in (job.messages, job.printed, job.pidfd):
                if fd is not None and fd in selector.get_map():
                    selector.unregister(fd)

        try:
            while pending or running:
                while pending and slots:
                    task, problems, previous = pending.pop(0)
                    slot = slots.pop(0)
                    job = self._start(task, problems, seed, slot, cgroups, previous)
                    if isinstance(job, Outcome):
                        slots.append(slot)
                        yield task.key, job
                        continue
                    job.slot = slot
                    running[job.pid] = job
                    selector.register(job.messages, selectors.EVENT_READ, (job, "messages"))
                    selector.register(job.printed, selectors.EVENT_READ, (job, "output"))
                    if job.pidfd is not None:
                        selector.register(job.pidfd, selectors.EVENT_READ, (job, "exit"))
                if not running:
                    continue
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
                for job in [j for j in running.values() if j.exited()]:
                    close(job)
                    del running[job.pid]
                    slots.append(job.slot)
                    outcome = job.finish(reaper, set(running))
                    if job.remaining:  # the worker died measuring a problem: a new one measures the rest
                        pending.insert(0, (job.task, job.remaining, outcome))
                    else:
                        yield job.task.key, outcome
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
            if dumpable:
                prctl(PR_SET_DUMPABLE, 1)


def run_all(tasks: list[Task], limits: Limits | None = None, workers: int | None = None, seed: int = 0,
            preload: tuple[str, ...] = (), extra_checks: tuple[str, ...] = ()) -> Iterator[tuple[Any, Outcome]]:
    """Runs tasks in a pool of its own; yields (key, Outcome) as each finishes."""
    pool = Pool(limits, workers, preload, extra_checks)
    try:
        yield from pool.run(tasks, seed)
    finally:
        pool.close()
