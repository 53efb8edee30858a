"""A control group per worker slot, where the grader may write one: a memory limit that counts what address
space limits miss (shared memory, memory behind file descriptors, the page cache of its files), a CPU
weight equal to every other worker's (sixty spinning processes of one submission get no more CPU than
one honest notebook), and a process limit. A slot's group serves one worker after another: it is made
once, and emptied between two workers (making and removing one per worker cost the grader more than
the worker's own start).

cgroup v2 (one unified hierarchy with the memory, cpu and pids controllers) is used where it is mounted
with them; otherwise cgroup v1's memory, cpu and pids hierarchies. Where neither can be written (an
ordinary user, a container without them), `Cgroups.find()` returns None and the worker relies on its
resource limits and seccomp instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass

from autograder.sandbox.processes import alive

ROOT = "/sys/fs/cgroup"
PREFIX = "autograder-"  # autograder-<grader pid>-<n>


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


@dataclass
class Group:
    """One worker's cgroup: a folder in each hierarchy that is used."""

    folders: list[str]

    def add(self, pid: int) -> None:
        for folder in self.folders:
            _write(os.path.join(folder, "cgroup.procs"), str(pid))

    def pids(self) -> set[int]:
        found = set()
        for folder in self.folders:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in _read(os.path.join(folder, "cgroup.procs")).split()}
        return found

    def oom_kills(self) -> int:
        """How many of its processes the kernel has killed for memory so far (a running count: the group
        serves one worker after another, so a worker compares the count at its end with its start's)."""
        count = 0
        for folder in self.folders:
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError, ValueError):
                    for line in _read(os.path.join(folder, name)).splitlines():
                        if line.startswith("oom_kill "):
                            count += int(line.split()[1])
        return count

    def clear(self, seconds: float = 2.0) -> bool:
        """Kills what is left in it and waits until it is empty, so that the next worker finds it so;
        False when something would not go in time (the group is then not used again)."""
        deadline = time.monotonic() + seconds
        while True:
            left = self.pids()
            if not left:
                return True
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)

    def remove(self) -> None:
        """Kills what is left in it and removes it (a cgroup with processes cannot be removed)."""
        for _ in range(200):
            self.clear(0.0)
            folders = []
            for folder in self.folders:
                try:
                    os.rmdir(folder)
                except FileNotFoundError:
                    pass
                except OSError:
                    folders.append(folder)
            self.folders = folders
            if not folders:
                return
            time.sleep(0.01)


class Cgroups:
    """Where this grader makes its workers' cgroups, and how."""

    def __init__(self, version: int, parents: dict[str, str]):
        self.version, self.parents, self.count = version, parents, 0

    @classmethod
    def find(cls) -> Cgroups | None:
        if os.geteuid() != 0:
            return None
        unified = (ROOT if os.path.exists(os.path.join(ROOT, "cgroup.controllers"))
                   else os.path.join(ROOT, "unified"))
        with contextlib.suppress(OSError):
            controllers = _read(os.path.join(unified, "cgroup.controllers")).split()
            if {"memory", "cpu", "pids"} <= set(controllers):
                parent = os.path.join(unified, "autograder")
                os.makedirs(parent, exist_ok=True)
                _write(os.path.join(unified, "cgroup.subtree_control"), "+memory +cpu +pids")
                _write(os.path.join(parent, "cgroup.subtree_control"), "+memory +cpu +pids")
                return cls(2, {"all": parent})
        parents = {}
        for controller in ("memory", "cpu", "pids"):
            folder = os.path.join(ROOT, controller)
            if not os.path.exists(os.path.join(folder, "cgroup.procs")):
                return None
            parent = os.path.join(folder, "autograder")
            try:
                os.makedirs(parent, exist_ok=True)
            except OSError:
                return None
            parents[controller] = parent
        return cls(1, parents)

    def make(self, memory_bytes: int, processes: int) -> Group:
        """A new cgroup with the limits set; raises OSError when it cannot be made."""
        self.count += 1
        name = f"{PREFIX}{os.getpid()}-{self.count}"
        folders = []
        try:
            for controller, parent in self.parents.items():
                folder = os.path.join(parent, name)
                os.mkdir(folder)
                folders.append(folder)
                settings = {
                    (2, "all"): {"memory.max": str(memory_bytes), "memory.swap.max": "0",
                                 "pids.max": str(processes), "cpu.weight": "100"},
                    (1, "memory"): {"memory.limit_in_bytes": str(memory_bytes), "memory.swappiness": "0"},
                    (1, "cpu"): {"cpu.shares": "1024"},
                    (1, "pids"): {"pids.max": str(processes)},
                }[(self.version, controller)]
                for key, value in settings.items():
                    with contextlib.suppress(OSError):
                        _write(os.path.join(folder, key), value)
                if self.version == 1 and controller == "memory" \
                        and int(_read(os.path.join(folder, "memory.limit_in_bytes"))) > memory_bytes + 4096:
                    raise OSError("the memory limit did not take")  # the limit itself must hold
        except OSError:
            Group(folders).remove()
            raise
        return Group(folders)

    def sweep(self) -> int:
        """Removes the cgroups of graders that were killed before they could; returns how many."""
        removed = 0
        for parent in self.parents.values():
            with contextlib.suppress(OSError):
                for name in os.listdir(parent):
                    owner = name[len(PREFIX):].split("-", 1)[0]
                    if name.startswith(PREFIX) and owner.isdigit() and not alive(int(owner)):
                        Group([os.path.join(parent, name)]).remove()
                        removed += 1
        return removed
