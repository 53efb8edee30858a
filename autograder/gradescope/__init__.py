"""Gradescope: builds the autograder archive, and is the program its run_autograder starts.

    python -m autograder gradescope --assignment NAME --out FILE.zip [--extra FILE.py ...]   (build)
    python -m autograder.gradescope run [--root /autograder]          (on Gradescope, per submission)
    python -m autograder.gradescope check [--root /autograder]        (setup.sh: is the image usable?)

Gradescope unpacks the archive into /autograder/source, runs setup.sh once as root to build an image,
then for each submission starts a container, puts the student's files into /autograder/submission
and runs /autograder/run_autograder, which must leave /autograder/results/results.json. The root
folder is taken from AUTOGRADER_ROOT (default /autograder), so tests can lay out the same tree
anywhere.

Student code runs in the sandbox's workers under user ids of their own, with no capability left, so
/autograder/source (mode 700: the grader, the references, any hidden problems) is closed to it.
That is why setup.sh installs Python and the packages in a world-readable virtual environment.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import json
import os
import stat
import sys
import time
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT_ENV, DEFAULT_ROOT = "AUTOGRADER_ROOT", "/autograder"
PYTHON_ENV, DEFAULT_PYTHON = "AUTOGRADER_PYTHON", "/opt/autograd-course/venv/bin/python"
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
FORMATS = ("html", "md", "text")
# What the grader imports at run time, pinned exactly as in requirements.txt (the archive's copy).
RUNTIME = ("torch", "numpy", "graphviz", "torchviz", "matplotlib", "jinja2", "tqdm", "rich", "ipython", "pyseccomp",
           "pyyaml")
PACKAGE = Path(__file__).resolve().parent.parent
REPOSITORY = PACKAGE.parent
SETTINGS_FILE = "gradescope.json"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed, so the same inputs build the same bytes
MAX_PRINTED = 8000  # characters of a submission's printed output shown back
MAX_CELL_ERROR = 3000


@dataclass
class Settings:
    """How the archive grades, written into it as gradescope.json."""

    assignment: str
    extra: list[str] = field(default_factory=list)  # private extension files, inside source/extra/
    visibility: str = "visible"  # of the tests students may see
    hidden_visibility: str = "hidden"  # of hidden problems and checks
    output_format: str = "html"  # html (pictures as PNG), md (pictures as PNG), text (no pictures)
    load_seconds: float = 60.0
    problem_seconds: float = 20.0
    seed: int = 0
    picture_bytes: int = 600_000  # base64 PNG allowed in one results.json; beyond it, words only

    def validate(self) -> None:
        for name, value in (("visibility", self.visibility), ("hidden_visibility", self.hidden_visibility)):
            if value not in VISIBILITIES:
                raise ValueError(f"{name} must be one of {', '.join(VISIBILITIES)}, not {value!r}.")
        if self.output_format not in FORMATS:
            raise ValueError(f"output_format must be one of {', '.join(FORMATS)}, not {self.output_format!r}.")

    @classmethod
    def read(cls, path: Path) -> Settings:
        data = json.loads(path.read_text(encoding="utf-8"))
        known = {f.name for f in dataclasses.fields(cls)}
        settings = cls(**{k: v for k, v in data.items() if k in known})
        settings.validate()
        return settings


# -- the archive --------------------------------------------------------------------------------------

SETUP_SH = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or 24.04).
# It installs Graphviz, a Python >= 3.11 and the pinned CPU packages of requirements.txt into a virtual
# environment that every user may read: students' code runs under user ids of its own, which may not
# enter /autograder/source (mode 700), so nothing it imports may live there.
set -euo pipefail
SOURCE=/autograder/source
VENV=/opt/autograd-course/venv
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1

apt-get update -qq
apt-get install -y -qq --no-install-recommends graphviz ca-certificates >/dev/null

PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    PYTHON="$candidate"
    break
  fi
done
if [ -z "$PYTHON" ]; then  # Ubuntu 22.04 ships 3.10; its 3.11 is a package away
  apt-get install -y -qq --no-install-recommends python3.11 >/dev/null
  PYTHON=python3.11
fi
version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
apt-get install -y -qq --no-install-recommends "python${version}-venv" >/dev/null || true
echo "setup.sh: Python $("$PYTHON" --version) from $(command -v "$PYTHON")"

mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# PyTorch for the CPU from PyTorch's own index (the PyPI wheel carries CUDA, gigabytes unused here);
# then the rest, which finds this torch already satisfying its pin.
"$VENV/bin/pip" install -q --index-url https://download.pytorch.org/whl/cpu "$(grep -E '^torch==' "$SOURCE/requirements.txt")"
"$VENV/bin/pip" install -q -r "$SOURCE/requirements.txt"
chmod -R a+rX "$(dirname "$VENV")"
chmod 700 "$SOURCE"

# Fail the build here, not on the first student: import everything and draw one graph.
PYTHONPATH="$SOURCE" "$VENV/bin/python" -m autograder.gradescope check --root /autograder
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this as root for every submission, from its copy /autograder/run_autograder. It grades
# every notebook (.ipynb) and Python file (.py) in submission/ and writes results/results.json. What it
# prints goes to Gradescope's stdout file, which only instructors see; nothing is printed into the JSON.
#   AUTOGRADER_ROOT    the root of the tree (default /autograder)
#   AUTOGRADER_PYTHON  the Python to grade with (default: the one setup.sh installed)
set -u
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${AUTOGRADER_PYTHON:-/opt/autograd-course/venv/bin/python}"
cd "$ROOT" || exit 1
export PYTHONPATH="$ROOT/source" PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1
exec "$PYTHON" -m autograder.gradescope run --root "$ROOT"
"""

README = """autograd-course autograder for Gradescope: assignment {assignment}.

Built by `python -m autograder gradescope`. Upload this zip as the autograder of a Programming
Assignment (Configure Autograder > Zip file upload; Ubuntu 22.04 or 24.04 base image). setup.sh builds
the image; run_autograder grades each submission. gradescope.json holds the settings it was built with.
"""


def runtime_requirements(requirements: Path) -> str:
    """The lines of requirements.txt that pin what the grader imports, unchanged."""
    pins = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        name = line.split("==", 1)[0].strip().lower()
        if "==" in line and not line.lstrip().startswith("#"):
            pins[name] = line.strip()
    missing = [name for name in RUNTIME if name not in pins]
    if missing:
        raise ValueError(f"{requirements} pins none of {', '.join(missing)}, which the grader needs.")
    return ("# The grader's run-time packages, pinned as in the course's requirements.txt.\n"
            + "\n".join(pins[name] for name in RUNTIME) + "\n")


def package_files() -> list[tuple[str, Path]]:
    """The autograder package, as (name in the archive, file), without caches."""
    files = []
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
            files.append(("autograder/" + path.relative_to(PACKAGE).as_posix(), path))
    return files


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, ZIP_TIME)
    info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build(settings: Settings, extras: list[Path], out: Path, requirements: Path | None = None) -> list[str]:
    """Writes the archive to `out` (atomically) and returns the names it holds."""
    settings.validate()
    requirements = requirements or REPOSITORY / "requirements.txt"
    settings = dataclasses.replace(settings, extra=[f"extra/{i}-{p.name}" for i, p in enumerate(extras, 1)])
    entries: list[tuple[str, bytes, bool]] = [
        ("setup.sh", SETUP_SH.encode(), True),
        ("run_autograder", RUN_AUTOGRADER.encode(), True),
        ("requirements.txt", runtime_requirements(requirements).encode(), False),
        (SETTINGS_FILE, (json.dumps(dataclasses.asdict(settings), indent=2) + "\n").encode(), False),
        ("README.txt", README.format(assignment=settings.assignment).encode(), False),
    ]
    entries += [(name, path.read_bytes(), False) for name, path in package_files()]
    entries += [(name, path.read_bytes(), False) for name, path in zip(settings.extra, extras)]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w") as archive:
        for name, data, executable in entries:
            _add(archive, name, data, executable)
    os.replace(tmp, out)
    return [name for name, _, _ in entries]


# -- results.json ---------------------------------------------------------------------------------------

class Pictures:
    """Turns figures into PNG data addresses within a byte budget for the whole results.json."""

    def __init__(self, budget: int):
        self.left = budget
        self.skipped = 0
        self._graphs: dict[str, bytes] = {}

    def take(self, png: bytes) -> str | None:
        from autograder.report.png import data_uri

        uri = data_uri(png)
        if len(uri) > self.left:
            self.skipped += 1
            return None
        self.left -= len(uri)
        return uri

    def graph(self, data: dict) -> bytes:
        from autograder.report.png import graph_png

        key = json.dumps(data, sort_keys=True)
        if key not in self._graphs:
            self._graphs[key] = graph_png(data)
        return self._graphs[key]


def figure_images(figure, pictures: Pictures) -> list[tuple[str, str | None, int, int]]:
    """(caption, data address or None when over budget, width, height) for each panel."""
    from autograder.report import png

    images = []
    if figure.kind == "heatmaps":
        matrices = [png.as_rows(m) for _, m in figure.panels]
        scale = png.scale_of(matrices)
        rows = max(len(m) for m in matrices)
        cols = max((max((len(r) for r in m), default=0) for m in matrices), default=0)
        cell = png.cell_size(rows, cols)
        for (caption, _), matrix in zip(figure.panels, matrices):
            data, width, height = png.heatmap(matrix, scale, cell)
            images.append((caption, pictures.take(data), width, height))
    else:
        for caption, data in figure.panels:
            if data:
                images.append((caption, pictures.take(pictures.graph(data)), 0, 0))
    return images


def _scale_note(figure) -> str:
    from autograder.report import png

    scale = png.scale_of([png.as_rows(m) for _, m in figure.panels])
    legend = getattr(figure, "legend", "") or "Rows are entries of the output, columns entries of the input."
    return f"blue: negative, white: 0, red: positive, full colour at ±{scale:.3g}; black: NaN. {legend}"


def strip_grader_frames(text: str) -> str:
    """A traceback without the grader's own frames (their paths and code are no business of students')."""
    out, skip = [], False
    for line in text.splitlines():
        if line.startswith('  File "'):
            skip = f'"{PACKAGE}' in line or '"/autograder/source/' in line
        elif not line.startswith("    "):
            skip = False
        if not skip:
            out.append(line)
    return "\n".join(out)


def _md_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>#|~" else c for c in text)


def _md_code(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def render_test(r, fmt: str, pictures: Pictures, graphs_shown: set[str]) -> str:
    """A test's explanation in Gradescope's output format: what the check asks, what is wrong, the
    pictures (heat maps and autograd graphs as PNG), and torch's own words."""
    from autograder.course.problems import CHECKS

    asks = CHECKS.get(r.check, "")
    lead = (f"Passed: {asks}." if r.passed else r.message) if asks else (r.message or "Passed.")
    if r.passed and r.message and asks:
        lead += " " + r.message  # a note that costs nothing
    blocks: list[tuple[str, object]] = [("p", lead)]
    if not r.passed and asks:
        blocks.append(("p", f"This check asks that {asks}."))
    for figure in r.figures if not r.passed and fmt != "text" else []:
        if figure.kind == "graphs":
            if r.problem in graphs_shown:
                blocks.append(("p", f"(The graphs of {r.problem}'s backward are shown under an earlier check.)"))
                continue
            graphs_shown.add(r.problem)
        images = figure_images(figure, pictures)
        note = _scale_note(figure) if figure.kind == "heatmaps" else \
            "Green: the output; blue: leaf tensors; grey: the operations autograd recorded."
        blocks.append(("figure", (figure.title, images, note)))
    if r.details:
        blocks.append(("pre", strip_grader_frames(r.details)))
    if fmt == "text" and any(f.kind for f in r.figures) and not r.passed:
        blocks.append(("p", "Run check() in your notebook to see the pictures of this failure."))
    return _render(blocks, fmt)


def _render(blocks: list[tuple[str, object]], fmt: str) -> str:
    out = []
    for kind, content in blocks:
        if kind == "figure":
            title, images, note = content
            if fmt == "html":
                parts = [f"<p><b>{html.escape(title)}</b></p><p>"]
                for caption, uri, width, height in images:
                    if uri:
                        size = f' width="{width}" height="{height}"' if width else ""
                        parts.append(f'{html.escape(caption)}: <img src="{uri}" alt="{html.escape(caption)}" '
                                     f'title="{html.escape(caption)}"{size}>&nbsp;&nbsp; ')
                    else:
                        parts.append(f"[{html.escape(caption)}: picture left out, the results are full] ")
                parts.append(f"</p><p><i>{html.escape(note)}</i></p>")
                out.append("".join(parts))
            else:
                lines = [f"**{_md_escape(title)}**", ""]
                for caption, uri, _, _ in images:
                    lines.append(f"{_md_escape(caption)}: ![{_md_escape(caption)}]({uri})" if uri else
                                 f"\\[{_md_escape(caption)}: picture left out, the results are full\\]")
                    lines.append("")
                lines.append(f"*{_md_escape(note)}*")
                out.append("\n".join(lines))
        elif kind == "pre":
            text = str(content)
            out.append(f"<pre>{html.escape(text)}</pre>" if fmt == "html" else _md_code(text) if fmt == "md" else text)
        else:
            text = str(content)
            out.append(f"<p>{html.escape(text)}</p>" if fmt == "html" else _md_escape(text) if fmt == "md" else text)
    return ("\n" if fmt == "html" else "\n\n").join(out)


@dataclass
class FileResult:
    """One graded file of the submission."""

    name: str
    sha256: str
    results: list
    cell_errors: list[dict] = field(default_factory=list)
    output: str = ""
    error: str = ""

    def score(self, problem: str | None = None) -> float:
        return sum(r.score for r in self.results if problem is None or r.problem == problem)


def combine(assignment, files: list[FileResult]) -> tuple[list, dict[str, str]]:
    """Every test once: each problem's checks from the file where that problem scored best (the first
    such file on a tie), and which file that was."""
    chosen, source = [], {}
    for problem in assignment.problems:
        best = max(files, key=lambda f: f.score(problem.name))  # max keeps the first of equals
        chosen += [r for r in best.results if r.problem == problem.name]
        source[problem.name] = best.name
    return chosen, source


def summary(assignment, files: list[FileResult], chosen: list, source: dict[str, str], fmt: str,
            skipped_pictures: int) -> str:
    """The submission-wide output: what was graded, a line per problem students may see, the cells that
    raised and what the code printed. Hidden problems and checks are left out of every line."""
    shown = [r for r in chosen if not r.hidden]
    blocks: list[tuple[str, object]] = []
    if not any(r.hidden for r in chosen):
        blocks.append(("p", (f"{assignment.name}: {sum(r.score for r in chosen):g} / "
                            f"{sum(r.max_score for r in chosen):g} points.")))
    lines = []
    for problem in assignment.problems:
        mine = [r for r in shown if r.problem == problem.name]
        if not mine:
            continue
        failed = [r.check for r in mine if not r.passed]
        state = "every check passes" if not failed else "failed: " + ", ".join(failed)
        lines.append(f"{problem.name}: {sum(r.score for r in mine):g}/{sum(r.max_score for r in mine):g}, {state}"
                     + (f" (from {source[problem.name]})" if len(files) > 1 else ""))
    blocks.append(("list", lines))
    if not files:
        blocks.append(("p", ("No notebook (.ipynb) or Python file (.py) was found in your submission. Upload "
                            "your lesson notebook, e.g. 02-custom-functions.ipynb, and submit again.")))
    else:
        names = ", ".join(f.name for f in files)
        blocks.append(("p", f"Graded {names}." + (" With several files, each problem is graded from the file "
                                                  "where it scored best." if len(files) > 1 else "")))
    blocks.append(("p", ("Each test below is one check. A failed check says what is wrong and, where it helps, "
                        "shows heat maps of your numbers next to the right ones (the difference is white where "
                        "you are right) and the autograd graph your backward built next to the reference's. "
                        "check(Name) in your notebook gives the same verdicts while you work.")))
    if skipped_pictures:
        blocks.append(("p", (f"{skipped_pictures} picture(s) were left out to keep these results small; "
                            f"check() in your notebook draws them all.")))
    for f in files:
        for cell in f.cell_errors:
            blocks.append(("p", f"{f.name}: cell {cell['index']} raised an error; later cells still ran."))
            blocks.append(("pre", strip_grader_frames(str(cell["error"]))[-MAX_CELL_ERROR:]))
        if f.output.strip():
            text = f.output if len(f.output) <= MAX_PRINTED else f.output[:MAX_PRINTED] + "\n[... cut ...]"
            blocks.append(("p", f"What {f.name} printed while it was graded:"))
            blocks.append(("pre", text))
    rendered = []
    for kind, content in blocks:
        if kind == "list":
            if fmt == "html":
                rendered.append("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in content) + "</ul>")
            else:
                rendered.append("\n".join(f"- {_md_escape(line) if fmt == 'md' else line}" for line in content))
        else:
            rendered.append(_render([(kind, content)], fmt))
    return ("\n" if fmt == "html" else "\n\n").join(rendered)


def results_document(assignment, files: list[FileResult], settings: Settings, seconds: float) -> dict:
    """Gradescope's results.json for one submission."""
    fmt = settings.output_format
    if files:
        chosen, source = combine(assignment, files)
    else:
        from autograder.batch import failed_everywhere

        chosen, source = failed_everywhere(assignment, "No notebook (.ipynb) or Python file (.py) was found in "
                                                       "your submission."), {}
    pictures = Pictures(settings.picture_bytes)
    graphs_shown: set[str] = set()
    tests = []
    numbers = {p.name: i for i, p in enumerate(assignment.problems, 1)}
    counters: dict[str, int] = {}
    # Tests students may see are drawn first, so the picture budget goes to them before hidden ones.
    outputs = {i: render_test(chosen[i], fmt, pictures, graphs_shown)
               for i in sorted(range(len(chosen)), key=lambda i: chosen[i].hidden)}
    for i, r in enumerate(chosen):
        counters[r.problem] = counters.get(r.problem, 0) + 1
        tests.append({
            "name": r.name,
            "number": f"{numbers[r.problem]}.{counters[r.problem]}",
            "score": r.score,
            "max_score": r.max_score,
            "status": "passed" if r.passed else "failed",
            "output": outputs[i],
            "output_format": fmt,
            "visibility": settings.hidden_visibility if r.hidden else settings.visibility,
            "tags": [r.problem],
        })
    return {
        "score": sum(r.score for r in chosen),
        "execution_time": round(seconds, 3),
        "output": summary(assignment, files, chosen, source, fmt, pictures.skipped),
        "output_format": fmt,
        "test_output_format": fmt,
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"assignment": assignment.name, "seed": settings.seed,
                       "files": [{"file": f.name, "sha256": f.sha256, "score": f.score()} for f in files]},
    }


def failure_document(reason: str, seconds: float) -> dict:
    """What students see when the grader itself failed: no score is invented for them."""
    return {"score": 0.0, "execution_time": round(seconds, 3), "output_format": "text", "stdout_visibility": "hidden",
            "output": "The autograder could not grade this submission because of a problem in the grader, not "
                      "in your code. Your instructors can see what went wrong; they will regrade it. (" + reason + ")",
            "tests": []}


# -- running on Gradescope -------------------------------------------------------------------------------

PRELOAD = ("autograder.inline", "autograder.measure.graphs", "autograder.report.png", "autograder.batch", "traceback",
           "json", "inspect", "math", "random", "itertools", "functools", "collections", "copy", "pickle",
           "matplotlib", "matplotlib.pyplot")


def world_readable(path: Path) -> bool:
    """Whether any user may read path and enter every folder above it."""
    path = path.resolve()
    try:
        if not path.stat().st_mode & stat.S_IROTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)
    except OSError:
        return False


def prepare(root: Path, validated: bool = True) -> tuple[Settings, object]:
    """Reads the settings and loads the assignment (with any private extension files), validated
    (validate.py: raises InvalidAssignment naming the problem and the cause). run_autograder skips the
    validation: setup.sh's check did it once for the image."""
    from autograder.course.assignments.registry import load
    from autograder.course.validate import validate

    source = root / "source"
    settings = Settings.read(source / SETTINGS_FILE)
    registry = load(source / name for name in settings.extra)
    assignment = registry.find_assignment(settings.assignment)
    if validated:
        validate(assignment, settings.seed, registry.origins)
    return settings, assignment


def close_grader_files(root: Path) -> None:
    """Only root may enter the grader's folders: students' workers run as other users, no capability."""
    if os.geteuid() != 0:
        return
    for folder in (root / "source", root / "results"):
        if folder.is_dir():
            folder.chmod(0o700)


def run(root: Path) -> int:
    """Grades /autograder/submission and writes /autograder/results/results.json. Exit status 0 once
    results.json is written, whatever the student scored (and even when the grader failed)."""
    import importlib

    from autograder.report.files import write_atomic

    started = time.monotonic()
    results_path = root / "results" / "results.json"
    server = None
    try:
        import torch  # noqa: F401 - imported once, before the clean parent is forked, which then shares it

        from autograder.sandbox import Server

        server = Server(fork=True)  # the workers' clean parent, before the extra files or the submission load
        settings, assignment = prepare(root, validated=False)
        close_grader_files(root)
        import autograder
        from autograder.batch import (
            Private,
            drop_expected_errors,
            failed_everywhere,
            problem_jobs,
            verdicts_for,
        )
        from autograder.intake.layouts import uploads
        from autograder.intake.loader import read_all
        from autograder.sandbox import Limits, Pool, Task

        print(f"autograder: {assignment.name} from {Path(autograder.__file__).parent}, Python {sys.executable}")
        if not world_readable(Path(sys.executable)) or not world_readable(Path(importlib.import_module("torch").__file__)):
            print("autograder: warning: Python or its packages are not world-readable; students' code can import "
                  "only what the grader loaded first (setup.sh installs them where every user may read).")
        # The submission folder is one student's upload: each notebook graded, with the .py files beside
        # it as its modules (without a notebook, the one .py file); each problem counts from the best.
        found = uploads(root / "submission", (assignment.lesson, assignment.name))
        try:
            subs = [s for s in read_all(found.found) if s.path is not None or s.unreadable]
        finally:
            found.close()
        private = Private([root])
        files: list[FileResult] = []
        by_id = {}
        for sub in subs:
            name = sub.path.relative_to(root / "submission").as_posix() if sub.path is not None else "submission"
            failed = private.results(failed_everywhere(assignment, sub.error)) if sub.error else []
            by_id[sub.id] = FileResult(name, sub.sha256, failed)
            files.append(by_id[sub.id])
        jobs = problem_jobs(assignment, settings.seed)
        tasks = [Task(s.id, s.cells, jobs, s.modules) for s in subs if not s.error]
        limits = Limits(load_seconds=settings.load_seconds, problem_seconds=settings.problem_seconds,
                        keep_read_search=False)
        extra_checks = tuple({c for p in assignment.problems for c in p.extra_checks})
        pool = Pool(limits, max(1, min(len(tasks), os.cpu_count() or 1)), assignment.preload + PRELOAD, extra_checks,
                    server)
        try:
            subs_by_id = {s.id: s for s in subs}
            for sid, outcome in pool.run(tasks, settings.seed):
                f = by_id[sid]
                drop_expected_errors(subs_by_id[sid], outcome)
                f.results = private.results(verdicts_for(assignment, outcome, settings.seed))
                private.outcome(outcome)
                f.cell_errors, f.output = outcome.cell_errors, outcome.output
                print(f"autograder: {f.name}: {f.score():g}/{assignment.max_score:g} in {outcome.seconds:.1f} s")
        finally:
            pool.close()
        document = results_document(assignment, files, settings, time.monotonic() - started)
    except Exception as error:  # noqa: BLE001 - students still get a results.json that says so
        traceback.print_exc(file=sys.stdout)
        document = failure_document(f"{type(error).__name__}: {error}", time.monotonic() - started)
    finally:
        if server is not None:
            server.close()
    write_atomic(results_path, json.dumps(document, indent=1) + "\n")
    print(f"autograder: wrote {results_path} (score {document['score']:g}) in {time.monotonic() - started:.1f} s")
    return 0


def untouched_notebook(assignment) -> list[str]:
    """The cells of a notebook as students get it: every graded name defined, every forward raising."""
    lines = ["import torch", ""]
    for problem in assignment.problems:
        for name in (problem.lookup, *problem.also_functions):
            if problem.kind == "callable" and name == problem.lookup:
                lines += [f"def {name}(*args, **kwargs):", "    raise NotImplementedError()", ""]
            else:
                lines += [f"class {name}(torch.autograd.Function):", "    @staticmethod",
                          "    def forward(ctx, *args):", "        raise NotImplementedError()", ""]
    return ["\n".join(lines)]


def check(root: Path) -> int:
    """setup.sh's last step: the settings load, the assignment is validated (a Function computing each
    reference passes every check, a wrong one fails: validate.py), packages import, Graphviz draws, and
    a worker grades an untouched notebook 0 (a known wrong answer, through the very sandbox that grades
    students). Exit status 1, with the cause, when anything is wrong: the image is not built."""
    from autograder.course.validate import InvalidAssignment
    from autograder.report.png import graph_png

    try:
        settings, assignment = prepare(root)
    except (InvalidAssignment, LookupError, ValueError, OSError) as error:
        print(f"autograder: NOT ready to grade: {error}", file=sys.stderr)
        return 1
    import graphviz  # noqa: F401
    import matplotlib.pyplot  # noqa: F401 - builds matplotlib's font cache into the image, once
    import torch
    import torchviz  # noqa: F401

    png = graph_png({"nodes": [["n0", "x", "leaf"], ["n1", "ExpBackward0", "op"]], "edges": [["n0", "n1"]]})
    assert png.startswith(b"\x89PNG"), "Graphviz did not draw a PNG"
    wrong = _grade_untouched(assignment, settings)
    if wrong:
        print(f"autograder: NOT ready to grade: {wrong}", file=sys.stderr)
        return 1
    print(f"autograder: ready to grade {assignment.name} ({len(assignment.problems)} problems, "
          f"{assignment.max_score:g} points) with torch {torch.__version__}, output {settings.output_format}: "
          f"an answer computing each reference passes every check, a wrong one fails, and a worker graded an "
          f"untouched notebook 0/{assignment.max_score:g}")
    return 0


def _grade_untouched(assignment, settings: Settings) -> str:
    """Grades an untouched notebook in a worker; what went wrong, or ""."""
    from autograder.batch import problem_jobs, verdicts_for
    from autograder.sandbox import Limits, Pool, Task

    limits = Limits(load_seconds=settings.load_seconds, problem_seconds=settings.problem_seconds,
                    keep_read_search=False)
    extra_checks = tuple({c for p in assignment.problems for c in p.extra_checks})
    pool = Pool(limits, 1, assignment.preload + PRELOAD, extra_checks)
    try:
        outcomes = list(pool.run([Task("untouched", untouched_notebook(assignment),
                                       problem_jobs(assignment, settings.seed))], settings.seed))
    finally:
        pool.close()
    (_, outcome), = outcomes
    missing = [p.name for p in assignment.problems if p.name not in outcome.data]
    if missing:
        return (f"a worker did not measure {', '.join(missing)} in an untouched notebook "
                f"({next(iter(outcome.failures.values()), 'no reason given')}).")
    results = verdicts_for(assignment, outcome, settings.seed)
    if any(r.score for r in results):
        return "an untouched notebook scored above 0."
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope",
                                     description="The Gradescope side of the autograder (run_autograder, setup.sh).")
    parser.add_argument("command", choices=("run", "check"))
    parser.add_argument("--root", type=Path, default=Path(os.environ.get(ROOT_ENV, DEFAULT_ROOT)),
                        help=f"Gradescope's root folder (default: ${ROOT_ENV} or {DEFAULT_ROOT})")
    args = parser.parse_args(argv)
    return run(args.root) if args.command == "run" else check(args.root)

