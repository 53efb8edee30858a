"""One worker seen from the grader: the submission's payload, the worker's pipes, its deadline, and the
problems asked for one at a time. Every deadline is set here, from the moment the grader asks for
something: the load from the worker's start, each problem from the moment it is asked for. Nothing a
worker writes moves one, and nothing it writes is trusted beyond being data about its own submission."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
from dataclasses import asdict

from autograder.sandbox import evidence
from autograder.sandbox.budget import Budget
from autograder.sandbox.cgroups import Group
from autograder.sandbox.confine import Limits
from autograder.sandbox.payload import channels, payload_file, problem
from autograder.sandbox.processes import (
    WORKDIR_PREFIX,
    Reaper,
    describe_status,
    has_ended,
    kill_group,
    kill_tree,
    kill_user,
    pid_of,
    remove_folder,
)
from autograder.sandbox.protocol import Lines, parse, send
from autograder.sandbox.tasks import Measure, Outcome, Task

MAX_CELL_ERRORS = 100
MAX_DRAIN = 64 * 1024 * 1024  # bytes read from a finished worker's pipes, however much a leftover writes


class Job:
    """One running worker: its pipes, its deadline and what it said."""

    def __init__(self, task: Task, problems: list[Measure], limits: Limits, seed: int, uid: int | None,
                 group: Group | None, previous: Outcome | None, contained: bool = True):
        """Everything a worker needs but the worker: its payload (the cells and the visible problems, in
        an unnamed file; a hidden problem is sent only when it is asked for, after the visible ones were
        measured), its pipes, and outside a container its folder. The clean parent is then asked for the
        worker (`spawn`), and `started` is called with its pid."""
        self.task, self.problems, self.limits, self.uid, self.group = task, problems, limits, uid, group
        self.contained = contained
        # visible first: what hidden ones print is never kept
        self.todo = sorted(problems, key=lambda m: m.hidden)
        self.outcome = previous or Outcome()
        self.again = previous is not None
        self.remaining: list[Measure] = []
        self.crowded = False  # the worker was seen with processes of its own
        self.began = time.monotonic()
        self.deadline, self.budget = float("inf"), None  # set when the worker starts; a problem's CPU time
        self.cell, self.loaded, self.current, self.phase, self.stopped = -1, False, None, "", False
        self.partial: dict | None = None  # the current problem's measurement so far (parts finished)
        self.no_threads = False
        self.answered: set[str] = set()  # problems whose measurement came (a second one is no worker's)
        self.nonce = evidence.Nonce()  # the current request's token, which its answer carries
        self.lines = Lines()
        self.output, self.output_dropped, self.output_closed = bytearray(), False, False
        self.pid, self.local, self.pidfd, self.oom_kills = 0, 0, None, 0
        self.init, self.initfd, self.broken = 0, None, ""  # a container's init; why it could not be made
        self.workdir = None if contained else tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
        try:
            if self.workdir is not None and uid is not None:
                os.chown(self.workdir, uid, uid)
            payload = payload_file({"cells": task.cells, "modules": task.modules, "seed": seed,
                                "problems": [problem(m) for m in problems if not m.hidden]})
        except BaseException:
            if self.workdir is not None:
                remove_folder(self.workdir)
            raise
        (self.messages, self.printed, self.control), ends = channels()
        self.ends = [*ends, payload]  # the worker's: sent to the clean parent, then closed here

    def spawn(self, server) -> None:
        """Asks the clean parent for the worker (the reply comes later: `started`); raises ServerGone."""
        cpu = self.limits.load_seconds + (2 * len(self.problems) + 1) * self.limits.problem_seconds
        request = {"workdir": self.workdir, "uid": self.uid, "limits": asdict(self.limits), "cpu": cpu}
        try:
            server.request(request, self.ends)
        finally:
            self.close_ends()

    def close_ends(self) -> None:
        for end in self.ends:
            with contextlib.suppress(OSError):
                os.close(end)
        self.ends = []

    def started(self, local: int, pidfd: int | None = None, initfd: int | None = None) -> None:
        """The worker exists (`local`: its pid as the clean parent sees it; `pidfd`, `initfd`: handles on
        it and on its container's init, from which their pids on the machine are read): it joins its
        slot's cgroup, its deadline starts now, and it may start."""
        self.local, self.pidfd, self.initfd, self.began = local, pidfd, initfd, time.monotonic()
        self.pid = (pid_of(pidfd) if pidfd is not None else 0) or local
        self.init = pid_of(initfd) if initfd is not None else 0
        if self.group is not None:
            try:
                self.group.add(self.pid)
                self.oom_kills = self.group.oom_kills()
            except OSError:
                self.group = None  # not joined: leftovers are found by process tree
        self.deadline = self.timed(self.limits.load_seconds)  # the cells' CPU time, as a problem's
        for end in (self.messages, self.printed, self.control):
            os.set_blocking(end, False)
        self.tell(b"s")  # known here (and in its cgroup): the worker may start

    def abandon(self) -> None:
        """No worker came (the clean parent failed): what was made for it goes."""
        self.close_ends()
        for fd in (self.messages, self.printed, self.control):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.workdir is not None:
            remove_folder(self.workdir)

    def tell(self, data: bytes | dict) -> None:
        with contextlib.suppress(OSError):
            if isinstance(data, dict):
                send(self.control, data)
            else:
                os.write(self.control, data)

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
                self.take(chunk)
                if self.stopped:
                    return True
            else:
                self.keep_output(chunk)
        return True

    def take(self, chunk: bytes) -> None:
        """Handles the messages a chunk of the messages socket completes, until the job is stopped."""
        for line in self.lines.feed(chunk):
            message = parse(line) if line.strip() else {}
            current = self.current.name if self.current is not None else None
            if not evidence.screened(self.outcome, message, line, current, self.loaded, self.answered,
                                     self.nonce.value):
                self.handle(message)
            if self.stopped:
                return

    def keep_output(self, chunk: bytes) -> None:
        if self.again or self.output_closed:
            return
        room = self.limits.output_bytes - len(self.output)
        if room > 0:
            self.output += chunk[:room]
        if len(chunk) > room:
            self.output_dropped = True

    def handle(self, message: dict) -> None:
        """One message. Anything malformed, out of turn or about another problem is ignored."""
        event = str(message.get("event"))
        try:
            if event == "cell" and not self.loaded:
                self.cell = int(message["index"])
            elif event == "cell-error" and not self.again and not self.loaded \
                    and len(self.outcome.cell_errors) < MAX_CELL_ERRORS:
                self.outcome.cell_errors.append({"index": int(message["index"]) + 1,
                                                 "type": str(message.get("type"))[:100],
                                                 "error": str(message["error"])[:4100]})
            elif event == "loaded" and not self.loaded and not self.stopped:
                self.loaded = True
                self.crowded |= self.kill_leftovers() > 0  # what the cells left running: daemons, fork bombs
                self.next_problem()
            elif event == "no-container" and not self.loaded and not self.stopped:
                self.broken = f"could not be put in its container ({str(message.get('error'))[:300]})"
            elif event == "threads" and self.loaded and not self.stopped:
                self.no_threads = True
            elif event in ("measured", "measured in full") and self.current is not None \
                    and message.get("problem") == self.current.name and isinstance(message.get("data"), dict):
                self.received(event, message["data"])
            elif event == "part" and self.current is not None and self.phase == "measure" \
                    and message.get("problem") == self.current.name and isinstance(message.get("data"), dict):
                self.partial = message["data"]
        except (KeyError, TypeError, ValueError):
            pass

    def kill_leftovers(self) -> int:
        """Kills what the worker's cells started; returns how many were alive. With a cgroup, its member
        list is the answer; otherwise the process table is searched for the worker's descendants."""
        if self.group is None:  # (in a container, what the worker orphaned is its init's)
            return kill_tree(self.pid) + (kill_tree(self.init) if self.init else 0)
        others = self.group.pids() - {self.pid}
        for pid in others:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        return len(others)

    def received(self, event: str, data: dict) -> None:
        measure = self.current
        if event == "measured" and self.phase == "measure":
            self.outcome.data[measure.name] = data
            self.answered.add(measure.name)
            plan = None
            if measure.plan is not None:
                try:
                    plan = measure.plan(data)
                except Exception:  # noqa: BLE001 - malformed data: the judge says so; nothing to explain
                    plan = None
            if plan:
                self.phase, self.deadline = "in full", self.timed()
                self.tell({"do": "measure in full", "problem": measure.name, "plan": plan,
                           "nonce": self.nonce.renew()})
                return
        elif event == "measured in full" and self.phase == "in full":
            self.outcome.explanations[measure.name] = data
        else:
            return
        self.next_problem()

    def next_problem(self) -> None:
        """Asks for the next problem, with a deadline counted from now."""
        if self.current is not None:
            self.todo.remove(self.current)
        self.current = None
        if not self.todo:
            self.phase, self.deadline = "done", time.monotonic() + 2.0
            self.tell({"do": "stop"})
            return
        measure = self.todo[0]
        self.partial = None
        if measure.hidden and not self.output_closed:
            self.read(self.printed, budget=64)  # what the visible problems printed is already in the pipe
            self.output_closed = True
        self.current, self.phase = measure, "measure"
        self.deadline = self.timed()  # the problem's own budget
        # a hidden problem enters the worker only now, after the cells ran and the visible ones were measured
        asked = {"do": "measure", "problem": measure.name, "nonce": self.nonce.renew()}
        self.tell(asked | ({"definition": problem(measure)} if measure.hidden else {}))

    def timed(self, seconds: float | None = None) -> float:
        """A phase starts (the cells, a problem's): its budget of CPU time (budget.py: on a loaded machine
        it keeps its seconds), by default the current problem's, and the first deadline."""
        seconds = seconds or (self.current and self.current.seconds) or self.limits.problem_seconds
        self.budget = Budget(seconds, self.pid, self.group.folders if self.group else [], time.monotonic)
        return self.budget.began + seconds

    def keep_partial(self, how: str) -> bool:
        """The current problem stopped in the middle of its measurement: keep the parts that finished, so
        that only the checks of the part that never finished fail. False when no part finished."""
        partial, measure = self.partial, self.current
        if measure is None or not isinstance(partial, dict) or not partial.get("parts"):
            return False
        self.outcome.data[measure.name] = dict(partial, stopped=how)
        self.partial = None
        return True

    # -- deadlines and the end ---------------------------------------------------------------------------

    def expire(self) -> None:
        """A deadline passed: unless the problem's measurement has CPU time left (and the wall clock's
        backstop is not reached), kill what is running and record why."""
        if (self.phase == "measure" or not self.loaded) and self.budget and (later := self.budget.later()):
            self.deadline = later  # the cells, a measurement (not the pictures): CPU time left
            return
        if self.phase == "done":
            self.stop("")
        elif self.loaded and self.current is not None:
            name = self.current.name
            if self.phase == "measure":
                self.outcome.timed_out.append(name)
            within = f"within {self.budget.seconds:g} s of CPU time ({self.budget.describe()})"
            if self.phase == "measure" and not self.keep_partial(within):
                self.outcome.data.pop(name, None)
                self.outcome.failures[name] = (f"Grading {name} did not finish {within}: calling it loops "
                                               f"or waits forever (check forward and backward for endless "
                                               f"loops).")
            self.todo.remove(self.current)  # explaining it took too long: it is judged without the pictures
            self.current = None
            self.deadline = float("inf")
            self.kill()  # the worker and all it started; a new one measures the problems left
        elif self.loaded:
            self.stop("The process running your code stopped responding between two problems.")
        else:
            self.outcome.timed_out.append("load")
            self.stop(f"Your code did not finish running cell {self.cell + 1} within "
                      f"{self.limits.load_seconds:g} s of CPU time ({self.budget.describe()}): an endless "
                      f"loop, a wait that never ends, or work too long for grading; nothing after it could "
                      f"be graded.")

    def stop(self, reason: str) -> None:
        for measure in self.todo:
            if reason and measure.name not in self.outcome.data:
                self.outcome.failures.setdefault(measure.name, reason)
        if reason:
            self.todo = []
        self.stopped = True
        self.kill()
        self.deadline = float("inf")

    def exited(self) -> bool:
        """Whether the worker has ended. The clean parent reaps it only when asked (`ended` first): while
        it is a zombie, its pid and process group id cannot be given to another process, so killing
        that group stays safe."""
        return has_ended(self.pid, self.pidfd)

    def drain(self) -> None:
        """Reads what the worker left in its pipes (a bounded amount: a leftover may keep writing)."""
        for fd in (self.messages, self.printed):
            total = 0
            while total < MAX_DRAIN and not self.stopped:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                total += len(chunk)
                if fd == self.messages:
                    self.take(chunk)
                else:
                    self.keep_output(chunk)

    def kill(self) -> None:
        """Kills the worker and everything it started (its group, its tree, its container)."""
        kill_group(self.pid)
        kill_tree(self.pid, keep_root=False)
        self.end_container()

    def end_container(self) -> None:
        """Ends the worker's PID namespace and all in it: kills its init by pidfd (pids get reused)."""
        if self.initfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.initfd, signal.SIGKILL)

    def ended(self) -> None:
        """The worker has ended, and is not reaped yet: read what it left in the pipes, and kill the
        stragglers in its process group (which, until the worker is reaped, is still its own)."""
        self.drain()
        kill_group(self.pid)
        self.end_container()

    def finish(self, reaper: Reaper | None, workers: set[int], status: int | None) -> Outcome:
        """The worker is reaped (`status`, None when it could not be had): clear away what it left
        running, and say why any problem has no data."""
        self.end_container()
        cause = self.broken or describe_status(status if status is not None else 9)
        if self.group is not None and self.group.oom_kills() > self.oom_kills:
            cause = "was killed because it used more memory than the grader allows"
        data, failures = self.outcome.data, self.outcome.failures
        names = [m.name for m in self.todo]
        if self.no_threads:
            for name in names:
                failures.setdefault(name, (
                    "Your code left threads running, and the grader could not set them aside to measure your "
                    f"Functions (the limit of {self.limits.processes} processes was reached), so nothing was "
                    "measured. Do not start threads or processes in your submission."))
        elif not self.loaded and not self.stopped:
            self.stop(f"Your program {cause} while running cell {self.cell + 1}, so nothing after it "
                      f"could be graded.")
        if self.current is not None and self.phase == "measure" and self.current.name not in data \
                and not self.keep_partial(f"the process running your code {cause}"):
            failures.setdefault(self.current.name, f"Grading {self.current.name} stopped: the process "
                                                   f"running your code {cause} while calling it.")
        if self.current is not None and self.current in self.todo:
            self.todo.remove(self.current)
        left = [m for m in self.todo if m.name not in data and m.name not in failures]
        if left and len(left) < len(self.problems) and not self.stopped:
            self.remaining = left  # this worker got somewhere: a new one takes over
        else:
            for m in left:
                failures[m.name] = f"Grading {m.name} stopped: the worker {cause}."
        if self.group is not None:
            if not self.group.clear():  # everything the worker started is in its cgroup, whatever its session
                self.group = None  # what would not die keeps the slot's group: the slot gets a new one
        elif not self.contained:  # in a container, the init's end ended everything in it
            strays = reaper.sweep(workers) if reaper is not None else 0
            if self.uid is not None and (strays or self.crowded or reaper is None or not reaper.active):
                # a backstop: the subreaper already caught whatever left the worker's tree
                kill_user(self.uid)
        for fd in (self.messages, self.printed, self.control, self.pidfd, self.initfd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.workdir is not None:
            remove_folder(self.workdir)
        if not self.again:
            text = self.output.decode("utf-8", "replace")
            self.outcome.output = text + ("\n[... output truncated ...]" if self.output_dropped else "")
        self.outcome.seconds += time.monotonic() - self.began
        return self.outcome
