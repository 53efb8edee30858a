"""The grader's side of the sandbox: it starts the clean parent, hands each submission to a worker (job.py),
and collects what comes back, a few workers at a time.

A hang or a crash inside one Function costs only that problem: the worker is killed (or dies), the
problem fails with the cause, and a new worker runs the cells again to measure the problems after it.
"""

from __future__ import annotations

import collections
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

from autograder.sandbox.cgroups import Cgroups, Group
from autograder.sandbox.confine import PR_SET_DUMPABLE, Limits, prctl
from autograder.sandbox.job import CGROUP_SLACK, Job, Measure, Outcome, Task, failed
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
        self.channel, self.asked, self.ready, grader = ours, False, False, os.getpid()
        if fork:
            from autograder.sandbox.server import prime

            prime()  # the grader needs it too: shared by the fork
            self.process: subprocess.Popen | None = None
            self.pid = os.fork()
            if self.pid == 0:
                try:
                    from autograder.sandbox import server

                    os.environ.pop("AUTOGRADER_EXTRA", None)  # check()'s problems: never here
                    sys.argv[1:] = []
                    server.run(theirs.fileno(), grader)
                finally:
                    os._exit(0)
        else:
            env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_EXTRA"}  # check()'s problems: never here
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-m", "autograder.sandbox", str(theirs.fileno()), str(grader)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, close_fds=True, cwd="/", env=env)
            self.pid = self.process.pid
        theirs.close()

    def _send(self, request: dict, fds: list[int] = ()) -> None:
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], list(fds))
        except OSError as error:
            raise ServerGone(str(error)) from None

    def reply(self) -> dict:
        """The next reply, in the order of the requests (blocks until it comes)."""
        try:
            reply = self.channel.recv(1 << 16)
        except OSError as error:
            raise ServerGone(str(error)) from None
        if not reply:
            raise ServerGone("the worker parent ended")
        return json.loads(reply)

    def warm_up(self, preload: list[str], extra_checks: list[str]) -> None:
        """Asks the clean parent to import and warm up what workers need, without waiting: it does so
        while the grader reads the class. Once only."""
        if not self.asked:
            with contextlib.suppress(ServerGone):  # then `prepare` finds it gone, and a new one is started
                self._send({"do": "prepare", "preload": list(preload), "extra_checks": sorted(extra_checks)})
                self.asked = True

    def prepare(self, preload: list[str], extra_checks: list[str]) -> None:
        """Warmed up, waiting for it when it is not yet."""
        self.warm_up(preload, extra_checks)
        if not self.ready:
            self.reply()
            self.ready = True

    def request(self, request: dict, fds: list[int]) -> None:
        """Asks for a worker; its pid comes with a later `reply()` ({"pid": 0} when none could be forked)."""
        self._send(dict(request, do="spawn"), fds)

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
        self.server.warm_up(self.preload, self.extra_checks)  # while the caller reads the class

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

    def _restart(self) -> Server:
        self.server.close()
        self.server = Server()
        return self._server()

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
        slots = Slots(uids, self.workers, cgroups, limits)
        reaper = Reaper()
        pending: list[tuple[Task, list[Measure], Outcome | None]] = [(t, list(t.problems), None) for t in tasks]
        starting: collections.deque[Job] = collections.deque()  # asked of the clean parent, in order
        running: dict[int, Job] = {}
        selector = selectors.DefaultSelector()
        last_sweep, server_failures = time.monotonic(), 0

        def close(job: Job) -> None:
            for fd in (job.messages, job.printed, job.pidfd):
                if fd is not None and fd in selector.get_map():
                    selector.unregister(fd)

        def lost_server() -> Iterator[tuple[Any, Outcome]]:
            """The clean parent ended: the workers asked of it are asked again of a new one (twice at
            most; then their submissions fail)."""
            nonlocal server_failures
            server_failures += 1
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(self.server.channel)
            while starting:
                job = starting.popleft()
                job.abandon()
                slots.give_back(job.slot, job.group)
                if server_failures > 2:
                    yield job.task.key, failed(job.problems, job.outcome if job.again else None,
                                               "The grader could not start a worker for this submission.")
                else:
                    pending.insert(0, (job.task, job.problems, job.outcome if job.again else None))
            try:
                self._restart()
            except ServerGone:
                server_failures += 1
            selector.register(self.server.channel, selectors.EVENT_READ, (None, "server"))

        try:
            self._server()
            selector.register(self.server.channel, selectors.EVENT_READ, (None, "server"))
            while pending or running or starting:
                while pending and slots.free():
                    task, problems, previous = pending.pop(0)
                    slot, group = slots.take()
                    try:
                        job = Job(task, problems, limits, seed, slots.uid(slot), group, previous)
                    except OSError as error:
                        slots.give_back(slot, group)
                        yield task.key, failed(problems, previous, "The grader could not start a worker for this "
                                                                   f"submission ({error.strerror or error}).")
                        continue
                    job.slot = slot
                    starting.append(job)
                    try:
                        job.spawn(self.server)
                    except ServerGone:
                        yield from lost_server()
                        break
                if not running and not starting:
                    continue
                now = time.monotonic()
                wait = min([j.deadline for j in running.values()] + [now + 1.0]) - now
                if any(j.pidfd is None for j in running.values()):
                    wait = min(wait, 0.2)  # no pidfd: look for ended workers often
                for key, _ in selector.select(timeout=max(0.0, wait)):
                    job, kind = key.data
                    if kind == "server":
                        try:
                            reply = self.server.reply()
                        except ServerGone:
                            yield from lost_server()
                            break
                        if not starting:
                            continue
                        job = starting.popleft()
                        pid = int(reply.get("pid", 0)) if isinstance(reply, dict) else 0
                        if pid <= 0:
                            job.abandon()
                            slots.give_back(job.slot, job.group)
                            yield job.task.key, failed(job.problems, job.outcome if job.again else None,
                                                       "The grader could not start a worker for this submission.")
                            continue
                        server_failures = 0
                        job.started(pid, bool(reply.get("cgroup")))
                        running[job.pid] = job
                        selector.register(job.messages, selectors.EVENT_READ, (job, "messages"))
                        selector.register(job.printed, selectors.EVENT_READ, (job, "output"))
                        if job.pidfd is not None:
                            selector.register(job.pidfd, selectors.EVENT_READ, (job, "exit"))
                    elif kind == "exit":
                        selector.unregister(key.fd)
                    elif not job.read(key.fd):
                        selector.unregister(key.fd)  # end of file; the worker's end is seen through its pid
                for job in [j for j in running.values() if j.exited()]:
                    close(job)
                    del running[job.pid]
                    outcome = job.finish(reaper, set(running))
                    slots.give_back(job.slot, job.group)
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
            for job in starting:
                job.abandon()  # a worker forked after all ends with the clean parent (its parent-death signal)
            reaper.sweep(set())
            reaper.close()
            slots.close()
            if uids:
                uids.close()
            selector.close()
            if dumpable:
                prctl(PR_SET_DUMPABLE, 1)


class Slots:
    """The places a worker can run: at most `workers` at once, each with its own user id (as root) and
    cgroup (where one can be made), which serve one worker after another."""

    def __init__(self, uids: UserIds | None, workers: int, cgroups: Cgroups | None, limits: Limits):
        self.uids, self.cgroups, self.limits = uids, cgroups, limits
        self.ids = list(range(len(uids.free) if uids else workers))
        self.groups: dict[int, Group] = {}

    def free(self) -> bool:
        return bool(self.ids)

    def take(self) -> tuple[int, Group | None]:
        slot = self.ids.pop(0)
        if slot not in self.groups and self.cgroups is not None:
            with contextlib.suppress(OSError):
                self.groups[slot] = self.cgroups.make(self.limits.memory_bytes + CGROUP_SLACK, self.limits.processes)
        return slot, self.groups.get(slot)

    def uid(self, slot: int) -> int | None:
        return self.uids.free[slot] if self.uids else None

    def give_back(self, slot: int, group: Group | None) -> None:
        """The slot is free again; its cgroup too, unless the worker could not leave it empty (`group` is
        then None, and the slot gets a new one)."""
        if group is None and slot in self.groups:
            self.groups.pop(slot).remove()
        self.ids.append(slot)

    def close(self) -> None:
        for group in self.groups.values():
            group.remove()
        self.groups.clear()


def run_all(tasks: list[Task], limits: Limits | None = None, workers: int | None = None, seed: int = 0,
            preload: tuple[str, ...] = (), extra_checks: tuple[str, ...] = ()) -> Iterator[tuple[Any, Outcome]]:
    """Runs tasks in a pool of its own; yields (key, Outcome) as each finishes."""
    pool = Pool(limits, workers, preload, extra_checks)
    try:
        yield from pool.run(tasks, seed)
    finally:
        pool.close()
