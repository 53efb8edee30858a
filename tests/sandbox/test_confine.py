"""The older confinement, used where the container cannot be made (Gradescope without user namespaces,
or --no-isolation): can student code read the grader's files when the worker keeps no capability, and
does Landlock hold where it keeps one?"""

import os

import pytest

from autograder.sandbox import Limits, Pool, Server, Task, landlock_abi

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="workers change user id only when the grader is "
                                                          "root")

PROBE = """
import os
try:
    with open({secret!r}) as f:
        print("READ", f.read())
except OSError as error:
    print("DENIED", type(error).__name__)
with open("/proc/self/status") as f:
    print(*[line.strip() for line in f if line.startswith(("CapEff", "CapPrm"))])
"""


@pytest.fixture()
def secret(tmp_path):
    """A file in a folder only root may enter, as /autograder/source is on Gradescope."""
    folder = tmp_path / "source"
    folder.mkdir()
    (folder / "reference.py").write_text("ANSWER = 42\n")
    folder.chmod(0o700)
    return folder / "reference.py"


def run(cells: list[str], limits: Limits) -> str:
    """The cells in a worker of the older confinement (a clean parent told not to make a container)."""
    pool = Pool(limits, workers=1, server=Server(container=False))
    try:
        assert pool.server.isolation.startswith("none: ")
        ((_, outcome),) = list(pool.run([Task("probe", cells, [])]))
    finally:
        pool.close()
    assert not outcome.cell_errors, outcome.cell_errors
    return outcome.output


def test_worker_without_capability_cannot_read_a_closed_folder(secret):
    """With keep_read_search=False, is a mode-700 folder closed to the worker, and are all its
    capabilities gone (none to raise again)?"""
    output = run([PROBE.format(secret=str(secret))], Limits(keep_read_search=False)).replace("\t", " ")
    assert "DENIED PermissionError" in output
    assert "READ" not in output
    assert "CapEff: 0000000000000000" in output and "CapPrm: 0000000000000000" in output


def test_default_worker_keeps_read_search_only_within_landlock(secret):
    """By default (an interpreter under /root must still import), does the worker keep exactly one
    capability, reading, and does Landlock still keep it from files outside the interpreter and the
    system's libraries, such as an instructor's hidden tests?"""
    if landlock_abi() < 1:
        pytest.skip("no Landlock in this kernel: a worker keeping CAP_DAC_READ_SEARCH reads any file")
    output = run([PROBE.format(secret=str(secret))], Limits()).replace("\t", " ")
    assert "DENIED PermissionError" in output
    assert "READ" not in output
    assert "CapEff: 0000000000000004" in output


def test_without_landlock_the_capability_reads_everything(secret):
    """The documented limit: without Landlock, the kept capability reads a closed folder."""
    output = run([PROBE.format(secret=str(secret))], Limits(landlock=False)).replace("\t", " ")
    assert "READ ANSWER = 42" in output


def test_landlock_keeps_a_worker_to_its_own_proc_entries_after_the_caches_are_dropped(tmp_path):
    """A process confined as a worker without a container reads its own /proc entries and no other
    process's (its parent's command line and environment, the list of processes, /proc/net), even after
    the kernel dropped its caches of names and inodes, which gives a /proc/<pid> entry a new inode: the
    rule names the old one, and only the descriptor the worker keeps holds it."""
    if landlock_abi() < 1:
        pytest.skip("no Landlock in this kernel")
    from autograder.sandbox import confine

    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    report_r, report_w = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            confine.landlock(str(tmp_path), confine.readable_paths() + list(confine._LANDLOCK_READS)
                             + confine.own_proc())
            os.write(ready_w, b"r")
            os.read(go_r, 1)  # the caches are dropped now
            seen = []
            for path in ("/proc/self/status", "/proc/self/task", f"/proc/{parent}/cmdline",
                         f"/proc/{parent}/environ", "/proc", "/proc/net/unix", "/proc/self/net/unix"):
                try:
                    if os.path.isdir(path):
                        os.listdir(path)
                    else:
                        with open(path, "rb") as f:
                            f.read()
                    seen.append(f"read {path}")
                except OSError as error:
                    seen.append(f"denied {path} {type(error).__name__}")
            os.write(report_w, "\n".join(seen).encode())
        finally:
            os._exit(0)
    os.read(ready_r, 1)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2")  # dentries and inodes
    os.write(go_w, b"g")
    os.waitpid(pid, 0)
    seen = os.read(report_r, 1 << 16).decode().splitlines()
    assert seen == ["read /proc/self/status", "read /proc/self/task",
                    f"denied /proc/{parent}/cmdline PermissionError",
                    f"denied /proc/{parent}/environ PermissionError", "denied /proc PermissionError",
                    "denied /proc/net/unix PermissionError", "denied /proc/self/net/unix PermissionError"]
