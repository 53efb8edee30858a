"""The grader's side of the sandbox: it hands each submission to a worker (job.py) forked by the clean
parent (parent.py), and collects what comes back, a few workers at a time.

A hang or a crash inside one Function costs only that problem: the worker is killed (or dies), the
problem fails with the cause, and a new worker runs the cells again to measure the problems after it.
The clean parent's replies (a worker's pid, a worker's exit status) come back in the order asked, and
are read like any worker's pipe, so that the grader never waits for a fork.
"""

from __future__ import annotations

import collections
import contextlib
import os
import selectors
import time
from collections.abc import Iterator
from typing import Any

from autograder.sandbox.cgroups import Cgroups
from autograder.sandbox.confine import PR_SET_DUMPABLE, Limits, prctl, unavailable
from autograder.sandbox.job import Job
from autograder.sandbox.parent import Server, ServerGone, default_workers
from autograder.sandbox.processes import Reaper, UserIds, sweep_leftovers
from autograder.sandbox.slots import Slots
from autograder.sandbox.tasks import Measure, Outcome, Task, failed

NO_WORKER = "The grader could not start a worker for this submission."


class Pool:
    """Runs tasks in workers forked from one clean parent, `workers` at a time."""

    def __init__(self, limits: Limits | None = None, workers: int | None = None,
                 preload: tuple[str, ...] = (), extra_checks: tuple[str, ...] = (),
                 server: Server | None = None, fallback: bool = False, prime: bool = True):
        """prime=False: the clean parent leaves torch's symbolic shapes (server.prime) to the workers whose
        submission's own code needs them (one submission, on Gradescope: the measurements never do)."""
        self.limits, self.workers = limits or Limits(), workers or default_workers()
        self.preload, self.extra_checks, self.prime = list(preload), sorted(extra_checks), prime
        # Started as early as the caller could (Server() before importing torch): its interpreter loads
        # while the grader does its own work.
        self.server = server or Server(fallback=fallback)
        # a clean parent started again (it died) is held to the same rule as the first
        self.fallback = fallback or self.server.isolation != "container"
        self.server.warm_up(self.preload, self.extra_checks, prime)  # while the caller reads the class

    def _server(self) -> Server:
        if not self.server.ready:
            try:
                self.server.prepare(self.preload, self.extra_checks, self.prime)
            except ServerGone:
                self.server.close()
                self.server = Server(fallback=self.fallback)
                self.server.prepare(self.preload, self.extra_checks, self.prime)
        return self.server

    def unavailable(self) -> list[str]:
        """The protections its workers go without on this machine, a sentence each (confine.unavailable)."""
        return unavailable(self.server.isolation == "container", self.limits)

    def close(self) -> None:
        self.server.close()

    def _restart(self) -> Server:
        self.server.close()
        self.server = Server(fallback=self.fallback)
        return self._server()

    def run(self, tasks: list[Task], seed: int = 0) -> Iterator[tuple[Any, Outcome]]:
        """Yields (key, Outcome) as each task finishes."""
        dumpable = prctl(PR_SET_DUMPABLE, 0) == 0  # no worker may read this process's memory through /proc
        sweep_leftovers()
        cgroups = Cgroups.find() if self.limits.cgroups else None
        if cgroups is not None:
            cgroups.sweep()
        with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as f:
            f.write("-500")  # when memory runs out, a worker goes first
        uids = UserIds(self.workers) if os.geteuid() == 0 else None
        batch = _Batch(self, tasks, seed, Slots(uids, self.workers, cgroups, self.limits))
        try:
            yield from batch.run()
        finally:
            batch.close()
            if uids:
                uids.close()
            if dumpable:
                prctl(PR_SET_DUMPABLE, 1)


class _Batch:
    """One run of a pool: the tasks waiting, the workers asked for, running and ending, and the loop that
    serves them."""

    def __init__(self, pool: Pool, tasks: list[Task], seed: int, slots: Slots):
        self.pool, self.seed, self.slots = pool, seed, slots
        self.pending: list[tuple[Task, list[Measure], Outcome | None]] = [(t, list(t.problems), None)
                                                                          for t in tasks]
        # ("spawn" | "reap", job), in order
        self.asked: collections.deque[tuple[str, Job]] = collections.deque()
        self.running: dict[int, Job] = {}
        self.reaper = Reaper()
        self.selector = selectors.DefaultSelector()
        self.server_failures, self.last_sweep = 0, time.monotonic()
        self.done: list[tuple[Any, Outcome]] = []

    def run(self) -> Iterator[tuple[Any, Outcome]]:
        self.pool._server()
        self.selector.register(self.pool.server.channel, selectors.EVENT_READ, (None, "server"))
        while self.pending or self.running or self.asked:
            self.start()
            if self.running or self.asked:
                self.serve()
            yield from self.done
            self.done.clear()

    def start(self) -> None:
        """Asks the clean parent for a worker for each waiting task that has a free slot."""
        while self.pending and self.slots.free():
            task, problems, previous = self.pending.pop(0)
            slot, group = self.slots.take()
            try:
                job = Job(task, problems, self.pool.limits, self.seed, self.slots.uid(slot), group, previous,
                          self.pool.server.isolation == "container")
            except OSError as error:
                self.slots.give_back(slot, group)
                self.done.append((task.key, failed(problems, previous,
                                                   f"{NO_WORKER[:-1]} ({error.strerror or error}).")))
                continue
            job.slot = slot
            self.asked.append(("spawn", job))
            try:
                job.spawn(self.pool.server)
            except ServerGone:
                self.lost_server()
                return

    def serve(self) -> None:
        """Waits for what comes first: a worker's message or output, a worker's end, a reply of the clean
        parent, or a deadline; and handles it."""
        now = time.monotonic()
        wait = min([j.deadline for j in self.running.values()] + [now + 1.0]) - now
        if any(j.pidfd is None for j in self.running.values()):
            wait = min(wait, 0.2)  # no pidfd: look for ended workers often
        for key, _ in self.selector.select(timeout=max(0.0, wait)):
            job, kind = key.data
            if kind == "server":
                try:
                    reply = self.pool.server.reply()
                except ServerGone:
                    self.lost_server()
                    return
                self.replied(reply if isinstance(reply, dict) else {})
            elif kind == "exit":
                self.selector.unregister(key.fd)
            elif not job.read(key.fd):
                self.selector.unregister(key.fd)  # end of file; the worker's end is seen through its pid
        for job in [j for j in self.running.values() if j.exited()]:
            self.ended(job)
        now = time.monotonic()
        for job in list(self.running.values()):
            if now >= job.deadline:
                job.expire()
        if now - self.last_sweep >= 1.0:
            self.reaper.sweep(set(self.running))
            self.last_sweep = now

    def replied(self, reply: dict) -> None:
        if not self.asked:
            return
        kind, job = self.asked.popleft()
        if kind == "reap":
            self.finished(job, reply.get("status") if isinstance(reply.get("status"), int) else None)
            return
        pid = reply.get("pid") if isinstance(reply.get("pid"), int) else 0
        pidfds = list(reply.get("pidfds") or [])
        if pid <= 0 or (job.contained and len(pidfds) != 2):
            for fd in pidfds:
                os.close(fd)
            job.abandon()
            self.slots.give_back(job.slot, job.group)
            self.done.append((job.task.key, failed(job.problems, job.outcome if job.again else None,
                                                   NO_WORKER)))
            return
        self.server_failures = 0
        job.started(pid, *pidfds[:2])
        self.running[job.pid] = job
        self.selector.register(job.messages, selectors.EVENT_READ, (job, "messages"))
        self.selector.register(job.printed, selectors.EVENT_READ, (job, "output"))
        if job.pidfd is not None:
            self.selector.register(job.pidfd, selectors.EVENT_READ, (job, "exit"))

    def unregister(self, job: Job) -> None:
        for fd in (job.messages, job.printed, job.pidfd):
            if fd is not None and fd in self.selector.get_map():
                self.selector.unregister(fd)

    def ended(self, job: Job) -> None:
        """A worker ended: what it left is read and killed, then the clean parent is asked to reap it."""
        self.unregister(job)
        del self.running[job.pid]
        job.ended()
        self.asked.append(("reap", job))
        try:
            self.pool.server.reap(job.local)
        except ServerGone:
            self.lost_server()

    def finished(self, job: Job, status: int | None) -> None:
        outcome = job.finish(self.reaper, set(self.running), status)
        self.slots.give_back(job.slot, job.group)
        if job.remaining:  # the worker died measuring a problem: a new one measures the rest
            self.pending.insert(0, (job.task, job.remaining, outcome))
        else:
            self.done.append((job.task.key, outcome))

    def lost_server(self) -> None:
        """The clean parent ended (its workers with it): the workers asked of it are asked again of a new
        one (twice at most; then their submissions fail), and the ones it had not reaped are finished
        without their status."""
        self.server_failures += 1
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.pool.server.channel)
        while self.asked:
            kind, job = self.asked.popleft()
            if kind == "reap":
                self.finished(job, None)
                continue
            job.abandon()
            self.slots.give_back(job.slot, job.group)
            previous = job.outcome if job.again else None
            if self.server_failures > 2:
                self.done.append((job.task.key, failed(job.problems, previous, NO_WORKER)))
            else:
                self.pending.insert(0, (job.task, job.problems, previous))
        try:
            self.pool._restart()
        except ServerGone:
            self.server_failures += 1
        self.selector.register(self.pool.server.channel, selectors.EVENT_READ, (None, "server"))

    def close(self) -> None:
        """At the end, or when the grader is interrupted: nothing of a worker is left running."""
        for job in list(self.running.values()):
            job.stop("The grader was interrupted.")
        for job in list(self.running.values()):
            self.unregister(job)
            job.ended()
            job.finish(self.reaper, set(self.running) - {job.pid}, None)
        for kind, job in self.asked:
            if kind == "spawn":
                # a worker forked after all ends with the clean parent (its parent-death signal)
                job.abandon()
        self.reaper.sweep(set())
        self.reaper.close()
        self.slots.close()
        self.selector.close()


def run_all(tasks: list[Task], limits: Limits | None = None, workers: int | None = None, seed: int = 0,
            preload: tuple[str, ...] = (),
            extra_checks: tuple[str, ...] = ()) -> Iterator[tuple[Any, Outcome]]:
    """Runs tasks in a pool of its own; yields (key, Outcome) as each finishes."""
    pool = Pool(limits, workers, preload, extra_checks)
    try:
        yield from pool.run(tasks, seed)
    finally:
        pool.close()
