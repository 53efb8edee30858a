"""Builds the release's wheel and sdist into dist/ and proves both outside the repository: make dist

`python -m build` writes the sdist, then builds the wheel from that sdist, so a file the wheel needs but the
sdist lacks (a template, a Gradescope script) fails here. Each file is then installed into a new virtual
environment in a temporary folder, as a learner's notebook installs it: by the student notebooks' set-up
cell (tools/make_student.py) with AUTOGRADER_PACKAGE naming the file, over requirements.txt's torch (a local
wheel here) and with requirements.txt's pins for the other dependencies (pip's cache or index). There
check() grades the solution of lesson 2's KillHead and must give full marks, with an audit hook that fails
the proof if the installed package opens any file of the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

import autograder
from tools.make_student import BEGIN, END, setup_cell

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements.txt"
SDIST = f"autograd_course-{autograder.__version__}.tar.gz"
LESSON, PROBLEM = ROOT / "solutions" / "02-custom-functions.ipynb", "KillHead"

# Run by the new environment's Python (-I: no PYTHONPATH, no current folder on sys.path). argv: the
# repository, the solution's source. Prints one JSON line: the report and the repository's files opened.
PROVE = f"""\
import json, os, sys
root, source = os.path.realpath(sys.argv[1]), sys.argv[2]
opened = []

def watch(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == root or path.startswith(root + os.sep):
            opened.append(path)

sys.addaudithook(watch)
import torch
from torch.autograd import Function
import autograder
from autograder import check
exec(source)
report = check({PROBLEM})
table = check({PROBLEM}, table=True)
html = report._repr_html_() + table._repr_html_()  # the report templates, as Jupyter renders them
print(json.dumps({{"text": repr(report), "passed": report.passed, "score": report.score,
                  "max_score": sum(r.max_score for r in report.results), "html": len(html),
                  "package": autograder.__file__, "version": autograder.__version__, "opened": opened}}))
"""


class ProofFailed(Exception):
    pass


def clean_environment(**extra: str) -> dict[str, str]:
    """This environment without what would point a child at the repository, its venv or a grading run."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("AUTOGRADER_")}
    env.update(extra)
    return env


def build(source: Path, out: Path) -> tuple[Path, Path]:
    """(wheel, sdist) of the package whose pyproject.toml is in `source`, written into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    for old in (out / autograder.WHEEL, out / SDIST):
        old.unlink(missing_ok=True)
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                           capture_output=True, text=True, env=clean_environment(), check=False)
    if built.returncode:
        raise ProofFailed(f"python -m build failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    wheel, sdist = out / autograder.WHEEL, out / SDIST
    missing = [p.name for p in (wheel, sdist) if not p.exists()]
    if missing:
        raise ProofFailed(f"python -m build did not write {missing} (it wrote {sorted(os.listdir(out))})")
    return wheel, sdist


def new_environment(where: Path) -> Path:
    """A virtual environment at `where` holding only requirements.txt's torch; its Python."""
    subprocess.run([sys._base_executable, "-m", "venv", str(where)], check=True, env=clean_environment())
    python = where / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "-c", str(REQUIREMENTS), "torch"], where)
    return python


def run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=clean_environment(**env),
                            timeout=1800, check=False)
    if result.returncode:
        raise ProofFailed(f"{' '.join(argv[:4])} ... failed:\n{result.stdout[-3000:]}\n"
                          f"{result.stderr[-3000:]}")
    return result


def solution_source() -> str:
    """The solution cell of lesson 2 that defines the problem's class, markers removed."""
    for cell in nbformat.read(LESSON, as_version=4).cells:
        if cell.cell_type == "code" and f"class {PROBLEM}(" in cell.source:
            return "\n".join(line for line in cell.source.splitlines() if line.strip() not in (BEGIN, END))
    raise ProofFailed(f"{LESSON.name} has no cell defining {PROBLEM}")


def prove(package: Path, python: Path, workdir: Path) -> dict:
    """Installs `package` into `python`'s environment with the notebooks' set-up cell and grades the
    solution there; what the grading printed (see PROVE), or ProofFailed saying what went wrong."""
    workdir.mkdir(parents=True, exist_ok=True)
    # what a previous proof installed: the set-up cell installs only where the package is missing
    subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "autograd-course"],
                   capture_output=True, env=clean_environment(), cwd=workdir, check=False)
    setup = run([str(python), "-c", setup_cell().source], workdir, AUTOGRADER_PACKAGE=str(package),
                PIP_CONSTRAINT=str(REQUIREMENTS))
    if not setup.stdout.startswith(f"Installing the course package from {package} ..."):
        raise ProofFailed(f"the set-up cell did not install {package}: it printed {setup.stdout!r}")
    graded = run([str(python), "-I", "-c", PROVE, str(ROOT), solution_source()], workdir)
    result = json.loads(graded.stdout.strip().splitlines()[-1])
    outside = Path(result["package"]).resolve().is_relative_to(python.parent.parent.resolve())
    if not (result["passed"] and result["score"] == result["max_score"] > 0):
        raise ProofFailed(f"{package.name}: check({PROBLEM}) did not give full marks:\n{result['text']}")
    if not outside or result["opened"]:
        raise ProofFailed(f"{package.name} is not on its own: autograder from {result['package']}, "
                          f"files of the repository opened: {result['opened']}")
    if result["version"] != autograder.__version__:
        raise ProofFailed(f"{package.name} is version {result['version']}, not {autograder.__version__}")
    return result


def shown(path: Path) -> Path:
    """`path` as the reader typed it: relative to the current folder where it lies inside."""
    path = path.resolve()
    return path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="where to write them (dist/)")
    args = parser.parse_args()
    try:
        print(f"Building {autograder.WHEEL} and {SDIST} into {shown(args.out)}/ ...", flush=True)
        packages = build(ROOT, args.out)
        with tempfile.TemporaryDirectory(prefix="autograd-course-dist-") as tmp:
            print("Proving each in a new environment (outside the repository, requirements.txt's torch) ...",
                  flush=True)
            python = new_environment(Path(tmp) / "venv")
            for package in packages:
                result = prove(package, python, Path(tmp) / "work")
                print(f"{shown(package)}: installed by the set-up cell, {result['text'].splitlines()[0]}")
            shutil.rmtree(Path(tmp) / "venv", ignore_errors=True)
    except ProofFailed as error:
        print(f"make dist: {error}", file=sys.stderr)
        return 1
    release = autograder.RELEASE
    print(f"To release: commit and push, then `git tag {release} && git push origin {release}`; "
          f"the notebooks install {autograder.PACKAGE_URL}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
