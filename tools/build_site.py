"""Builds the course web site into build/site/: python -m tools.build_site [--solutions 1|0]

The pages are staged in build/site-src/: the configuration and pages of site/, one page per lesson
notebook with its committed outputs (nothing is executed), the student notebooks of course/ to
download, and a local copy of MathJax so that no page loads anything from the network. Then
sphinx-build runs with warnings as errors, so a broken link or a notebook that failed fails the build.

--solutions 1 (the default) shows the lessons of solutions/ with every solution collapsed behind a
"Show solution" toggle; --solutions 0 shows the student notebooks of course/ instead. Either way
tools/site_notebook.py shortens tracebacks, folds the answers of Predict questions, names the "What goes
wrong here?" headings and links lesson references and citations, in the copies the site shows.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from io import BytesIO
from pathlib import Path

# jsonschema, which nbformat imports, compiles the grammars of the optional package rfc3987_syntax at
# import time: seconds of CPU in every process, for URI formats that notebooks never use. The
# command line and the sphinx-build it runs do without it (a test process importing this module keeps it).
NO_RFC3987 = "import sys; sys.modules.setdefault('rfc3987_syntax', None)"
if __name__ == "__main__":
    sys.modules.setdefault("rfc3987_syntax", None)

import nbformat

from tools import site_notebook as transform
from tools.make_student import BEGIN, END, task_source

ROOT = Path(__file__).resolve().parents[1]
MATHJAX_VERSION = "3.2.2"  # from the npm registry, unpacked into build/vendor/ on the first build
RAISES = "raises-exception"
STAMP = ".course-build.json"  # written into the output folder after a successful build
LESSON = re.compile(r"^\d\d-[\w-]+\.ipynb$")
ZIP = "_generated/autograd-course-notebooks.zip"  # every student notebook, linked from the home page
ZIP_FOLDER = "autograd-course"  # the folder the archive unpacks into
TOGGLE_FENCE = "::::::"  # longer than any fence a solution could contain, so it cannot be closed early


# Markdown: a line break inside a paragraph is a space.
EDITION_SOLUTIONS = """These pages show every lesson run from top to bottom, with the solutions folded away:
open "Show solution" once you have tried. The output that answers a Predict question waits behind "Show the
answer" until you have made your guess. Each lesson links its student notebook: download it, or open it in
Binder or Colab, and fill in the exercises there.
"""
EDITION_STUDENT = """These pages show the lessons as you get them, exercises left for you to write. Each
lesson links its notebook: download it, or open it in Binder or Colab, and fill in the exercises there.
"""


class BuildError(Exception):
    """A problem in the sources that the author has to fix; the message says what and where."""


def lessons(folder: Path) -> list[Path]:
    """The lesson notebooks of a folder, in course order (their NN- prefix)."""
    return sorted(p for p in folder.glob("*.ipynb") if LESSON.match(p.name))


def notebook_errors(nb) -> list[str]:
    """Error outputs in cells that are not tagged raises-exception, i.e. a lesson that did not run."""
    problems = []
    for index, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "code" or RAISES in cell.metadata.get("tags", []):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                problems.append(f"cell {index} raised {output.get('ename')}: {output.get('evalue')}")
    return problems


def collapse_markdown_solutions(source: str, label: str = "Show solution") -> str:
    """Each solution region of a markdown cell becomes a toggle with this label ("Show solution")."""
    out, inside = [], False
    for line in source.splitlines():
        if line.strip() == BEGIN and not inside:
            inside = True
            out += ["", TOGGLE_FENCE + "{course-toggle} " + label]
        elif line.strip() == END and inside:
            inside = False
            out += [TOGGLE_FENCE, ""]
        else:
            out.append(line)
    if inside:
        raise BuildError(f"a `{BEGIN}` has no matching `{END}`")
    return "\n".join(out)


def without_markers(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() not in (BEGIN, END))


def site_cells(cell) -> list:
    """How one cell of a solution notebook appears on the site.

    A code cell with a solution shows first what the student gets (the code with
    `raise NotImplementedError()` in place of each solution), then the complete code collapsed behind
    "Show solution", with the outputs it produced.
    """
    if BEGIN not in cell.source:
        return [cell]
    if cell.cell_type == "markdown":
        label = cell.metadata.get(transform.LABEL, "Show solution")
        cell.source = collapse_markdown_solutions(cell.source, label)
        return [cell]
    if cell.cell_type != "code":
        return [cell]
    skeleton = nbformat.from_dict(json.loads(json.dumps(cell)))
    skeleton.source = task_source(cell.source)
    skeleton.outputs, skeleton.execution_count = [], None
    if "id" in skeleton:
        skeleton.id = f"{cell.id}-task"[:64]
    cell.source = without_markers(cell.source)
    cell.metadata.setdefault("tags", [])
    cell.metadata.tags = [*cell.metadata.tags, "hide-input"]
    # A Predict question's answer keeps the prompts site_notebook.fold_predict_answers gave it.
    cell.metadata["mystnb"] = {"code_prompt_show": "Show solution", "code_prompt_hide": "Hide solution",
                               **cell.metadata.get("mystnb", {})}
    return [skeleton, cell]


def lesson_links(name: str) -> str:
    """The links under a lesson's title, then an index of its sections (shown where the "Contents"
    column is folded away: phones and narrow windows)."""
    return (
        f"\n\n{TOGGLE_FENCE}{{container}} lesson-links\n"
        f"{{download}}`Download the student notebook <_student/{name}>`\n"
        "{launch}`binder`\n{launch}`colab`\n"
        f"{TOGGLE_FENCE}\n\n"
        # no back-links: a heading is plain text, not a link to an index that wide windows hide
        "```{contents} In this lesson\n:local:\n:depth: 1\n:backlinks: none\n:class: course-index\n```\n"
    )


def site_notebook(path: Path, with_solutions: bool):
    """The notebook as the site shows it: solutions collapsed, links to its student version on top."""
    nb = nbformat.read(path, as_version=4)
    problems = notebook_errors(nb)
    if problems:
        raise BuildError(
            f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} holds errors:\n  "
            + "\n  ".join(problems)
            + f"\nFix the lesson and re-execute it (make solutions), or tag a cell meant to fail `{RAISES}`."
        )
    transform.scrub_outputs(nb)
    transform.explanations_after_code(nb)
    transform.fold_predict_answers(nb)
    transform.name_what_goes_wrong(nb)
    transform.number_free_headings(nb)
    transform.link_references(nb, {int(p.name[:2]): p.stem for p in lessons(path.parent)}, path.stem)
    if with_solutions:
        try:
            nb.cells = [new for cell in nb.cells for new in site_cells(cell)]
        except (BuildError, ValueError) as error:
            raise BuildError(f"{path}: {error}") from None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            lines = cell.source.splitlines()
            for i, line in enumerate(lines):
                if line.startswith("# "):
                    lines.insert(i + 1, lesson_links(path.name))
                    cell.source = "\n".join(lines)
                    return nb
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(lesson_links(path.name)))
    return nb


def student_download(path: Path) -> bytes:
    """The student notebook the site offers for download: course/'s, without any path of the machine
    that executed it (the outputs' tracebacks keep all their frames)."""
    nb = nbformat.read(path, as_version=4)
    transform.scrub_outputs(nb, fold_frames=False)
    return nbformat.writes(nb).encode()


def lessons_list(paths: list[Path]) -> str:
    """The home page's list of lessons: each title (the page's own), linked and numbered as the site
    numbers it; then the whole course as one download."""
    return "".join(f"{int(path.name[:2])}. {{doc}}`/{path.stem}`\n" for path in paths) + (
        f"\n{TOGGLE_FENCE}{{container}} lesson-links course-download\n"
        f"{{download}}`Download all {len(paths)} student notebooks (zip) <{ZIP}>`\n{TOGGLE_FENCE}\n")


def course_zip(notebooks: dict[str, bytes]) -> bytes:
    """The student notebooks in one zip archive, byte for byte the same for the same notebooks (fixed
    dates and order), so that a rebuild rewrites nothing."""
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(notebooks.items()):
            info = zipfile.ZipInfo(f"{ZIP_FOLDER}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


AUTOGRADER_TABLE = r"""
from autograder.course.assignments.registry import load
from autograder.judge.checks import max_score
for a in load().assignments.values():
    print(f"`{a.name}`, lesson {a.lesson}, {max_score(a):g} points\n")
    for p in a.problems:
        summary = "".join("\\" + c if c in "|*_`<>[]" else c for c in p.summary)  # literal text
        twice = " Also checked with `gradgradcheck`." if p.double_backward else ""
        print(f"- `{p.name}` ({max_score(p):g} points): {summary}.{twice}")
    print()
"""


def autograder_table() -> str:
    """The graded problems, as the autograder itself lists them, as a table for the instructors' page."""
    run = subprocess.run([sys.executable, "-c", AUTOGRADER_TABLE], cwd=ROOT, capture_output=True,
                         text=True, check=False)
    if run.returncode != 0 or not run.stdout.strip():
        raise BuildError(f"could not list the autograder's problems for the instructors' page:\n{run.stderr}")
    return run.stdout


def write_if_changed(path: Path, data: bytes) -> None:
    """Writes only what changed, so that Sphinx re-reads only the pages whose source changed."""
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def mathjax(build: Path) -> Path:
    """A local MathJax (its es5 components: startup, core, TeX input, CommonHTML output and the ones
    they load on demand), fetched once from the npm registry. site/conf.py loads only those a page
    needs: 0.76 MB, where the combined bundle tex-chtml.js, with its 0.43 MB context menu, is 1.16 MB."""
    vendor = build / "vendor" / f"mathjax-{MATHJAX_VERSION}-components"
    if (vendor / "startup.js").exists():
        return vendor
    npm = shutil.which("npm")
    if npm is None:
        raise BuildError("npm is needed once to fetch MathJax: run `make setup` (it installs nodejs and "
                         "npm).")
    print(f"build_site: fetching mathjax@{MATHJAX_VERSION} from the npm registry", flush=True)
    with tempfile.TemporaryDirectory(dir=build) as tmp:
        run = subprocess.run(
            [npm, "pack", f"mathjax@{MATHJAX_VERSION}", "--pack-destination", tmp, "--silent"],
            cwd=tmp, capture_output=True, text=True, check=False,
        )
        archives = list(Path(tmp).glob("mathjax-*.tgz"))
        if run.returncode != 0 or not archives:
            raise BuildError(f"`npm pack mathjax@{MATHJAX_VERSION}` failed:\n{run.stderr.strip()}")
        unpacked = Path(tmp) / "mathjax"
        with tarfile.open(archives[0]) as archive:
            for member in archive.getmembers():
                name = member.name.removeprefix("package/")
                keep = name == "LICENSE" or (
                    name.startswith("es5/")
                    # the start-up and core the site loads, and the components they load on demand
                    and (name.count("/") > 1 or name in ("es5/startup.js", "es5/core.js"))
                    and not name.startswith("es5/ui/menu")
                    and not name.startswith("es5/output/svg")
                )
                if member.isfile() and keep:
                    target = unpacked / name.removeprefix("es5/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.extractfile(member).read())
        vendor.parent.mkdir(parents=True, exist_ok=True)
        unpacked.rename(vendor)
    return vendor


def stage(src: Path, build: Path, solutions: Path, course: Path, with_solutions: bool) -> list[Path]:
    """Fills build/site-src/ and returns the lesson notebooks the site shows."""
    shown = lessons(solutions if with_solutions else course)
    if not shown:
        raise BuildError(f"no lesson notebooks (NN-slug.ipynb) in {solutions if with_solutions else course}/")
    missing = [p.name for p in shown if not (course / p.name).exists()]
    if missing:
        raise BuildError(f"course/ has no student version of {', '.join(missing)}: run `make student`.")

    files: dict[Path, bytes] = {}
    site = ROOT / "site"
    for path in sorted(site.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(site)] = path.read_bytes()
    for path in shown:
        files[Path(path.name)] = nbformat.writes(site_notebook(path, with_solutions)).encode()
        files[Path("_student") / path.name] = student_download(course / path.name)
    files[Path(ZIP)] = course_zip({path.name: files[Path("_student") / path.name] for path in shown})
    files[Path("_generated/lessons.md")] = lessons_list(shown).encode()
    files[Path("_generated/problems.md")] = autograder_table().encode()
    files[Path("_generated/edition.md")] = (EDITION_SOLUTIONS if with_solutions else EDITION_STUDENT).encode()

    static_mathjax = Path("_static/mathjax")
    for relative, data in files.items():
        write_if_changed(src / relative, data)
    for path in sorted(src.rglob("*"), reverse=True):  # remove what the sources no longer have
        relative = path.relative_to(src)
        if relative.is_relative_to(static_mathjax):
            continue
        if path.is_file() and relative not in files:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()

    vendor = mathjax(build)
    target = src / static_mathjax
    version_file = target / ".version"
    if not version_file.exists() or version_file.read_text() != vendor.name:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(vendor, target)
        version_file.write_text(vendor.name)
    return shown


def build(with_solutions: bool = True, solutions: Path | None = None, course: Path | None = None,
          build_dir: Path | None = None, quiet: bool = True) -> Path:
    """Builds the site and returns its folder (build/site). Raises BuildError with a readable reason."""
    solutions = Path(solutions or ROOT / "solutions")
    course = Path(course or ROOT / "course")
    build_dir = Path(build_dir or ROOT / "build")
    build_dir.mkdir(parents=True, exist_ok=True)
    src, out, doctrees = build_dir / "site-src", build_dir / "site", build_dir / "site-doctrees"

    stamp = out / STAMP
    if not stamp.exists():
        # The last build failed (or there was none): read every page again, so that the warnings of
        # pages that did not change since then are reported again rather than hidden by the cache.
        shutil.rmtree(doctrees, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    shown = stage(src, build_dir, solutions, course, with_solutions)

    # -a writes every page even when only some were read again: the sidebar and the previous/next links
    # of a page depend on the other lessons, which Sphinx's incremental build does not track.
    sphinx = f"{NO_RFC3987}; from sphinx.cmd.build import main; sys.exit(main(sys.argv[1:]))"
    command = [sys.executable, "-c", sphinx, "-b", "html", "-a", "-W", "--keep-going", "-n",
               "-d", str(doctrees), str(src), str(out)]
    if quiet:
        command.insert(-2, "-q")
    started = time.monotonic()
    result = subprocess.run(command, cwd=src, check=False)
    if result.returncode != 0:
        raise BuildError(
            f"sphinx-build failed: the warnings above are errors. {src.name}/NN-slug.ipynb is the lesson "
            f"of {'solutions' if with_solutions else 'course'}/ as the site shows it."
        )
    stamp.write_text(json.dumps({"solutions": with_solutions, "lessons": [p.name for p in shown]}) + "\n")
    print(f"build_site: {len(shown)} lessons, {'with' if with_solutions else 'without'} solutions, "
          f"in {time.monotonic() - started:.1f} s: open {out / 'index.html'}", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=int, choices=(0, 1), default=1,
                        help="1: lessons from solutions/ with solutions collapsed; 0: from course/")
    parser.add_argument("--solutions-dir", type=Path, default=ROOT / "solutions")
    parser.add_argument("--course-dir", type=Path, default=ROOT / "course")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build")
    parser.add_argument("--verbose", action="store_true", help="show sphinx-build's progress")
    args = parser.parse_args()
    try:
        build(bool(args.solutions), args.solutions_dir, args.course_dir, args.build_dir,
              quiet=not args.verbose)
    except BuildError as error:
        print(f"build_site: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
