"""Does one batch of hostile submissions (tests/sandbox/hostile/) get graded to the end, each hostile
submission failing for its own cause, while the right submissions among them keep full marks?

The whole folder and two copies of alice.py are graded in one run of the command line as root (workers
under their own user ids). The hazards whose containment does not rest on user ids are graded again as an
ordinary user: once with Landlock (which then keeps workers from writing files or signalling the grader)
and once without it (process groups, the child subreaper and resource limits only). Nothing here measures
time: only the results, the files and the processes left behind are checked.
"""

import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.sandbox import landlock_abi
from tests.conftest import ALICE, ROOT

pytestmark = pytest.mark.slow

HOSTILE = ROOT / "tests" / "sandbox" / "hostile"
LOAD_SECONDS, PROBLEM_SECONDS = 20, 10
PROBLEMS = ["KillHead", "MyReLU", "Exp", "LinearFunction"]
NOBODY = 65534
# Graded again as an ordinary user: the hazards whose containment does not rest on the worker's user id.
AS_USER = ["background", "write_output", "kill_grader", "fork_bomb", "fork_once", "hang_backward",
           "crash_segfault", "exit_os", "print_flood", "patch_autograder", "thread_patch",
           "control_zero_backward", "control_wrong"]
# ... and without Landlock: nothing that writes files or signals (the worker shares the grader's user id).
AS_USER_WITHOUT_LANDLOCK = ["background", "fork_bomb", "hang_backward", "crash_segfault", "exit_os", "memory",
                            "print_flood", "sigterm", "patch_autograder", "thread_patch",
                            "control_zero_backward"]
WITHOUT_LANDLOCK = f"""
import sys
from pathlib import Path

from autograder.course import find_assignment
from autograder.batch import grade
from autograder.sandbox import Limits

limits = Limits(load_seconds={LOAD_SECONDS}, problem_seconds={PROBLEM_SECONDS}, landlock=False)
grade(find_assignment("custom-functions"), [Path(p) for p in sys.argv[2:]], Path(sys.argv[1]), workers=2,
      limits=limits, progress=False)
"""


class Batch:
    """One graded batch: the result files, and what the grader left running or wrote where it should not."""

    def __init__(self, out: Path, cwd: Path, run: subprocess.CompletedProcess, submissions: list[str]):
        self.out, self.cwd, self.run, self.submissions = out, cwd, run, submissions

    def results(self, sid: str) -> dict:
        if sid not in self.submissions:
            pytest.skip(f"{sid} is not in this batch")
        return json.loads((self.out / sid / "results.json").read_text())

    def tests(self, sid: str) -> dict[str, dict]:
        return {t["name"]: t for t in self.results(sid)["tests"]}

    def page(self, sid: str) -> str:
        return html.unescape((self.out / sid / "feedback.html").read_text())

    def max_score(self) -> float:
        return sum(t["max_score"] for t in self.results("alice")["tests"])

    def problem(self, sid: str, problem: str) -> list[dict]:
        """The problem's checks in sid's results: never none, so that a loop over them always asserts."""
        found = [t for name, t in self.tests(sid).items() if name.startswith(problem + ": ")]
        assert found, f"{sid} has no check of {problem}"
        return found


def grade(out: Path, cwd: Path, paths: list[Path], user: int | None = None,
          landlock: bool = True) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
               "--out", str(out), "--load-timeout", str(LOAD_SECONDS),
               "--problem-timeout", str(PROBLEM_SECONDS), "--jobs", "2", "--quiet", *map(str, paths)]
    if not landlock:  # the command line has no switch for it: the same grading, through batch.grade()
        command = [sys.executable, "-c", WITHOUT_LANDLOCK, str(out), *map(str, paths)]
    if user is not None:  # an ordinary user that may still read an interpreter installed under /root
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
                   "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search", *command]
    return subprocess.run(command, check=False, cwd=cwd, capture_output=True, text=True, timeout=1800)


def can_run_as_user(landlock: bool) -> str:
    if os.geteuid() != 0:
        return "the tests must run as root to grade as another user"
    if not shutil.which("setpriv"):
        return "setpriv is missing"
    if landlock and landlock_abi() < 6:
        return "without Landlock (ABI 6: signal scoping) an ordinary user's workers could signal the grader"
    return ""


def class_folders(base: Path, files: list[Path]) -> list[Path]:
    """The batch as two folders: the hostile files and alice.py, then alice.py again (its id alice-2). The
    command line names folders, never a .py file: the sandbox suite's snoop, when it runs at the same time
    (make test runs two test files at once), reads every .py file named on any command line."""
    folders = [base / "class", base / "again"]
    for folder, sources in zip(folders, (files + [ALICE], [ALICE])):
        folder.mkdir()
        for source in sources:
            shutil.copy(source, folder / source.name)
    return folders


@pytest.fixture(scope="module", params=["root", "user", "user-without-landlock"])
def batch(request, tmp_path_factory) -> Batch:
    base = tmp_path_factory.mktemp(f"hostile-{request.param}")
    out, cwd = base / "out", base / "cwd"
    cwd.mkdir()
    (cwd / "keep").mkdir()  # the grader's working folder, which a submission may try to write into
    if request.param == "root":
        if os.geteuid() != 0:
            pytest.skip("workers get their own user ids only when the grader is root")
        names = sorted(p.stem for p in HOSTILE.glob("*.py"))
        user = None
    else:
        landlock = request.param == "user"
        if reason := can_run_as_user(landlock):
            pytest.skip(reason)
        names = AS_USER if landlock else AS_USER_WITHOUT_LANDLOCK
        user = NOBODY
        for folder in (base, cwd, cwd / "keep"):
            os.chown(folder, NOBODY, NOBODY)
    paths = class_folders(base, [HOSTILE / f"{n}.py" for n in names])
    run = grade(out, cwd, paths, user, request.param != "user-without-landlock")
    assert run.returncode == 0, run.stderr[-3000:]
    return Batch(out, cwd, run, names + ["alice", "alice-2"])


def assert_all_failed(batch: Batch, sid: str, *phrases: str, problems=PROBLEMS) -> None:
    for problem in problems:
        for test in batch.problem(sid, problem):
            assert test["status"] == "failed" and test["score"] == 0, (sid, test)
            for phrase in phrases:
                assert phrase in test["output"], (sid, test["name"], phrase, test["output"])


# measured before backward
FORWARD_PART = ("is a Function", "forward", "inputs unchanged", "save_for_backward")


def assert_backward_failed(batch: Batch, sid: str, phrase: str, problem: str) -> None:
    """A hang or a crash inside one problem's backward costs that part only: the checks measured before it
    keep their points, every other check of the problem fails, naming the cause (or its prerequisite)."""
    for test in batch.problem(sid, problem):
        if test["name"].split(": ")[1] in FORWARD_PART:
            assert test["status"] == "passed" and test["score"] == test["max_score"], (sid, test)
        else:
            assert test["status"] == "failed" and test["score"] == 0, (sid, test)
            assert phrase in test["output"] or "pass first" in test["output"], \
                (sid, test["name"], test["output"])


def assert_full_marks(batch: Batch, sid: str, problems=PROBLEMS) -> None:
    for problem in problems:
        for test in batch.problem(sid, problem):
            assert test["status"] == "passed" and test["score"] == test["max_score"], (sid, test)


def assert_scores_like(batch: Batch, sid: str, control: str) -> None:
    """Tampering gains nothing: check for check, the same verdicts as the same Functions untampered."""
    mine, plain = batch.tests(sid), batch.tests(control)
    assert {n: t["status"] for n, t in mine.items()} == {n: t["status"] for n, t in plain.items()}
    assert batch.results(sid)["score"] == batch.results(control)["score"]


def left_running(batch: Batch) -> list[str]:
    """Processes forked from this batch's grader (their command line names its output folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if entry.name.isdigit() and str(batch.out) in command:
            found.append(f"{entry.name}: {command}")
    return found


# -- the batch as a whole -----------------------------------------------------------------------------

def test_batch_grades_every_submission(batch):
    """Does the batch end normally with one row in grades.csv and one results.json per submission?"""
    rows = list(csv.DictReader((batch.out / "grades.csv").open()))
    assert sorted(r["submission"] for r in rows) == sorted(batch.submissions)
    for sid in batch.submissions:
        assert len(batch.results(sid)["tests"]) == len(batch.results("alice")["tests"])


def test_right_submissions_keep_full_marks(batch):
    """Do both copies of alice.py, graded amid the hostile ones, pass every check?"""
    for sid in ("alice", "alice-2"):
        assert_full_marks(batch, sid)
        assert batch.results(sid)["score"] == batch.max_score() > 0
    assert batch.tests("alice") == batch.tests("alice-2")


def test_nothing_is_left_running(batch):
    """When the batch is over, is every process the submissions started gone?"""
    assert left_running(batch) == []


# -- ending, hanging, crashing ----------------------------------------------------------------------

def test_exit_at_import_fails_every_problem_naming_sys_exit(batch):
    """Does a submission that calls sys.exit() at import fail every problem, naming the exit?"""
    assert_all_failed(batch, "exit_sys", "not defined", "sys.exit()", "SystemExit")


def test_os_exit_at_import_fails_every_problem_naming_the_exit(batch):
    """Does a submission that calls os._exit(3) at import fail every problem, saying the program exited
    with status 3 while running cell 1?"""
    assert_all_failed(batch, "exit_os", "exited with status 3", "cell 1")


def test_hang_at_import_fails_every_problem_naming_the_timeout(batch):
    """Does a submission that loops forever at import fail every problem, naming the load timeout?"""
    assert_all_failed(batch, "hang_import", f"did not finish running cell 1 within {LOAD_SECONDS} s")


def test_ignoring_sigterm_does_not_keep_a_submission_alive(batch):
    """Is a submission that ignores SIGTERM, SIGINT and SIGHUP and sleeps forever stopped all the same,
    with the load timeout named?"""
    assert_all_failed(batch, "sigterm", f"did not finish running cell 1 within {LOAD_SECONDS} s")


def test_hang_in_one_backward_costs_only_that_part(batch):
    """Does an endless loop inside MyReLU.backward fail MyReLU's checks of backward alone, naming the
    problem timeout, while its forward and the other problems keep full marks?"""
    assert_backward_failed(batch, "hang_backward", f"did not finish within {PROBLEM_SECONDS} s", "MyReLU")
    assert_full_marks(batch, "hang_backward", problems=["KillHead", "Exp", "LinearFunction"])


def test_abort_in_one_backward_costs_only_that_part(batch):
    """Does os.abort() inside Exp.backward fail Exp's checks of backward alone, naming SIGABRT?"""
    assert_backward_failed(batch, "crash_abort", "SIGABRT", "Exp")
    assert_full_marks(batch, "crash_abort", problems=["KillHead", "MyReLU", "LinearFunction"])


def test_segfault_in_one_backward_costs_only_that_part(batch):
    """Does a segmentation fault (ctypes reading address 0) inside LinearFunction.backward fail
    LinearFunction's checks of backward alone, naming SIGSEGV?"""
    assert_backward_failed(batch, "crash_segfault", "SIGSEGV", "LinearFunction")
    assert_full_marks(batch, "crash_segfault", problems=["KillHead", "MyReLU", "Exp"])


def test_exit_in_one_backward_costs_only_that_part(batch):
    """Does os._exit(0) inside KillHead.backward fail KillHead's checks of backward alone, saying the
    process exited?"""
    assert_backward_failed(batch, "exit_backward", "exited with status 0", "KillHead")
    assert_full_marks(batch, "exit_backward", problems=["MyReLU", "Exp", "LinearFunction"])


# -- exhausting resources ------------------------------------------------------------------------------

def test_forking_once_at_import_costs_nothing(batch):
    """Does a right submission that forks at import, both processes running on as if each were the
    worker, keep full marks (only the worker reports)?"""
    assert_full_marks(batch, "fork_once")


def test_fork_bomb_is_stopped_by_the_process_limit(batch):
    """Does a fork bomb at import run into the process limit, fail every problem naming that limit, and
    leave no process behind?"""
    assert_all_failed(batch, "fork_bomb", "limit on processes")
    assert left_running(batch) == []


def test_eating_memory_fails_every_problem_naming_memory(batch):
    """Does a submission that allocates memory without end at import fail every problem, naming the
    memory limit (MemoryError)?"""
    assert_all_failed(batch, "memory", "out of memory", "MemoryError")


def test_endless_recursion_at_import_fails_every_problem_naming_it(batch):
    """Does endless recursion at import fail every problem, naming RecursionError?"""
    assert_all_failed(batch, "recursion", "recursed without end", "RecursionError")


def test_endless_recursion_in_one_forward_costs_only_that_problem(batch):
    """Does endless recursion inside Exp.forward fail Exp's checks, naming RecursionError, while the
    other problems keep full marks?"""
    tests = batch.tests("recursion_forward")
    assert "RecursionError" in tests["Exp: forward"]["output"]
    assert all(t["status"] == "failed" for t in batch.problem("recursion_forward", "Exp") if t["max_score"])
    assert_full_marks(batch, "recursion_forward", problems=["KillHead", "MyReLU", "LinearFunction"])


def test_printing_without_end_costs_nothing_and_is_truncated(batch):
    """Does a submission that prints about 50 MB (print, sys.__stdout__, raw writes to fds 1 and 2) keep
    full marks, with only the start of its output in a small feedback page?"""
    assert_full_marks(batch, "print_flood")
    page = batch.page("print_flood")
    assert "spam spam" in page and "output truncated" in page
    assert (batch.out / "print_flood" / "feedback.html").stat().st_size < 1024 * 1024


# -- side effects that cost nothing ------------------------------------------------------------------

def test_background_process_costs_nothing_and_is_killed(batch):
    """Does a daemon left behind at import (double fork, setsid, deaf to SIGTERM) cost nothing, and is it
    gone once the batch is over?"""
    assert_full_marks(batch, "background")
    match = re.search(r"background pid (\d+) started", batch.page("background"))
    assert match, "the daemon did not announce itself"
    pid = match.group(1)
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        command = b""  # gone
    assert str(batch.out).encode() not in command


def test_global_torch_settings_cost_nothing(batch):
    """Does a right submission that changes torch's default dtype and device, disables gradients, turns
    on anomaly detection and enters inference mode at import keep full marks?"""
    assert_full_marks(batch, "torch_settings")


def test_trying_to_kill_the_grader_changes_nothing(batch):
    """Does a right submission that signals its parent, its parent's group and every process it may
    reach keep full marks, without the grader noticing?"""
    assert_full_marks(batch, "kill_grader")
    assert "Operation not permitted" in batch.page("kill_grader")


# -- tampering with the verdicts ----------------------------------------------------------------------

def test_patching_torch_earns_nothing_for_wrong_functions(batch):
    """Does a submission with wrong Functions that patches gradcheck, gradgradcheck, allclose, isclose,
    equal and the tensor operators score exactly what the same Functions score untouched, with PyTorch's
    real gradcheck output in its feedback?"""
    for problem in PROBLEMS:
        tests = {t["name"].split(": ")[1]: t for t in batch.problem("patch_torch", problem)}
        for check in ("forward", "gradient", "gradcheck"):
            assert tests[check]["status"] == "failed", (problem, check)
        assert "GradcheckError" in tests["gradcheck"]["output"]
    assert_scores_like(batch, "patch_torch", "control_wrong")


def test_patching_the_autograder_earns_nothing_for_wrong_functions(batch):
    """Does a submission with wrong backwards that replaces autograder.judge.verdicts.judge, the probe's
    functions (their globals and their code) and the worker's message writer, at import and again inside every
    forward and backward, score exactly what the same Functions score untouched?"""
    for problem in PROBLEMS:
        tests = {t["name"].split(": ")[1]: t for t in batch.problem("patch_autograder", problem)}
        assert tests["gradient"]["status"] == tests["gradcheck"]["status"] == "failed", problem
        assert tests["forward"]["status"] == "passed", problem
    assert_scores_like(batch, "patch_autograder", "control_zero_backward")


def test_a_thread_patching_during_the_measurements_costs_nothing(batch):
    """Does a right submission whose thread, started at import, keeps replacing torch.autograd.grad (and
    the probe's own copy of it) with one that answers zeros keep full marks: are its Functions measured
    where that thread does not run?"""
    assert_full_marks(batch, "thread_patch")


def test_lying_tensor_subclass_earns_nothing(batch):
    """Does a Function returning a tensor subclass whose comparisons always say "equal", and which
    answers torch.autograd.grad with the right gradient, score exactly what the same Functions score
    returning plain tensors, and does gradcheck's own output say it fails?"""
    for problem in PROBLEMS:
        tests = {t["name"].split(": ")[1]: t for t in batch.problem("lying_tensor", problem)}
        assert tests["gradient"]["status"] == tests["gradcheck"]["status"] == "failed", problem
        assert "GradcheckError" in tests["gradcheck"]["output"], problem
    assert_scores_like(batch, "lying_tensor", "control_zero_backward")


def test_forged_messages_at_import_earn_nothing_and_do_not_stop_the_batch(batch):
    """Does a submission that writes forged grading messages (the reference's own numbers) and
    unparsable lines into the grader's pipe at import score exactly what its wrong Functions score?"""
    assert_scores_like(batch, "forge_pipe", "control_wrong")


def test_writing_into_the_output_folder_changes_nothing(batch):
    """Does a submission that hunts for the output folder (the grader's command line and working folder,
    a walk of the disk) and tries to overwrite grades.csv and every results.json, its own included, from
    a daemon too, fail to write anything there, scoring what its wrong Functions score?"""
    assert_scores_like(batch, "write_output", "control_wrong")
    page = batch.page("write_output")
    assert "could not write" in page and "WROTE" not in page
    written = sorted(p.name for p in batch.out.iterdir())
    assert written == sorted(batch.submissions + ["grades.csv", "report.html"])
    for folder in batch.out.iterdir():
        if folder.is_dir():
            assert sorted(p.name for p in folder.iterdir()) == ["feedback.html", "results.json"]
            assert "forged" not in (folder / "results.json").read_text()
    rows = {r["submission"]: r for r in csv.DictReader((batch.out / "grades.csv").open())}
    assert float(rows["alice"]["score"]) == batch.max_score()
    assert float(rows["write_output"]["score"]) == batch.results("control_wrong")["score"]
    assert [p.name for p in batch.cwd.iterdir()] == ["keep"] and not any((batch.cwd / "keep").iterdir())
