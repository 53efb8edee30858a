"""Is nothing lost when the grader is killed mid-batch: does running the same command again grade only
what is missing and end with the very files of an uninterrupted run, and does --force grade everything
again?

One submission of the class waits at import until the test creates a file, so the grader is killed
while it is certainly in the middle of the batch. Nothing here measures time. (The file is made in the
virtual environment, the one folder of this machine a worker's container shows it, read-only.)
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.slow

FILES = ("results.json", "feedback.html")


def make_class(folder: Path, release: Path) -> list[str]:
    """Eight submissions, graded in name order; the second waits for `release` to exist."""
    alice, bob = (EXAMPLES / "alice.py").read_text(), (EXAMPLES / "bob.py").read_text()
    waits = alice + (f"\nimport os\nimport time\n\nwhile not os.path.exists({str(release)!r}):\n"
                     f"    time.sleep(0.05)\n")
    sources = {"a1": alice, "a2_waits": waits, "a3": alice, "b1": bob, "b2": bob, "c1": alice, "c2": bob,
               "c3": alice}
    folder.mkdir()
    for sid, source in sources.items():
        (folder / f"{sid}.py").write_text(source)
    return sorted(sources)


def command(out: Path, submissions: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
            "--out", str(out), "--jobs", "1", "--load-timeout", "900", "--problem-timeout", "120", *extra,
            str(submissions)]


def grade(out: Path, submissions: Path, *extra: str) -> None:
    run = subprocess.run(command(out, submissions, *extra), cwd=ROOT, capture_output=True, text=True,
                         timeout=1800, check=False)
    assert run.returncode == 0, run.stderr[-3000:]


def stamps(out: Path, ids: list[str]) -> dict[str, tuple[int, int]]:
    """(inode, mtime in ns) of every result file: a file written again gets a new inode (atomic rename)."""
    found = {}
    for sid in ids:
        for name in FILES:
            path = out / sid / name
            if path.exists():
                info = path.stat()
                found[f"{sid}/{name}"] = (info.st_ino, info.st_mtime_ns)
    return found


def wait_for(condition, what: str, process: subprocess.Popen | None = None) -> None:
    for _ in range(6000):  # a generous bound on a slow machine; not an assertion about speed
        if condition():
            return
        if process is not None and process.poll() is not None:
            pytest.fail(f"the grader ended (status {process.returncode}) before {what}")
        time.sleep(0.1)
    pytest.fail(f"gave up waiting for {what}")


def processes_naming(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("resume")
    release = Path(sys.prefix) / f".resume-release-{os.getpid()}"
    release.unlink(missing_ok=True)
    ids = make_class(base / "class", release)
    resumed, uninterrupted = base / "resumed", base / "uninterrupted"

    grader = subprocess.Popen(command(resumed, base / "class"), cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(lambda: (resumed / "a1" / "results.json").exists(), "the first results.json", grader)
    finally:
        os.kill(grader.pid, signal.SIGKILL)
        grader.wait()
    wait_for(lambda: not processes_naming(str(resumed)), "the killed grader's workers to end")
    killed = {sid for sid in ids if (resumed / sid / "results.json").exists()}
    before = stamps(resumed, ids)

    release.touch()
    try:
        grade(resumed, base / "class")
        after = stamps(resumed, ids)
        grade(uninterrupted, base / "class")
        forced_before = stamps(resumed, ids)
        grade(resumed, base / "class", "--force")
    finally:
        release.unlink(missing_ok=True)
    return {"ids": ids, "killed": killed, "before": before, "after": after, "resumed": resumed,
            "uninterrupted": uninterrupted, "forced_before": forced_before, "forced": stamps(resumed, ids)}


def test_kill_lands_mid_batch_and_leaves_no_worker(runs):
    """Is the grader killed after the first submission and before the one that waits, with every worker
    gone with it (they die with the grader)?"""
    assert runs["killed"] == {"a1"}
    assert not processes_naming(str(runs["resumed"]))


def test_second_run_grades_only_what_is_missing(runs):
    """Does the same command, run again, leave the submission graded before the kill untouched and grade
    all the others?"""
    before, after = runs["before"], runs["after"]
    assert set(before) == {"a1/results.json", "a1/feedback.html"}
    for name in before:
        assert after[name] == before[name], name
    assert set(after) == {f"{sid}/{name}" for sid in runs["ids"] for name in FILES}


def test_resumed_files_equal_an_uninterrupted_run_byte_for_byte(runs):
    """Are results.json, feedback.html and grades.csv after the kill and the second run byte for byte
    those of a run that was never interrupted, with no partial file left over?"""
    resumed, uninterrupted = runs["resumed"], runs["uninterrupted"]
    for sid in runs["ids"]:
        for name in FILES:
            same = (resumed / sid / name).read_bytes() == (uninterrupted / sid / name).read_bytes()
            assert same, (sid, name)
    assert (resumed / "grades.csv").read_bytes() == (uninterrupted / "grades.csv").read_bytes()
    listing = sorted(str(p.relative_to(resumed)) for p in resumed.rglob("*"))
    assert listing == sorted(str(p.relative_to(uninterrupted)) for p in uninterrupted.rglob("*"))


def test_force_grades_everything_again(runs):
    """Does --force write every submission's files again, to the same content?"""
    before, forced = runs["forced_before"], runs["forced"]
    assert set(forced) == set(before)
    assert all(forced[name][0] != before[name][0] for name in before)
    for sid in runs["ids"]:
        for name in FILES:
            assert (runs["resumed"] / sid / name).read_bytes() == \
                (runs["uninterrupted"] / sid / name).read_bytes(), (sid, name)
