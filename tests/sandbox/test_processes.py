"""Are the leftovers of earlier runs swept when a batch starts: worker folders of graders killed with
SIGKILL, System V IPC objects and processes left by worker user ids? And does a job without a worker kill
nothing?"""

import ctypes
import errno
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox import processes
from autograder.sandbox.processes import UID_BASE, UID_COUNT, sweep_leftovers

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="worker user ids exist only for a root grader")
LAST_UID = UID_BASE + UID_COUNT - 1


def _segments_of(uid: int) -> list[str]:
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [row for row in rows if int(row.split()[7]) == uid]


def test_shared_memory_of_a_worker_uid_is_removed():
    pid = os.fork()
    if pid == 0:  # a worker of an earlier run, without an IPC namespace of its own
        try:
            os.setgid(LAST_UID)
            os.setuid(LAST_UID)
            ctypes.CDLL(None).shmget(0, 4096, 0o1600)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert _segments_of(LAST_UID)
    sweep_leftovers()
    assert _segments_of(LAST_UID) == []


def test_folders_of_dead_graders_are_removed_and_live_ones_kept():
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = Path(tempfile.gettempdir()) / f"autograder-{dead.pid}-test"
    kept = Path(tempfile.gettempdir()) / f"autograder-{os.getpid()}-test"
    for folder in (gone, kept):
        folder.mkdir(exist_ok=True)
        (folder / "payload.json").write_text("{}")
    try:
        sweep_leftovers()
        assert not gone.exists()
        assert kept.exists()
    finally:
        for folder in (gone, kept):
            subprocess.run(["rm", "-rf", str(folder)], check=False)


def test_no_worker_yet_kills_nothing(monkeypatch):
    """A job without a worker has pid 0: killpg(0) is the grader's own group, and the tree of pid 0 is
    every process on the machine. Neither is signalled (the calls are recorded, not made)."""
    sent = []
    monkeypatch.setattr(processes.os, "killpg", lambda *args: sent.append(("killpg", *args)))
    monkeypatch.setattr(processes.os, "kill", lambda *args: sent.append(("kill", *args)))
    for pid in (0, -1):
        processes.kill_group(pid)
        assert processes.kill_tree(pid) == 0 and processes.kill_tree(pid, keep_root=False) == 0
    assert sent == []


def _alive_of(uid: int) -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and processes._owned(n, frozenset([uid]))]


@pytest.mark.parametrize("pidfds", [True, False])
def test_processes_of_a_worker_uid_are_killed_even_those_that_stop_every_process_of_their_id(pidfds,
                                                                                              monkeypatch):
    """One that left its session, and one that sends SIGSTOP to every process of its id over and over (a
    helper that took the id to kill them would be stopped, and the grader would wait for it for ever);
    with pidfds, and on a kernel without them (before Linux 5.3)."""
    if not pidfds:
        def no_pidfd(pid):
            raise OSError(errno.ENOSYS, "Function not implemented")
        monkeypatch.setattr(processes.os, "pidfd_open", no_pidfd)
    uid = LAST_UID - 1 - os.getpid() % 100  # not a lock another grader of the test run holds
    # `kill -1` as root would stop every process on the machine: the script checks its own id first
    script = (f'[ "$(id -u)" -eq {uid} ] || exit 9; setsid sleep 1000 & '
              f'while :; do kill -s STOP -- -1; done 2>/dev/null')
    started = subprocess.Popen(["sh", "-c", script], user=uid, group=uid, extra_groups=[],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while len(_alive_of(uid)) < 2:  # the shell and the sleep it left behind
            assert started.poll() is None
        processes.kill_users([uid])
        assert _alive_of(uid) == []
        assert started.wait() != 0
    finally:
        started.kill()
        started.wait()
