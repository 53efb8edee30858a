"""Can a submission forge its grade by taking over its worker (tests/sandbox/forging/)?

Each attack answers the grader in the worker's place: from the frames above its forward, through a
traceback with every name built from strings, the garbage collector's objects, ctypes, sys reached
through the interpreter's classes, a helper module, a module written while it runs, the worker's
descriptors written to directly; it hides a broken rule (a tensor kept on ctx, autograd in place of the
companion Function) or turns the score into a yes/no answer about the hidden inputs. Before the grader
saw reaching, every takeover scored full marks with wrong Functions (62/62), and the direct writes 50.

Each is graded among honest submissions (alice's right Functions, bob's wrong ones, right Functions
written with what sits close to a reach, Functions that behave by their inputs) with the documented hidden
tests, in each way an instructor grades: as root, as an ordinary user, and as that user with
--no-isolation. A forged submission must be flagged, with its evidence on its page and in report.html,
and score nothing on every problem, hidden ones included; the honest ones keep what their Functions earn.
"""

import csv
import html
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.judge.checks import max_score, spec_of
from autograder.judge.reference import encoded_cases
from autograder.measure.probe import measure
from autograder.sandbox import landlock_abi
from tests.conftest import EXAMPLES, HIDDEN_TESTS, ROOT, notebook
from tests.sandbox.ordinary_user import ordinary_user, why_not

pytestmark = pytest.mark.slow

FORGING = ROOT / "tests" / "sandbox" / "forging"
MODES = ["root", "user", "user-no-isolation"]
HIDDEN = "LinearFunction, other shapes"
# every takeover, and the evidence its page names (a word of what it used)
ATTACKS = {"takeover": "sys._getframe", "takeover_traceback": "getattr", "gc_walk": "gc.get_objects",
           "ctypes_poke": "ctypes", "obfuscated": "__subclasses__", "oracle_takeover": "sys._getframe",
           "rule_ctx": "sys._getframe", "runtime_module": "written_takeover", "fd_forge": "os.write",
           "helper_takeover": "tools.py"}
HONEST = ["alice", "bob", "honest_unusual", "oracle_behaviour"]


def forged_measurements() -> dict:
    """What fd_forge writes: each visible problem's right Functions measured beforehand with the grader's
    own code and the course's seed, as a student could on their own machine."""
    namespace: dict = {}
    exec(compile((FORGING / "common.py").read_text().replace("TAKE_OVER(", "(lambda name: None)("),  # noqa: S102
                 "common", "exec"), namespace)
    right = namespace["RIGHT"]
    return {p.name: measure(spec_of(p), {p.lookup: right[p.lookup]}, encoded_cases(p, 0), 0)
            for p in find_assignment("custom-functions").problems if not p.hidden}


def write_class(folder: Path) -> None:
    """The class: each attack after common.py, the honest ones, and one student's folder with a notebook
    and the helper module that holds its takeover."""
    folder.mkdir(parents=True)
    common = (FORGING / "common.py").read_text()
    for attack in sorted(FORGING.glob("*.py")):
        if attack.name == "common.py":
            continue
        text = attack.read_text()
        if attack.stem == "fd_forge":
            text = text.replace("FORGED = {}", f"FORGED = {forged_measurements()!r}")
        (folder / attack.name).write_text(f"{common}\n\n{text}")
    for whole in (FORGING / "whole").glob("*.py"):
        shutil.copy(whole, folder / whole.name)
    for example in ("alice.py", "bob.py"):
        shutil.copy(EXAMPLES / example, folder / example)
    student = folder / "helper_takeover"
    student.mkdir()
    shutil.copy(FORGING / "helper" / "tools.py", student / "tools.py")
    notebook(student / "helper_takeover.ipynb", common,
             "from tools import take_over\n\n\ndef TAKE_OVER(name):\n    take_over(answer)\n")


def grade(base: Path, mode: str, assignment: str, classes: Path, extra: list[Path] = ()) -> Path:
    """The command line as the mode's instructor runs it; returns the output folder."""
    user = None if mode == "root" else ordinary_user()
    python = sys.executable if user is None else user.python
    project = ROOT if user is None else user.project
    out = base / "out"
    command = [python, "-m", "autograder", "grade", "--assignment", assignment, "--out", out, "--jobs", "2",
               "--quiet", *[a for e in extra for a in ("--extra", e)], classes]
    if mode == "user-no-isolation":
        refuse = project / "tests" / "sandbox" / "no_user_namespaces.py"
        command = [python, refuse, *command, "--no-isolation"]
    run = (user.run(command, cwd=base) if user is not None else
           subprocess.run(list(map(str, command)), cwd=base, capture_output=True, text=True, timeout=1800,
                          check=False))
    assert run.returncode == 0, run.stderr[-3000:]
    return out


def base_folder(tmp_path_factory, mode: str, name: str) -> Path:
    if mode != "root" and (reason := why_not()):
        pytest.skip(reason)
    if mode == "user-no-isolation" and landlock_abi() < 6:
        pytest.skip("without a container and Landlock's signal scoping (ABI 6), a worker could signal the "
                    "grader")
    if mode == "root":
        return tmp_path_factory.mktemp(f"{name}-{mode}")
    user = ordinary_user()
    base = user.home / f"{name}-{mode}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir()
    return base


@pytest.fixture(scope="module", params=MODES)
def graded(request, tmp_path_factory) -> Path:
    base = base_folder(tmp_path_factory, request.param, "forging")
    write_class(base / "class")
    hidden = base / "hidden_tests.py"
    shutil.copy(HIDDEN_TESTS, hidden)
    if request.param != "root":
        ordinary_user().own(base)
    return grade(base, request.param, "custom-functions", base / "class", [hidden])


def results(out: Path, sid: str) -> dict:
    return json.loads((out / sid / "results.json").read_text())


def per_problem(result: dict) -> dict[str, float]:
    scores: dict[str, float] = {}
    for test in result["tests"]:
        problem = test["name"].split(": ")[0]
        scores[problem] = scores.get(problem, 0) + test["score"]
    return scores


@pytest.mark.parametrize("attack", ATTACKS)
def test_a_takeover_is_flagged_and_scores_nothing(graded, attack):
    """Is the forged submission flagged, scoring nothing on every problem (the hidden one included), with
    its evidence named on its page, in results.json and in report.html?"""
    result = results(graded, attack)
    flag = result["extra_data"]["flagged"]
    assert result["score"] == 0 and all(t["score"] == 0 for t in result["tests"])
    assert HIDDEN in flag["touched"] and len(flag["touched"]) == 5
    evidence = " ".join(f"{e['where']} {e['what']} {e['text']}" for e in flag["evidence"])
    assert ATTACKS[attack] in evidence, evidence
    assert all(t["output"].startswith("Not scored: your submission reaches into the grader")
               for t in result["tests"])
    page = html.unescape((graded / attack / "feedback.html").read_text())
    assert "Flagged for your instructor" in page and ATTACKS[attack] in page
    report = html.unescape((graded / "report.html").read_text())
    assert f'href="{attack}/feedback.html">{attack}</a>' in report.split('id="flagged"')[1].split("<h2")[0]
    rows = {r["submission"]: r for r in csv.DictReader((graded / "grades.csv").open())}
    assert rows[attack]["flagged"] == "withheld" and rows[attack]["score"] == "0"


def test_what_ran_was_refused_and_told(graded):
    """The reaches the source does not show are seen as they happen: the module written while running,
    and the descriptors written to behind the loop's back."""
    said = {sid: [e["what"] for e in results(graded, sid)["extra_data"]["flagged"]["evidence"]
                  if e["how"].startswith("while running")] for sid in ("runtime_module", "fd_forge")}
    assert any("written_takeover.py" in w or "open" in w for w in said["runtime_module"]), said
    assert any("behind its back" in w for w in said["fd_forge"]), said


def test_what_a_worker_does_while_a_hidden_problem_is_measured_never_reaches_the_page(graded):
    """A reach made only while the hidden problem is measured, its evidence naming a hidden input: the
    hidden problem scores nothing, the visible ones keep full marks, the instructor reads the evidence in
    results.json, and the student's page shows neither a flag nor the input."""
    result = results(graded, "hidden_smuggle")
    flag = result["extra_data"]["flagged"]
    assert flag["touched"] == [HIDDEN] and per_problem(result)[HIDDEN] == 0
    alice = per_problem(results(graded, "alice"))
    assert all(per_problem(result)[p] == alice[p] for p in alice if p != HIDDEN)
    assert any("LEAK-" in e["what"] and e["hidden"] for e in flag["evidence"]), flag["evidence"]
    page = html.unescape((graded / "hidden_smuggle" / "feedback.html").read_text())
    assert "LEAK-" not in page and "Flagged for your instructor" not in page


def test_honest_submissions_keep_what_their_functions_earn(graded):
    """alice and the right Functions written close to a reach keep full marks; bob's and the Functions
    that behave by their inputs score as they behave, and none of them is flagged."""
    total = sum(t["max_score"] for t in results(graded, "alice")["tests"])
    for sid in HONEST:
        assert "flagged" not in results(graded, sid)["extra_data"], sid
    assert results(graded, "alice")["score"] == results(graded, "honest_unusual")["score"] == total > 0
    assert 0 < results(graded, "bob")["score"] < total
    scores = per_problem(results(graded, "oracle_behaviour"))
    alice = per_problem(results(graded, "alice"))
    assert all(scores[p] == alice[p] for p in alice if p != HIDDEN) and scores[HIDDEN] < alice[HIDDEN]


def test_accepting_a_flag_gives_back_what_was_measured(graded, request):
    """[[accept]] in grading.toml, and `grade` run again (it grades nothing again): the points withheld
    count, which are what the wrong Functions earned once their takeover was refused, not what the
    takeover would have answered."""
    if request.node.callspec.params["graded"] != "root":
        pytest.skip("run once, as root")
    (graded / "grading.toml").write_text('[[accept]]\nstudent = "takeover"\nreason = "reviewed"\n')
    try:
        grade(graded.parent, "root", "custom-functions", graded.parent / "class",
              [graded.parent / "hidden_tests.py"])
        rows = {r["submission"]: r for r in csv.DictReader((graded / "grades.csv").open())}
        withheld = results(graded, "takeover")["extra_data"]["flagged"]["withheld"]
        assert rows["takeover"]["flagged"] == "accepted"
        assert float(rows["takeover"]["score"]) == sum(withheld.values()) < results(graded, "alice")["score"]
        assert "accepts it: reviewed" in html.unescape((graded / "takeover" / "feedback.html").read_text())
    finally:
        (graded / "grading.toml").unlink()
        grade(graded.parent, "root", "custom-functions", graded.parent / "class",
              [graded.parent / "hidden_tests.py"])


# -- double-backward: the companion Function's rule ----------------------------------------------------------

@pytest.fixture(scope="module", params=MODES)
def graded_double(request, tmp_path_factory) -> Path:
    base = base_folder(tmp_path_factory, request.param, "forging-double")
    classes = base / "class"
    classes.mkdir()
    for source in (FORGING / "double_backward" / "rule_autograd.py", ROOT / "examples" / "double-backward" /
                   "frank.py", ROOT / "examples" / "double-backward" / "grace.py"):
        shutil.copy(source, classes / source.name)
    if request.param != "root":
        ordinary_user().own(base)
    return grade(base, request.param, "double-backward", classes)


def test_a_hidden_broken_rule_is_flagged(graded_double):
    """Cube's backward through autograd, hidden by a takeover answering with a right Cube: flagged, nothing
    scored; frank's right Functions keep full marks beside it."""
    result = results(graded_double, "rule_autograd")
    assert result["score"] == 0 and "sys._getframe" in json.dumps(result["extra_data"]["flagged"])
    assert "flagged" not in results(graded_double, "frank")["extra_data"]
    assert results(graded_double, "frank")["score"] == max_score(find_assignment("double-backward"))
