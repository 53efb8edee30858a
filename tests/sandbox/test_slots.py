"""A worker slot's cgroup serves one worker after another (sandbox/pool.py, Slots): what a worker leaves
in it is killed before the next worker of that slot starts, and a worker killed for memory is told so,
while the next worker in the same cgroup is not blamed for it. One slot, so every task shares it."""

import os
import subprocess

import pytest

from autograder.course import find_assignment
from autograder.pipeline import problem_jobs
from autograder.sandbox import Limits, Pool, Server, Task
from autograder.sandbox.cgroups import Cgroups

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.geteuid() != 0 or Cgroups.find() is None,
                                                   reason="no writable cgroup here (cgroups need root)")]

# A daemon started while KillHead is measured (what the cells leave is killed before that): a double
# fork into a session of its own, sleeping, which outlives the worker.
LEAVES_A_DAEMON = """
import os, time
from torch.autograd import Function

class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(60)
            os._exit(0)
        time.sleep(0.2)
        return input.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None
"""

# Members of its own cgroup: the worker alone, if what came before it was cleared away.
COUNTS_ITS_GROUP = """
path = [line.split(":", 2)[2].strip() for line in open("/proc/self/cgroup")
        if ":memory:" in line or line.startswith("0::")][0]
root = "/sys/fs/cgroup/memory" if ":memory:" in open("/proc/self/cgroup").read() else "/sys/fs/cgroup/unified"
members = open(root + path + "/cgroup.procs").read().split()
print("members", len(members))
"""

# System V shared memory filled and detached segment by segment: it never counts as address space, only
# the memory cgroup sees it (each worker has its own IPC namespace, so it goes with the worker).
# In a child process: ctypes is refused in the worker itself (sandbox/watch.py); the child shares its
# cgroup, and the segments, in the worker's IPC namespace, outlive the child and stay charged to it.
SHM_HOG = r'''
import subprocess, sys
HOG = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
size = 16 * 1024 * 1024
for _ in range(200):
    shmid = libc.shmget(0, size, 0o1600)
    address = libc.shmat(shmid, None, 0)
    ctypes.memset(address, 1, size)
    libc.shmdt(ctypes.c_void_p(address))
print("not stopped")
"""
print(subprocess.run([sys.executable, "-c", HOG], capture_output=True, text=True, check=False).stdout)
x = bytearray(64 * 1024 * 1024)  # the worker's own allocation meets the cgroup the segments fill
'''


def _outcomes(cells_per_task: list[str], limits: Limits, container: bool = True) -> list:
    """Each task's outcome, asked for one problem (KillHead: a failure to load is told through it). With
    container=False, the older confinement, where the slot's cgroup is what ends a worker's leftovers (in a
    container, its PID namespace ends them too)."""
    problems = problem_jobs(find_assignment("custom-functions"), 0)[:1]
    tasks = [Task(i, [cells], problems) for i, cells in enumerate(cells_per_task)]
    pool = Pool(limits, workers=1, server=Server(container=container))
    try:
        return [outcome for _, outcome in sorted(pool.run(tasks), key=lambda pair: pair[0])]
    finally:
        pool.close()


def test_clearing_a_group_kills_its_members_and_keeps_it_for_the_next_worker():
    group = Cgroups.find().make(256 * 1024**2, 8)
    try:
        sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(3)]
        for sleeper in sleepers:
            group.add(sleeper.pid)
        assert group.pids() == {s.pid for s in sleepers}
        assert group.clear() is True
        assert group.pids() == set()
        assert all(s.wait(timeout=5) == -9 for s in sleepers)
        assert all(os.path.isdir(folder) for folder in group.folders)  # still there, for the next worker
    finally:
        group.remove()
    assert not any(os.path.exists(folder) for folder in group.folders)


def test_what_a_worker_leaves_in_its_slot_is_gone_before_the_next_one():
    # without Landlock, which keeps a worker out of /proc/self/cgroup and /sys/fs/cgroup, where the
    # counter looks (the slot's clearing is the grader's, whatever confines the worker)
    limits = Limits(load_seconds=20, landlock=False)
    daemon, counter = _outcomes([LEAVES_A_DAEMON, COUNTS_ITS_GROUP], limits, container=False)
    assert daemon.data["KillHead"]["defined"] is True
    assert "members 1" in counter.output, counter.output + str(counter.cell_errors)


def test_a_worker_killed_for_memory_is_told_and_the_next_one_in_its_cgroup_is_not():
    limits = Limits(load_seconds=30, memory_bytes=256 * 1024**2)  # the cgroup allows 512 MB more
    hog, killed = _outcomes([SHM_HOG, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"], limits)
    assert "not stopped" not in hog.output
    assert "more memory than the grader allows" in hog.failures["KillHead"], hog.failures
    assert "killed" in killed.failures["KillHead"], killed.failures
    assert "more memory than the grader allows" not in killed.failures["KillHead"], killed.failures
