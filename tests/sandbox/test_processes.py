"""Are the leftovers of earlier runs swept when a batch starts: worker folders of graders killed with
SIGKILL, and System V IPC objects left by worker user ids? And does a job without a worker kill nothing?"""

import ctypes
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
