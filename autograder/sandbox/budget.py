"""A problem's time limit counted in the worker's own CPU time, with the wall clock as a backstop only.

On a loaded machine (load 16 on 2 cores) a worker gets a sliver of a core: an honest submission that
prints a lot before a right answer used to run out of its wall-clock seconds and lose the problem. Its
budget is now what it spends itself: the CPU time of its cgroup (cpu.stat's usage_usec, every process
in it) or, without one, of the worker process (/proc/<pid>/stat's utime and stime: torch runs one
thread per worker). A submission that burns CPU in a loop is stopped when it has spent the budget; one
that waits (a sleep, a lock) spends none and is stopped by the backstop, BACKSTOP times the budget on
the wall clock. Where the CPU time cannot be read, the wall clock decides, as it did before.

The worker's first look is at the budget's end on the wall clock (CPU time never runs ahead of it with
one thread), so that a deadline is never earlier than it was.
"""

from __future__ import annotations

import contextlib
import os
import time

from autograder import config

BACKSTOP = config.PROBLEM_WALL_FACTOR
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
LOOK_AGAIN = 0.05  # seconds: the shortest wait before looking at the CPU time again


def cpu_seconds(pid: int, folders: list[str] = ()) -> float | None:
    """CPU time spent so far by the worker's cgroup (cgroup v2) or else by the worker; None if unknown."""
    for folder in folders:
        with contextlib.suppress(OSError, ValueError), open(os.path.join(folder, "cpu.stat")) as stat:
            for line in stat:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    if pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


def scaled(reference_seconds: float, most: float = config.PROBLEM_SECONDS) -> float:
    """A problem's budget by default: config.REFERENCE_SCALE times what computing its reference took (its
    outputs and Jacobians, in the grader), from config.PROBLEM_FLOOR_SECONDS to `most`."""
    return min(most, max(config.PROBLEM_FLOOR_SECONDS, config.REFERENCE_SCALE * reference_seconds))


class Budget:
    """`seconds` of CPU for one phase of one worker, counted from now; the wall clock's backstop past it."""

    def __init__(self, seconds: float, pid: int, folders: list[str] = (), clock=time.monotonic):
        self.seconds, self.pid, self.folders, self.clock = seconds, pid, list(folders), clock
        self.began = clock()
        self.cpu_at_start = cpu_seconds(pid, self.folders)

    def used(self) -> float | None:
        now = cpu_seconds(self.pid, self.folders)
        return None if now is None or self.cpu_at_start is None else max(0.0, now - self.cpu_at_start)

    def ran(self) -> float:
        return self.clock() - self.began

    def later(self) -> float | None:
        """When to look again (a time of the clock), or None when the phase must stop: its CPU budget is
        spent, its backstop passed, or its CPU time cannot be read."""
        used, now = self.used(), self.clock()
        backstop = self.began + BACKSTOP * self.seconds
        if used is None or used >= self.seconds or now >= backstop:
            return None
        return min(backstop, now + max(LOOK_AGAIN, self.seconds - used))

    def describe(self) -> str:
        """How long it ran, for the page: "it ran 61 s, 19.8 s of them on the CPU"."""
        used = self.used()
        return f"it ran {self.ran():.0f} s" + (f", {used:.1f} s of it on the CPU" if used is not None else "")
