"""Do `import autograder`, check(), draw() and expect_error work where Linux's mechanisms are missing,
and do the instructor's commands either work there or say in a paragraph that they need Linux?

The notebooks run on macOS and Windows too, where there is no seccomp, Landlock, prctl or
sched_getaffinity (and on Windows no resource, fcntl, SIGALRM or fork). CI runs on Linux only, so each
system is simulated in a subprocess (tests/simulated_platform.py): its missing modules refused, its missing
functions deleted, the C library unloadable, /proc absent, sys.platform its name. There, a right Function
of every problem must get full marks and a wrong one its diagnosis, draw() and expect_error() must work,
and no module of the sandbox (the batch grader's, Linux only) may be imported; `grade` must refuse in one
paragraph, while `list` and `gradescope` (building the archive) work.
"""

import ast
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.simulated_platform import LINUX_MODULES, LINUX_OS, POSIX_MODULES, POSIX_OS, POSIX_SIGNAL
from tests.test_layers import graph, loaded_by, module_files
from tests.wrong_functions import CASES, HEADER, RIGHT

FIRST_RIGHT = {problem: source for problem, source in reversed(RIGHT)}  # the first right one of each problem
WRONG = next((source, check, cause) for problem, source, check, cause in CASES
             if problem == "KillHead" and check == "gradient")
SYSTEMS = {"darwin": "macOS", "win32": "Windows"}
# The notebook's entry points: what `import autograder` and its public names load.
NOTEBOOK_ENTRIES = ("autograder", "autograder.inline", "autograder.expect", "autograder.measure.graphs")

PROGRAM = r"""
import contextlib, io, json, sys
from tests.simulated_platform import simulate, unavailable

simulate(PLATFORM)
result = {"not_simulated": unavailable()}
before = set(sys.modules)
import autograder
result["import"] = sorted(set(sys.modules) - before)
from autograder import check, draw, expect_error
from autograder.course.assignments.registry import for_notebooks

def graded(problem, source):
    # run as a notebook cell: check() finds companions (CubeBackward, Sinh) in the cell's globals
    lookup = for_notebooks().find_problem(problem, include_hidden=False).lookup
    namespace = {"check": check}
    exec(HEADER + source + f"\n_report = check({lookup}, problem={problem!r})", namespace)
    report = namespace["_report"]
    return {"passed": report.passed, "score": report.score, "text": repr(report),
            "max": sum(r.max_score for r in report.results),
            "failed": {r.check: r.details + r.message for r in report.results if not r.passed}}

result["right"] = {problem: graded(problem, source) for problem, source in RIGHT.items()}
result["wrong"] = graded("KillHead", WRONG)

import torch
x = torch.ones(2, requires_grad=True)
result["drawn"] = type(draw((x * x).sum())).__name__
loss = (x * x).sum()
printed = io.StringIO()
with contextlib.redirect_stdout(printed), expect_error(RuntimeError):
    loss.backward()
    loss.backward()
result["expected"] = printed.getvalue()
result["sandbox"] = sorted(m for m in sys.modules if m.startswith("autograder.sandbox"))

from autograder.cli import main
for name, argv in COMMANDS.items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit:
            status = exit.code
        except Exception as error:  # a traceback where a paragraph was due: the test says which
            status = f"{type(error).__name__}: {error}"
    result[name] = {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}
print(json.dumps(result))
"""


def in_simulation(platform: str, tmp) -> dict:
    commands = {"list": ["list"],
                "grade": ["grade", "--assignment", "custom-functions", "--out", str(tmp / "graded"),
                          str(ROOT / "examples" / "custom-functions")],
                "gradescope": ["gradescope", "--assignment", "custom-functions", "--out",
                               str(tmp / "gs.zip")]}
    code = "\n".join([f"PLATFORM = {platform!r}", f"HEADER = {HEADER!r}", f"WRONG = {WRONG[0]!r}",
                      f"RIGHT = {FIRST_RIGHT!r}", f"COMMANDS = {commands!r}", PROGRAM])
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900,
                         check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr[-3000:]
    return json.loads(lines[-1]) | {"tmp": tmp, "platform": platform}


@pytest.fixture(scope="module", params=["darwin", "win32"])
def simulated(request, tmp_path_factory) -> dict:
    return in_simulation(request.param, tmp_path_factory.mktemp(request.param))


def test_simulation_is_in_force(simulated):
    """Were the other system's missing pieces really missing (else the tests below prove nothing)?"""
    assert simulated["not_simulated"] == []


def test_import_loads_nothing_else(simulated):
    assert simulated["import"] == ["autograder"]


def test_right_functions_get_full_marks(simulated):
    """A right Function of every problem of the course, as in tests/wrong_functions.py's RIGHT."""
    assert set(simulated["right"]) == {problem for problem, _ in RIGHT}
    for problem, right in simulated["right"].items():
        assert right["passed"] and right["max"] > 0 and right["score"] == right["max"], (problem, right)
        assert "all checks of this notebook pass" in right["text"] and "marks" not in right["text"]


def test_wrong_function_fails_with_its_cause(simulated):
    wrong, (_, check, cause) = simulated["wrong"], WRONG
    assert not wrong["passed"] and wrong["score"] < wrong["max"]
    assert check in wrong["failed"], wrong["failed"]
    assert cause in wrong["failed"][check]


def test_draw_and_expect_error_work(simulated):
    assert simulated["drawn"] == "Graph"
    assert simulated["expected"].startswith("RuntimeError: Trying to backward through the graph a second")


def test_no_sandbox_module_is_imported(simulated):
    """The sandbox is the batch grader's, Linux only: the notebook's path never loads any of it."""
    assert simulated["sandbox"] == []


def test_grade_says_it_needs_linux(simulated):
    grade = simulated["grade"]
    assert grade["status"] == 2 and grade["stdout"] == ""
    assert "runs on Linux only" in grade["stderr"] and "Gradescope" in grade["stderr"]
    assert f"this system is {SYSTEMS[simulated['platform']]}" in grade["stderr"]
    assert "Traceback" not in grade["stderr"]
    assert not (simulated["tmp"] / "graded").exists()


def test_list_and_gradescope_work(simulated):
    """An instructor on macOS or Windows can still list the problems and build a Gradescope archive."""
    assert simulated["list"]["status"] == 0 and "KillHead" in simulated["list"]["stdout"]
    assert simulated["gradescope"]["status"] == 0, simulated["gradescope"]["stderr"]
    assert (simulated["tmp"] / "gs.zip").stat().st_size > 0


def _linux_only_uses(path) -> list[str]:
    """What a module imports or names that Linux alone, or POSIX alone, has (ctypes itself is everywhere;
    its C library is not)."""
    modules = LINUX_MODULES | POSIX_MODULES
    names = set(LINUX_OS + POSIX_OS + POSIX_SIGNAL) | {"CDLL", "cdll", "find_library"}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        imported = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        found += [f"line {node.lineno}: import {n}" for n in imported if n.split(".")[0] in modules]
        if isinstance(node, ast.Attribute) and node.attr in names:
            found.append(f"line {node.lineno}: .{node.attr}")
    return found


def test_notebook_path_names_nothing_linux_only():
    """Every module the notebook's path may load (any of its functions may run, not only those the
    simulation above calls; annotations' imports never load): no sandbox module, nothing of Linux or POSIX
    alone."""
    files = module_files()
    top, anywhere = graph(files, run_only=True)
    chains = {}
    for entry in NOTEBOOK_ENTRIES:
        chains.update(loaded_by(entry, top, anywhere))
    assert "autograder.measure.probe" in chains and "autograder.judge.verdicts" in chains
    sandbox = {m: chains[m] for m in chains if m.startswith("autograder.sandbox")}
    assert sandbox == {}, sandbox
    found = {m: uses for m in chains if m in files and (uses := _linux_only_uses(files[m]))}
    assert found == {}, found


def test_a_windows_notebook_cell_is_shown_as_the_notebook():
    """IPython's file of a cell, on Windows, is shown to the learner as their notebook."""
    from autograder.measure.calls import _shown_file

    assert _shown_file(r"C:\Users\ada\AppData\Local\Temp\ipykernel_4242\1234.py") == "<your notebook>"
    assert _shown_file("/tmp/ipykernel_4242/1234.py") == "<your notebook>"
    assert _shown_file("/home/ada/helpers.py") == "/home/ada/helpers.py"
