"""Does the Gradescope archive build, and does its run_autograder grade exactly as Gradescope runs it?

The archive is unpacked into a temporary root laid out like Gradescope's (source/, submission/,
results/, run_autograder), and run_autograder is started from that root, as root, with
AUTOGRADER_ROOT pointing there and AUTOGRADER_PYTHON at this virtual environment's Python (setup.sh,
which installs Gradescope's own, needs Ubuntu and the internet: it is checked for syntax only).
"""

import base64
import html
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jsonschema
import pytest

from autograder.course.assignments.registry import load
from autograder.gradescope.build import unpack
from autograder.gradescope.feedback import Pictures, render_test
from autograder.gradescope.results import results_document
from autograder.gradescope.settings import Settings
from autograder.judge.checks import max_score
from autograder.judge.findings import Figure
from autograder.judge.verdicts import CheckResult
from autograder.report.files import Graded
from tests.conftest import EXAMPLES, GRADESCOPE_SCHEMA, HIDDEN_TESTS, ROOT, autograder, notebook
from tests.test_no_batch_stoppers import HOSTILE

SNOOP = """
import os
for path in ({source!r}, {settings!r}, {results!r}):
    try:
        if os.path.isdir(path):
            print("LISTED", path, sorted(os.listdir(path)))
        else:
            open(path).read()
            print("READ", path)
    except OSError as error:
        print("DENIED", path, type(error).__name__)
print("{{\\"score\\": 100}}")
"""


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """The archive for custom-functions, with the documented hidden tests bundled in."""
    out = tmp_path_factory.mktemp("archive") / "custom-functions.zip"
    autograder("gradescope", "--assignment", "custom-functions", "--extra", HIDDEN_TESTS, "--out", out,
               timeout=600)
    return out


def gradescope_root(archive: Path, submission: list[Path] | dict[str, str]) -> Path:
    """A root laid out as on Gradescope, in a folder every user may enter (so that closing source/ is
    what keeps students' code out, not the test's own temporary folder)."""
    root = Path(tempfile.mkdtemp(prefix="gradescope-", dir="/tmp"))
    root.chmod(0o755)
    for folder in ("source", "submission", "results"):
        (root / folder).mkdir()
        (root / folder).chmod(0o755)
    unpack(archive, root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    if isinstance(submission, dict):
        for name, text in submission.items():
            (root / "submission" / name).write_text(text)
    else:
        for path in submission:
            shutil.copy(path, root / "submission" / path.name)
    return root


def run_autograder(root: Path) -> subprocess.CompletedProcess:
    """What Gradescope does for each submission: run /autograder/run_autograder from /autograder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRADER", "PYTHON"))}
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable)
    return subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.fixture(scope="module")
def graded(archive):
    """run_autograder on a right, a wrong, a broken, an empty and a snooping submission (two at a time)."""
    snoop = {"snoop.py": SNOOP.format(source="SOURCE", settings="SETTINGS", results="RESULTS")}
    forging = ROOT / "tests" / "sandbox" / "forging"
    takeover = {"takeover.py": "\n\n".join((forging / f).read_text() for f in ("common.py", "takeover.py"))}
    cases = {"right": [EXAMPLES / "alice.py"], "wrong": [EXAMPLES / "bob.py"],
             "broken": [EXAMPLES / "erin.ipynb"], "empty": {}, "snoop": snoop,
             "surrogates": {"mal\udcff\x1b[2J.py": HOSTILE},  # an undecodable byte in its name
             "takeover": takeover}  # tests/sandbox/test_forging.py: it answers for its worker
    roots = {name: gradescope_root(archive, files) for name, files in cases.items()}
    snoop_root = roots["snoop"]
    text = SNOOP.format(source=str(snoop_root / "source"),
                        settings=str(snoop_root / "source" / "gradescope.json"),
                        results=str(snoop_root / "results"))
    (snoop_root / "submission" / "snoop.py").write_text(text)
    with ThreadPoolExecutor(2) as pool:
        runs = dict(zip(roots, pool.map(run_autograder, roots.values())))
    yield {name: (roots[name], runs[name]) for name in roots}
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)


def results(graded, name: str) -> dict:
    root, run = graded[name]
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def by_name(document: dict) -> dict:
    return {t["name"]: t for t in document["tests"]}


# -- the archive --------------------------------------------------------------------------------------

def test_archive_holds_what_gradescope_needs(archive):
    """Are setup.sh and run_autograder at the top of the zip (executable), next to the settings, the
    requirements, the package and the private extra file?"""
    with zipfile.ZipFile(archive) as z:
        names = z.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
        settings = json.loads(z.read("gradescope.json"))
    for script in ("setup.sh", "run_autograder"):
        assert script in names and modes[script] & 0o111, script
    assert {"requirements.txt", "autograder/__init__.py", "autograder/gradescope/__init__.py",
            "autograder/sandbox/pool.py", "autograder/course/assignments/custom_functions.py",
            "autograder/report/templates/checks_table.html.j2"} <= set(names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith("/")]
    assert settings["assignment"] == "custom-functions"
    assert settings["extra"] == ["extra/1-hidden_tests_example.py"] and settings["extra"][0] in names
    assert (settings["visibility"], settings["hidden_visibility"], settings["output_format"]) == \
        ("visible", "hidden", "html")


def test_archive_requirements_keep_the_course_pins(archive):
    """Does the archive pin the run-time packages exactly as requirements.txt does, torch included?"""
    with zipfile.ZipFile(archive) as z:
        pinned = [line for line in z.read("requirements.txt").decode().splitlines()
                  if line and line[0] != "#"]
    course = set((ROOT / "requirements.txt").read_text().splitlines())
    assert pinned and all(line in course for line in pinned)
    assert {line.split("==")[0] for line in pinned} >= {"torch", "numpy", "graphviz", "torchviz",
                                                        "matplotlib", "jinja2"}


def test_scripts_are_valid_bash_and_install_what_is_needed(archive, tmp_path):
    """Do setup.sh and run_autograder parse as bash (and pass shellcheck when it is installed), and does
    setup.sh install Graphviz, CPU-only torch, a world-readable environment and close the source?"""
    unpack(archive, tmp_path)
    for script in ("setup.sh", "run_autograder"):
        subprocess.run(["bash", "-n", str(tmp_path / script)], check=True)
        if shutil.which("shellcheck"):
            subprocess.run(["shellcheck", "-S", "warning", str(tmp_path / script)], check=True)
    setup = (tmp_path / "setup.sh").read_text()
    for needed in ("graphviz", "download.pytorch.org/whl/cpu", "chmod -R a+rX", "chmod 700 \"$SOURCE\"",
                   "-r \"$SOURCE/requirements.txt\"", "autograder.gradescope check"):
        assert needed in setup, needed
    run = (tmp_path / "run_autograder").read_text()
    assert "${AUTOGRADER_ROOT:-/autograder}" in run and "${AUTOGRADER_PYTHON:-" in run


def test_archive_is_reproducible(archive, tmp_path):
    """Does building again from the same inputs give the same bytes?"""
    again = tmp_path / "again.zip"
    autograder("gradescope", "--assignment", "custom-functions", "--extra", HIDDEN_TESTS, "--out", again,
               timeout=600)
    assert again.read_bytes() == archive.read_bytes()


def test_setup_check_passes_here(archive):
    """Does setup.sh's last step (settings, assignment, imports, Graphviz) pass on an unpacked archive?"""
    root = gradescope_root(archive, {})
    try:
        result = subprocess.run([sys.executable, "-m", "autograder.gradescope", "check", "--root", str(root)],
                                capture_output=True, text=True, timeout=600, check=False,
                                env=dict(os.environ, PYTHONPATH=str(root / "source")))
        assert result.returncode == 0, result.stderr
        assert "ready to grade custom-functions (5 problems" in result.stdout
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize(("args", "phrase"), [
    (("--assignment", "nope", "--out", "a.zip"), "There is no assignment called 'nope'"),
    (("--assignment", "gradcheck", "--out", "a.tar"), "must name a .zip file"),
    (("--assignment", "gradcheck", "--out", "a.zip", "--extra", "missing.py"), "does not exist"),
    (("--assignment", "gradcheck", "--out", "FILE/a.zip"), "Cannot write"),
])
def test_build_usage_errors_are_one_paragraph(tmp_path, args, phrase):
    """Does a mistake in the build command exit 2 with a message that says what to fix?"""
    (tmp_path / "FILE").write_text("")
    real = [str(tmp_path / a) if a.endswith((".zip", ".tar", ".py")) else a for a in args]
    result = autograder("gradescope", *real, check=False, timeout=600)
    assert result.returncode == 2
    assert phrase in result.stderr.replace("\n  ", " ")
    assert "Traceback" not in result.stderr


# -- run_autograder, as Gradescope runs it ------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["right", "wrong", "broken", "empty", "snoop", "surrogates", "takeover"])
def test_results_validate_and_hold_nothing_but_json(graded, name):
    """Is results.json one JSON document (nothing printed into it) that validates against Gradescope's
    schema, with an execution time and every test's visibility and output format?"""
    root, run = graded[name]
    text = (root / "results" / "results.json").read_text()
    document = json.loads(text)  # fails on anything printed before or after the JSON
    assert text.lstrip().startswith("{") and text.rstrip().endswith("}")
    jsonschema.validate(document, GRADESCOPE_SCHEMA)
    assert document["execution_time"] >= 0 and document["output_format"] == "html"
    assert all(t["visibility"] in ("visible", "hidden") and t["output_format"] == "html"
               for t in document["tests"])
    assert "autograder: wrote" in run.stdout  # the log goes to Gradescope's stdout instead


@pytest.mark.slow
def test_lone_surrogates_in_a_name_and_an_error_are_graded(graded):
    """Is a submission whose file name holds an undecodable byte and whose code prints and raises lone
    surrogates graded (its right Functions score), its results valid UTF-8, and its name in the log
    escaped?"""
    root, run = graded["surrogates"]
    document = json.loads((root / "results" / "results.json").read_bytes().decode("utf-8"))
    json.dumps(document, ensure_ascii=False).encode("utf-8")  # no lone surrogate, not even as an escape
    assert document["score"] > 0 and "mal\ufffd" in document["output"]
    assert "autograder: mal\\udcff\\x1b[2J.py: " in run.stdout


@pytest.mark.slow
def test_right_submission_gets_full_marks_hidden_tests_included(graded):
    """Does a right submission pass every test, including the hidden ones, which carry visibility
    "hidden" and are left out of the summary students read?"""
    document = results(graded, "right")
    tests = by_name(document)
    assert all(t["status"] == "passed" for t in document["tests"])
    with_hidden = load([HIDDEN_TESTS]).find_assignment("custom-functions")
    assert document["score"] == sum(t["max_score"] for t in document["tests"]) == max_score(with_hidden)
    assert tests["Exp: gradgradcheck"]["visibility"] == "hidden"
    assert tests["LinearFunction, other shapes: gradient"]["visibility"] == "hidden"
    assert tests["Exp: gradcheck"]["visibility"] == "visible"
    assert "other shapes" not in document["output"] and "gradgradcheck" not in document["output"]
    assert [t["number"] for t in document["tests"][:2]] == ["1.1", "1.2"]


@pytest.mark.slow
def test_a_takeover_of_the_worker_is_flagged_and_scores_nothing(graded):
    """Does a submission that answers the grader in its worker's place (wrong Functions, right ones kept
    aside: full marks before the grader saw reaching) score nothing, hidden tests included, and say why to
    the student and in extra_data?"""
    document = results(graded, "takeover")
    assert document["score"] == 0 and all(t["score"] == 0 for t in document["tests"])
    flagged = document["extra_data"]["flagged"]["takeover.py"]
    assert "LinearFunction, other shapes" in flagged["touched"]
    assert any("sys._getframe" in e["what"] for e in flagged["evidence"])
    assert "Flagged for your instructor" in html.unescape(document["output"])
    assert all("reaches into the grader" in html.unescape(t["output"]) for t in document["tests"])


@pytest.mark.slow
def test_wrong_submission_is_explained_with_pictures(graded):
    """Does a wrong submission get the diagnosis in each failed test, with the heat maps as PNG data
    addresses (which Gradescope's sanitiser keeps) and no inline SVG (which it drops)?"""
    document = results(graded, "wrong")
    tests = by_name(document)
    gradient = tests["KillHead: gradient"]
    assert gradient["status"] == "failed" and gradient["score"] == 0
    assert "columns 0, 2" in gradient["output"]
    assert "wrong sign" in tests["MyReLU: gradient"]["output"]
    assert "2 times" in tests["LinearFunction: gradient"]["output"]
    # PyTorch's own words, from its gradcheck in the worker (primed by the clean parent or imported by the
    # worker itself: tests/test_pipeline.py grades both ways)
    assert "torch.autograd.gradcheck says: GradcheckError" in tests["KillHead: gradcheck"]["output"]
    assert "<svg" not in json.dumps(document)
    pictures = [part.split('"', 1)[0] for part in gradient["output"].split('src="data:image/png;base64,')[1:]]
    assert len(pictures) == 3  # yours, reference, difference (no graph under a first derivative)
    assert all(base64.b64decode(p).startswith(b"\x89PNG\r\n\x1a\n") for p in pictures)
    assert "<script" not in json.dumps(document) and "style=" not in json.dumps(document)
    killhead = [t for t in document["tests"] if t["name"].startswith("KillHead: ")]
    score, best = (sum(t[key] for t in killhead) for key in ("score", "max_score"))
    assert best == max_score(load().find_problem("KillHead")) and 0 < score < best
    assert f"KillHead: {score:g}/{best:g}, failed: gradient, gradcheck" in document["output"]


@pytest.mark.slow
def test_broken_submission_fails_everything_with_a_reason(graded):
    """Does an unreadable notebook get every test failed, saying why, rather than a crash?"""
    document = results(graded, "broken")
    assert document["score"] == 0 and document["tests"]
    assert all(t["status"] == "failed" and "not a readable Jupyter notebook" in t["output"]
               for t in document["tests"])


@pytest.mark.slow
def test_empty_submission_says_what_to_upload(graded):
    """Does a submission without a notebook or .py file get every test failed and a hint to upload one?"""
    document = results(graded, "empty")
    assert document["score"] == 0 and len(document["tests"]) == len(results(graded, "right")["tests"])
    assert "No notebook (.ipynb) or Python file (.py)" in document["output"]


@pytest.mark.slow
def test_student_code_cannot_read_the_grader_files(graded):
    """Is /autograder/source (grader, references, hidden tests) closed to the submission's code, as is
    results/, and does what the code printed stay out of the scores?"""
    document = results(graded, "snoop")
    root, _ = graded["snoop"]
    printed = document["output"]
    assert "READ" not in printed
    # in a container, source/ exists only as the way to the grader's package (here, as in a run with
    # PYTHONPATH on it): nothing else of it, not the settings, not the hidden tests, not results/
    listed = re.findall(r"LISTED \S+ (\[[^\]]*\])", html.unescape(printed))
    assert all(names == "['autograder']" for names in listed), listed
    assert printed.count("DENIED") + len(listed) == 3 and printed.count("DENIED") >= 2
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700
    assert document["score"] == 0


# -- output formats ----------------------------------------------------------------------------------------

def failed_result() -> CheckResult:
    heat = Figure("heatmaps", "Jacobian with respect to x",
                  [("yours", [[1.0, -2.0]]), ("reference", [[1.0, 2.0]]), ("difference", [[0.0, -4.0]])])
    graph = {"nodes": [["n0", "x\n(2)", "leaf"], ["n1", "ExpBackward0", "op"], ["n2", "out", "output"]],
             "edges": [["n0", "n1"], ["n1", "n2"]]}
    graphs = Figure("graphs", "the graph of backward", [("yours", graph), ("reference", graph)])
    return CheckResult("Exp", "gradient", False, 3, "The gradient <with respect to> x has the wrong sign.",
                       "torch says: *no*", [heat, graphs])


def uploaded(name: str, results: list[CheckResult], sha256: str = "") -> Graded:
    """One graded file of an upload, as the pipeline hands it to Gradescope's results."""
    return Graded(name, sum(r.score for r in results), sum(r.max_score for r in results), results, sha256)


@pytest.mark.parametrize("fmt", ["html", "md", "text"])
def test_output_formats_escape_and_carry_pictures(fmt):
    """Does each output format escape the message, and carry PNG pictures in html and md only?"""
    out = render_test(failed_result(), fmt, Pictures(10**6), set())
    if fmt == "html":
        assert "&lt;with respect to&gt;" in out and out.count("<img src=\"data:image/png;base64,") == 5
    elif fmt == "md":
        assert "\\<with respect to\\>" in out and out.count("](data:image/png;base64,") == 5
        assert "```\ntorch says: *no*\n```" in out
    else:
        assert "<with respect to>" in out and "data:" not in out and "check() in your notebook" in out


def test_pictures_stop_at_the_budget():
    """Past the byte budget, are pictures replaced by words, so results.json stays small?"""
    pictures = Pictures(1000)
    out = render_test(failed_result(), "html", pictures, set())
    assert pictures.skipped > 0 and "picture left out" in out


def test_graphs_are_drawn_once_per_problem():
    """Is a problem's graph pair shown under its first failed check only?"""
    shown: set[str] = set()
    first = render_test(failed_result(), "html", Pictures(10**6), shown)
    second = render_test(failed_result(), "html", Pictures(10**6), shown)
    assert first.count("<img") == 5 and second.count("<img") == 3
    assert "shown under an earlier check" in second


def test_results_document_validates_in_every_format():
    """Does a document built in each format and visibility validate against Gradescope's schema?"""
    from autograder.course import find_assignment

    assignment = find_assignment("gradcheck")
    result = failed_result()
    result.problem = "Something"
    for fmt in ("html", "md", "text"):
        settings = Settings("gradcheck", output_format=fmt, visibility="after_due_date",
                            hidden_visibility="after_published")
        document = results_document(assignment, [uploaded("a.py", [result], "0" * 64)], settings, 1.5)
        jsonschema.validate(document, GRADESCOPE_SCHEMA)
        assert document["tests"][0]["visibility"] == "after_due_date"


def test_tracebacks_lose_the_grader_frames():
    """Does a traceback shown to students keep their own frames and drop the grader's?"""
    from autograder.gradescope.feedback import PACKAGE, strip_grader_frames

    text = (f'Traceback (most recent call last):\n  File "{PACKAGE}/sandbox.py", line 293, in _worker\n'
            f'    exec(compile(source, name, "exec"), namespace)\n  File "<cell 3>", line 1\n'
            f'    class MyReLU(Function)\n                          ^\nSyntaxError: expected \':\'')
    shown = strip_grader_frames(text)
    assert "sandbox.py" not in shown and "exec(compile" not in shown
    assert shown.endswith('  File "<cell 3>", line 1\n    class MyReLU(Function)\n'
                          '                          ^\n'
                          "SyntaxError: expected ':'")


def test_picture_budget_goes_to_visible_tests_first():
    """When pictures run short, do the tests students may see keep theirs before hidden tests do?"""
    from autograder.course import find_assignment

    hidden, shown = failed_result(), failed_result()
    for r, check in ((hidden, "gradient"), (shown, "gradcheck")):
        r.problem, r.check, r.figures = "Something", check, r.figures[:1]  # heat maps only
    hidden.hidden = True
    probe = Pictures(10**6)
    render_test(shown, "html", probe, set())
    settings = Settings("gradcheck", picture_bytes=10**6 - probe.left)  # room for one test's pictures
    document = results_document(find_assignment("gradcheck"), [uploaded("a.py", [hidden, shown])],
                                settings, 1)
    first, second = document["tests"]
    assert first["visibility"] == "hidden" and "picture left out" in first["output"]
    assert second["visibility"] == "visible" and second["output"].count("<img") == 3


@pytest.mark.slow
def test_gradescope_and_the_local_batch_grade_the_same_file(archive, tmp_path):
    """With the untouched lesson beside the real work, do Gradescope and the local batch grade the same
    file, to the same score, and both say which file was not graded and why?"""
    student = tmp_path / "class" / "erin"
    student.mkdir(parents=True)
    shutil.copy(ROOT / "course" / "02-custom-functions.ipynb", student / "02-custom-functions.ipynb")
    notebook(student / "my_solution.ipynb", (EXAMPLES / "alice.py").read_text())
    root = gradescope_root(archive, sorted(student.iterdir()))
    try:
        document = results({"erin": (root, run_autograder(root))}, "erin")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    out = tmp_path / "out"
    autograder("grade", "--assignment", "custom-functions", "--extra", HIDDEN_TESTS, "--out", out, "--quiet",
               tmp_path / "class")
    local = json.loads((out / "erin" / "results.json").read_text())
    assert document["score"] == local["score"] == local["extra_data"]["max_score"]
    why = ("02-custom-functions.ipynb: not graded: it defines 0 of the 5 problems (none), my_solution.ipynb "
           "defines 4")
    assert local["extra_data"]["not_graded"] == [why]
    assert why in document["output"] and why in (out / "erin" / "feedback.html").read_text()


def test_the_summary_states_hidden_points_files_not_graded_and_skipped_cells():
    """Does Gradescope's summary say what the local page says: the points of hidden tests, the files not
    graded and why, a skipped cell, and a cell that raised named as Jupyter numbers it?"""
    from autograder.course import find_assignment

    assignment = find_assignment("custom-functions")
    results = [CheckResult("KillHead", "forward", True, 2), CheckResult("KillHead", "gradient", True, 3),
               CheckResult("KillHead", "gradcheck", True, 11, hidden=True)]
    graded = uploaded("my_solution.ipynb", results)
    graded.cell_errors = [{"index": 42, "name": "Cell 92 (code cell 42)", "type": "skipped",
                           "error": "Cell 92 (code cell 42), which starts with `import os`, exited ..."},
                          {"index": 3, "name": "Cell 7 (code cell 3)", "type": "NameError",
                           "error": "NameError: name 'x' is not defined"}]
    about = ["Graded: my_solution.ipynb.", "02-custom-functions.ipynb: not graded: it defines 0 of the 4 ..."]
    settings = Settings("custom-functions", output_format="text")
    output = results_document(assignment, [graded], settings, 1.0, about)["output"]
    hidden = ("custom-functions: 5 / 5 points on the tests shown here; 11 more points are in hidden tests, "
              "graded but not shown here.")
    assert hidden in output
    assert all(line in output for line in about)
    assert "my_solution.ipynb: Cell 92 (code cell 42), which starts with `import os`, exited" in output
    assert "my_solution.ipynb: Cell 7 (code cell 3) raised an error; later cells still ran." in output
