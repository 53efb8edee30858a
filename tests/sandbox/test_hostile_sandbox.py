"""Does a worker hold nothing but its own submission, and can no submission stop or slow the batch?

One batch, graded as root through the command line with an instructor's extra file (a hidden problem and
a secret string), mixes honest submissions (two copies of alice.py carrying a marker of their own, and one
that computes for a few seconds before defining its Functions) with one submission per hazard of
tests/sandbox/hostile_sandbox/: snooping in memory and on disk for classmates' work and the hidden tests,
forging through trace and profile hooks or a patched json module, exhausting the process limit with
threads, forging messages to move a deadline, memory behind memfd_create, sixty spinning processes, and
System V shared memory left for a classmate. Only results, files and processes are checked, never times.
"""

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.judge.checks import max_score
from autograder.sandbox.cgroups import Cgroups
from autograder.sandbox.confine import available
from autograder.sandbox.processes import UID_BASE, UID_COUNT
from tests.conftest import ALICE, ROOT, autograder

FULL = max_score(find_assignment("custom-functions"))  # alice.py's score

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="workers get their own user ids only when the "
                                                           "grader is root")]

HOSTILE = ROOT / "tests" / "sandbox" / "hostile_sandbox"
PROBLEMS = ["KillHead", "MyReLU", "Exp", "LinearFunction"]
MARKER = "SECRET-ALICE-7731"
# 1 s of CPU within the 20 s load deadline, whatever else the machine runs (CI shares it): a 20-fold margin
BUSY = "import time\nimport torch\n\nstart = time.process_time()\nwhile time.process_time() - start < 1:\n" \
       "    torch.randn(64, 64) @ torch.randn(64, 64)\n"


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("sandbox")
    submissions = base / "class"
    submissions.mkdir()
    alice = ALICE.read_text()
    (submissions / "alice.py").write_text(f"# {MARKER}\n" + alice)
    (submissions / "alice_again.py").write_text(f"# {MARKER}\n" + alice)
    (submissions / "busy.py").write_text(BUSY + alice)
    for path in HOSTILE.glob("*.py"):
        if path.name != "secret_extra.py":
            (submissions / path.name).write_bytes(path.read_bytes())
    # A worker folder left by a grader killed with SIGKILL: the next batch sweeps it away.
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = Path("/tmp") / f"autograder-{dead.pid}-leftover"
    leftover.mkdir(exist_ok=True)
    out = base / "out"
    run = autograder("grade", "--assignment", "custom-functions", "--out", out, "--load-timeout", "20",
                     "--problem-timeout", "10", "--jobs", "3", "--quiet",
                     "--extra", HOSTILE / "secret_extra.py", submissions, timeout=1200,
                     # started beside the class, as an instructor would: python -m puts it on sys.path
                     cwd=base)
    ids = sorted(p.stem for p in submissions.glob("*.py"))
    return {"out": out, "run": run, "leftover": leftover, "ids": ids}


def results(batch, sid: str) -> dict:
    return json.loads((batch["out"] / sid / "results.json").read_text())


def checks_of(batch, sid: str) -> dict[str, dict]:
    """sid's checks by name: never none, so that a loop over them always asserts."""
    found = {t["name"]: t for t in results(batch, sid)["tests"]}
    assert found, f"{sid} has no checks"
    return found


def visible_text(batch, sid: str) -> str:
    """Everything the student sees: the page and every test's output."""
    page = (batch["out"] / sid / "feedback.html").read_text()
    return page + json.dumps(results(batch, sid))


def test_every_submission_is_graded(batch):
    rows = list(csv.DictReader((batch["out"] / "grades.csv").open()))
    assert sorted(r["submission"] for r in rows) == batch["ids"]


def test_honest_submissions_keep_full_marks(batch):
    """alice twice, and busy.py, which computes for 1 s of CPU while sixty spinners and the other hazards
    run."""
    for sid in ("alice", "alice_again", "busy"):
        for name, test in checks_of(batch, sid).items():
            assert test["status"] == "passed", (sid, name, test["output"][:300])


def test_no_classmate_or_hidden_test_reaches_another_submission(batch):
    """The marker of alice's file, the extra file's secret and the shared-memory secret appear in no other
    submission's output; the snoop copied nothing and scored nothing."""
    for sid in batch["ids"]:
        text = visible_text(batch, sid)
        assert "SECRET-EXTRA" not in text, sid
        assert "SECRET-SHM" not in text, sid
        if not sid.startswith("alice"):
            assert MARKER not in text, sid
    snoop = visible_text(batch, "snoop")
    assert "STOLEN" not in snoop and "SNOOP" in snoop
    assert results(batch, "snoop")["score"] == 0


def test_trace_and_profile_hooks_forge_nothing(batch):
    """Hooks installed at import that swap a right KillHead in while the grader measures are cleared
    first: the wrong backward is measured, and fails."""
    assert checks_of(batch, "trace_forge")["KillHead: gradient"]["status"] == "failed"


def test_a_patched_json_module_never_encodes_a_message(batch):
    """A forward that patches json.dumps while it is measured: the worker's messages never go through it
    (the marker it prints never appears), and the wrong backward is measured and fails."""
    assert checks_of(batch, "json_forge")["KillHead: gradient"]["status"] == "failed"
    assert "JSON-PATCH-RAN" not in visible_text(batch, "json_forge")
    assert "KillHead is not defined" not in visible_text(batch, "json_forge")


def test_threads_that_exhaust_the_process_limit_fail_with_that_cause(batch):
    test = checks_of(batch, "thread_exhaust")["KillHead: gradient"]
    assert test["status"] == "failed"
    assert "threads" in test["output"] and "could not set them aside" in test["output"]


def test_forged_messages_move_no_deadline(batch):
    """The flood of forged lines ends like any endless loop: every problem failed, the batch over."""
    for name, test in checks_of(batch, "deadline_flood").items():
        assert test["status"] == "failed", name


def test_memory_behind_file_descriptors_is_refused_or_contained(batch):
    """memfd_create is refused by seccomp, or the memory cgroup kills the worker: either way the grader
    lives (the batch ended) and the submission scores nothing."""
    assert results(batch, "memfd_hog")["score"] == 0
    if available()["seccomp"]:
        assert "memfd refused after 0 MiB" in visible_text(batch, "memfd_hog")


def test_spinners_fail_only_themselves(batch):
    for name, test in checks_of(batch, "spinners").items():
        assert test["status"] == "failed", name
        assert "did not finish running cell" in test["output"] or "not defined" in test["output"]


def test_shared_memory_does_not_pass_between_workers(batch):
    assert "no segment" in visible_text(batch, "shm_reader")


def test_hidden_problem_is_graded_but_never_shown(batch):
    """The hidden problem counts in alice's score; its name and secret appear nowhere on her page."""
    assert "Hidden linear: gradient" in checks_of(batch, "alice")
    page = (batch["out"] / "alice" / "feedback.html").read_text()
    assert "Hidden linear" not in page


def test_nothing_of_a_worker_survives(batch):
    """No process of the batch runs on, no worker folder is left in /tmp (the killed grader's one was
    swept), and no cgroup of this grader remains."""
    assert not batch["leftover"].exists()
    # the folders a root grader answers for: its own and its workers' (an ordinary user's are its own)
    folders = [p for p in Path("/tmp").glob("autograder-*-*")
               if p.is_dir() and p.name.split("-")[1].isdigit()
               and (p.stat().st_uid == 0 or UID_BASE <= p.stat().st_uid < UID_BASE + UID_COUNT)]
    left = [p for p in folders if not Path(f"/proc/{p.name.split('-')[1]}").exists()]  # their grader is gone
    assert left == []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            assert str(batch["out"]).encode() not in command
    cgroups = Cgroups.find()
    if cgroups is None:
        pytest.skip("no writable cgroup here: the workers relied on their resource limits")
    for parent in cgroups.parents.values():
        assert not [name for name in os.listdir(parent) if name.startswith("autograder-")
                    and not Path(f"/proc/{name.split('-')[1]}").exists()]


def test_a_full_disk_fails_one_submission_not_the_run(tmp_path):
    """An output folder on a 160 KB file system: bob prints a long run of <&> (64 KB kept, about five times
    that on his page once escaped), so his page alone cannot fit, whoever is written first, while the
    others' files (about 96 KB), grades.csv and the class report can. Bob is not graded rather than scored:
    named, left out of grades.csv, exit status 1, no half-written file left; once there is room, the same
    command grades bob and only bob."""
    subs = tmp_path / "class"
    subs.mkdir()
    for path in ALICE.parent.iterdir():
        if path.is_file():
            (subs / path.name).write_bytes(path.read_bytes())
    with (subs / "bob.py").open("a") as bob:
        bob.write('\nprint("<&>" * 30000)  # a printout that fills his page\n')
    small = tmp_path / "small"
    small.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=160k", "tmpfs", str(small)]
    if subprocess.run(mount, check=False).returncode:
        pytest.skip("cannot mount a small tmpfs here")
    out = small / "out"
    try:
        run = autograder("grade", "--assignment", "custom-functions", "--out", out, "--quiet",
                         subs, check=False, timeout=600)
        assert run.returncode == 1, run.stderr
        assert "Traceback" not in run.stderr
        assert "could not write the results of bob (No space left on device)" in run.stderr
        assert "NOT graded" in run.stderr and "run the same command again" in run.stderr
        assert list(out.rglob("*.tmp")) == []
        rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
        assert sorted(rows) == ["alice", "carol", "erin"] and rows["alice"]["score"] == f"{FULL:g}"
        assert not (out / "bob" / "results.json").exists()

        subprocess.run(["mount", "-o", "remount,size=10m", str(small)], check=True)
        again = autograder("grade", "--assignment", "custom-functions", "--out", out, "--quiet", subs,
                           timeout=600)
        assert "3 already graded, 1 to grade (1 new)" in again.stderr
        rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
        graded = json.loads((out / "bob" / "results.json").read_text())["score"]  # bob.py: subtly wrong
        assert sorted(rows) == ["alice", "bob", "carol", "erin"] and float(rows["bob"]["score"]) == graded
        assert 0 < graded < FULL
    finally:
        subprocess.run(["umount", str(small)], check=False)
