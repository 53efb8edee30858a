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
