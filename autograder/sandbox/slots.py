"""The places a worker can run: at most `workers` at once, each with its own user id (as root) and its own
cgroup (where one can be made), which serve one worker after another."""

from __future__ import annotations

import contextlib

from autograder.sandbox.cgroups import Cgroups, Group
from autograder.sandbox.confine import Limits
from autograder.sandbox.processes import UserIds

# The cgroup allows a little more than the address-space limit, which then stops an ordinary memory hog
# first, with a MemoryError it can be told about; the cgroup catches what address space does not count.
CGROUP_SLACK = 512 * 1024**2


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
                self.groups[slot] = self.cgroups.make(self.limits.memory_bytes + CGROUP_SLACK,
                                                      self.limits.processes)
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
