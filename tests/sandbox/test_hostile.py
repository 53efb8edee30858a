"""Does one batch of hostile submissions (tests/sandbox/hostile/) get graded to the end, each hostile
submission failing for its own cause, while the right submissions among them keep full marks?

The whole folder and two copies of alice.py are graded in one run of the command line in each way an
instructor grades: as root (workers under their own user ids, in containers), as an ordinary user with no
capability (its own account, copy of the project and virtual environment; containers in an unprivileged
user namespace), and as that user where the kernel refuses user namespaces, with --no-isolation (no
container: resource limits, Landlock and seccomp only). Nothing here measures time: only the results,
the files and the processes left behind are checked.
"""

import csv
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.sandbox import landlock_abi
from tests.conftest import ALICE, ROOT
from tests.sandbox.ordinary_user import ordinary_user, why_not

pytestmark = pytest.mark.slow

HOSTILE = ROOT / "tests" / "sandbox" / "hostile"
LOAD_SECONDS, PROBLEM_SECONDS = 20, 10
PROBLEMS = ["KillHead", "MyReLU", "Exp", "LinearFunction"]
# Without a container, the hazards whose containment does not rest on a user id or a namespace of the
# worker's own (with Landlock: no file written, no signal sent outside the worker).
WITHOUT_CONTAINER = ["background", "write_output", "kill_grader", "fork_once", "hang_backward",
                     "crash_segfault", "exit_os", "print_flood", "patch_autograder", "thread_patch",
                     "control_zero_backward", "control_wrong"]
MODES = ["root", "user", "user-no-isolation"]


class BatchRun:
    """One graded batch: the result files, and what the grader left running or wrote where it should not."""

    def __init__(self, out: Path, cwd: Path, run: subprocess.CompletedProcess, submissions: list[str]):
        self.out, self.cwd, self.run, self.submissions = out, cwd, run, submissions

    def results(self, sid: str) -> dict:
        if sid not in self.submissions:
            pytest.skip(f"{sid} is not in this batch")
        return json.loads((self.out / sid / "results.json").read_text())

    def tests(self, sid: str) -> dict[str, dict]:
        """Each check as measured: for a submission flagged for reaching into the grader (which then scores
        nothing), as its measurements found it before its points were withheld (extra_data.flagged)."""
        result = self.results(sid)
        measured = (result["extra_data"].get("flagged") or {}).get("measured", {})
        return {t["name"]: dict(t, status="passed" if measured[t["name"]][0] else "failed",
                                score=measured[t["name"]][1]) if t["name"] in measured else t
                for t in result["tests"]}

    def score(self, sid: str) -> float:
        """The total as measured (see tests)."""
        return sum(t["score"] for t in self.tests(sid).values())

    def page(self, sid: str) -> str:
        return html.unescape((self.out / sid / "feedback.html").read_text())

    def max_score(self) -> float:
        return sum(t["max_score"] for t in self.results("alice")["tests"])

    def problem(self, sid: str, problem: str) -> list[dict]:
        """The problem's checks in sid's results: never none, so that a loop over them always asserts."""
        found = [t for name, t in self.tests(sid).items() if name.startswith(problem + ": ")]
        assert found, f"{sid} has no check of {problem}"
        return found


def grade(base: Path, out: Path, cwd: Path, paths: list[Path], mode: str) -> subprocess.CompletedProcess:
    """The command line as the mode's instructor runs it, under tests/sandbox/survivors.py, which lists
    in base/survivors.json what the grading left running."""
    user = None if mode == "root" else ordinary_user()
    python, project = (sys.executable, ROOT) if user is None else (user.python, user.project)
    command = [python, "-m", "autograder", "grade", "--assignment", "custom-functions", "--out", out,
               "--load-timeout", LOAD_SECONDS, "--problem-timeout", PROBLEM_SECONDS, "--jobs", "2", "--quiet",
               *paths]
    if mode == "user-no-isolation":
        refuse = project / "tests" / "sandbox" / "no_user_namespaces.py"
        command = [python, refuse, *command, "--no-isolation"]
    command = [python, project / "tests" / "sandbox" / "survivors.py", base / "survivors.json", *command]
    if user is not None:
        return user.run(command, cwd=cwd)
    return subprocess.run(list(map(str, command)), check=False, cwd=cwd, capture_output=True, text=True,
                          timeout=1800)


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


@pytest.fixture(scope="module", params=MODES)
def batch(request, tmp_path_factory) -> BatchRun:
    mode = request.param
    if mode != "root" and (reason := why_not()):
        pytest.skip(reason)
    if mode == "user-no-isolation" and landlock_abi() < 6:
        pytest.skip("without a container and Landlock's signal scoping (ABI 6), a worker could signal "
                    "the grader")
    names = sorted(p.stem for p in HOSTILE.glob("*.py")) if mode != "user-no-isolation" else WITHOUT_CONTAINER
    if mode == "root":
        base = tmp_path_factory.mktemp(f"hostile-{mode}")
    else:  # in the user's home, where it grades
        user = ordinary_user()
        base = user.home / f"hostile-{mode}"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir()
    out, cwd = base / "out", base / "cwd"
    cwd.mkdir()
    (cwd / "keep").mkdir()  # the grader's working folder, which a submission may try to write into
    paths = class_folders(base, [HOSTILE / f"{n}.py" for n in names])
    if mode != "root":
        user.own(base)
    run = grade(base, out, cwd, paths, mode)
    assert run.returncode == 0, run.stderr[-3000:]
    batch = BatchRun(out, cwd, run, names + ["alice", "alice-2"])
    batch.survivors = json.loads((base / "survivors.json").read_text())
    batch.mode = mode
    return batch


def assert_all_failed(batch: BatchRun, sid: str, *phrases: str, problems=PROBLEMS) -> None:
    for problem in problems:
        for test in batch.problem(sid, problem):
            assert test["status"] == "failed" and test["score"] == 0, (sid, test)
            for phrase in phrases:
                assert phrase in test["output"], (sid, test["name"], phrase, test["output"])


# measured before backward
FORWARD_PART = ("is a Function", "forward", "inputs unchanged", "save_for_backward")


def assert_backward_failed(batch: BatchRun, sid: str, phrase: str, problem: str) -> None:
    """A hang or a crash inside one problem's backward costs that part only: the checks measured before it
    keep their points, every other check of the problem fails, naming the cause (or its prerequisite)."""
    for test in batch.problem(sid, problem):
        if test["name"].split(": ")[1] in FORWARD_PART:
            assert test["status"] == "passed" and test["score"] == test["max_score"], (sid, test)
        else:
            assert test["status"] == "failed" and test["score"] == 0, (sid, test)
            assert phrase in test["output"] or "pass first" in test["output"], \
                (sid, test["name"], test["output"])


def assert_full_marks(batch: BatchRun, sid: str, problems=PROBLEMS) -> None:
    for problem in problems:
        for test in batch.problem(sid, problem):
            assert test["status"] == "passed" and test["score"] == test["max_score"], (sid, test)


def assert_scores_like(batch: BatchRun, sid: str, control: str) -> None:
    """Tampering gains nothing: check for check, the same verdicts as the same Functions untampered (as
    measured, for a submission flagged for reaching into the grader: it scores nothing at all)."""
    mine, plain = batch.tests(sid), batch.tests(control)
    assert {n: t["status"] for n, t in mine.items()} == {n: t["status"] for n, t in plain.items()}
    assert batch.score(sid) == batch.score(control)


# Hostile submissions that reach into the grader (its modules, the worker's descriptors): flagged, they score
# nothing; what their measurements found is kept beside (tests/sandbox/test_forging.py has the takeovers).
FLAGGED = {"background", "forge_pipe", "patch_autograder", "print_flood", "thread_patch", "write_output"}


def left_running(batch: BatchRun) -> list[str]:
    """What the batch's grader left running when it ended (tests/sandbox/survivors.py)."""
    return batch.survivors


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


def test_submissions_that_reach_into_the_grader_are_flagged_and_score_nothing(batch):
    """Are exactly the submissions that reach into the grader flagged, each scoring nothing?"""
    flagged = {sid for sid in batch.submissions if "flagged" in batch.results(sid)["extra_data"]}
    assert flagged == FLAGGED & set(batch.submissions)
    assert all(batch.results(sid)["score"] == 0 for sid in flagged)


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
    assert_all_failed(batch, "hang_import",
                      f"did not finish running cell 1 within {LOAD_SECONDS:g} s of CPU time")


def test_ignoring_sigterm_does_not_keep_a_submission_alive(batch):
    """Can a submission no longer ignore SIGTERM, SIGINT and SIGHUP (and then sleep forever)? Its cells run
    apart from the worker's main thread, where alone a handler may be set: the first one raises."""
    assert_all_failed(batch, "sigterm", "ValueError")
    assert "signal only works in main thread" in batch.page("sigterm")


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
    """Does a segmentation fault inside LinearFunction.backward fail LinearFunction's checks of backward
    alone, naming SIGSEGV?"""
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
    reach change nothing for the grader and the others (the batch ends, alice keeps full marks), and
    fail at most itself, with the cause named?"""
    if batch.mode == "user-no-isolation":  # Landlock's signal scoping keeps the grader out of reach
        assert_full_marks(batch, "kill_grader")
        assert "Operation not permitted" in batch.page("kill_grader")
    else:  # in a container its parent is outside its PID namespace (getppid() is 0): it kills itself alone
        assert_all_failed(batch, "kill_grader", "killed by SIGKILL", "cell 1")


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


def test_isolation_is_stated(batch):
    """Does every results.json say where the code ran: in a container, or (--no-isolation) not?"""
    for sid in batch.submissions:
        isolation = batch.results(sid)["extra_data"]["isolation"]
        assert (isolation == "container") == (batch.mode != "user-no-isolation"), (sid, isolation)
    if batch.mode == "user-no-isolation":
        assert "WITHOUT a container" in batch.run.stderr


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
    """Does a submission that imports the grader's own code to compute the reference's numbers, to write
    them as forged grading messages with unparsable lines into every pipe it holds at import, score
    nothing, refused at its first import of the grader's code, the batch going on
    (tests/sandbox/test_forging.py writes forged measurements that need no grader code)?"""
    result = batch.results("forge_pipe")
    assert "flagged" in result["extra_data"] and result["score"] == 0
    assert "PermissionError" in batch.page("forge_pipe")


def test_writing_into_the_output_folder_changes_nothing(batch):
    """Does a submission that hunts for the output folder (the grader's command line and working folder,
    a walk of the disk) and tries to overwrite grades.csv and every results.json, its own included, from
    a daemon too, fail to write anything there, scoring what its wrong Functions score?"""
    assert_scores_like(batch, "write_output", "control_wrong")
    page = batch.page("write_output")
    # it does not even find the folder (the grader's command line is blanked, and in a container nothing of
    # the machine is there); where it does, it cannot write
    assert "WROTE" not in page
    written = sorted(p.name for p in batch.out.iterdir())
    assert written == sorted(batch.submissions + ["causes.csv", "grades.csv", "grades.csv.sha256",
                                                  "report.html"])
    for folder in batch.out.iterdir():
        if folder.is_dir():
            assert sorted(p.name for p in folder.iterdir()) == ["feedback.html", "results.json"]
            assert json.loads((folder / "results.json").read_text())["output"] != "forged"
    rows = {r["submission"]: r for r in csv.DictReader((batch.out / "grades.csv").open())}
    assert float(rows["alice"]["score"]) == batch.max_score()
    assert float(rows["write_output"]["score"]) == 0  # flagged: it reaches for the grader's files
    assert [p.name for p in batch.cwd.iterdir()] == ["keep"] and not any((batch.cwd / "keep").iterdir())
