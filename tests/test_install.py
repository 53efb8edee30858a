"""Does the course work outside this repository, as Colab, Binder or a bare Jupyter opens it?

The fast tests check what the package declares: its dependencies are what it and the lessons import,
requirements.txt pins each declared package within its range, the set-up accepts every Python the package
supports, and the release is named in one place. The slow ones build the wheel, install it with its declared
dependencies into a new virtual environment that cannot see the repository, and run a copy of a student
notebook there, its exercises filled in from the solutions: once with the package installed, and once
without it, so that the notebook's first cell installs it (from the wheel: no network) where Graphviz's
`dot` is also missing.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from html import escape
from importlib.metadata import packages_distributions
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import autograder
from autograder.gradescope.build import RUNTIME
from autograder.measure.graphs import AS_TEXT, NO_DOT
from tests.conftest import ROOT
from tools.make_student import BEGIN, SETUP_ID

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CHECK_TITLE = re.compile(r"check\((\w+)\): (all checks pass|some checks fail)")


def declared(group: str | None = None) -> dict[str, Requirement]:
    """{name: requirement} of the package's dependencies (group None) or of one of its extras."""
    project = PYPROJECT["project"]
    lines = project["dependencies"] if group is None else project["optional-dependencies"][group]
    requirements = [Requirement(line) for line in lines]
    return {canonicalize_name(r.name): r for r in requirements}


def pinned() -> dict[str, str]:
    """{name: version} of requirements.txt."""
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def imported_modules(source: str) -> set[str]:
    """The top-level modules a piece of Python source imports (absolute imports only)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def third_party(modules: set[str]) -> set[str]:
    """The distributions (canonical names) that provide the modules that are neither stdlib nor ours."""
    providers = packages_distributions()
    outside = {m for m in modules
               if m not in sys.stdlib_module_names and m not in ("autograder", "__future__")}
    unknown = sorted(m for m in outside if m not in providers)
    assert unknown == [], f"no installed distribution provides {unknown}"
    return {canonicalize_name(providers[m][0]) for m in outside}


def test_dependencies_are_what_the_package_and_the_lessons_import():
    """Does pyproject.toml declare exactly the packages that autograder/ and the lessons import?"""
    modules = set()
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        modules |= imported_modules(path.read_text())
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":  # IPython magics and shell lines are not Python
                modules |= imported_modules("\n".join(line for line in cell.source.splitlines()
                                                      if not line.lstrip().startswith(("%", "!"))))
    assert sorted(third_party(modules)) == sorted(declared())


def test_requirements_pin_every_declared_package_within_its_range():
    """Is every package of pyproject.toml (dependencies and extras) pinned in requirements.txt, inside the
    declared range, and every pin one of them?"""
    everything = dict(declared())
    for group in PYPROJECT["project"]["optional-dependencies"]:
        everything.update(declared(group))
    pins = pinned()
    assert sorted(pins) == sorted(everything), "requirements.txt and pyproject.toml name different packages"
    outside = {name: f"{pins[name]} not in {req.specifier}" for name, req in everything.items()
               if not req.specifier.contains(pins[name], prereleases=True)}
    assert outside == {}


def test_the_extras_are_course_site_and_dev():
    """Are the extras the three the Makefile installs, with JupyterLab and a kernel for the course?"""
    assert sorted(PYPROJECT["project"]["optional-dependencies"]) == ["course", "dev", "site"]
    assert sorted(declared("course")) == ["ipykernel", "jupyterlab"]


def test_gradescope_image_gets_the_package_dependencies():
    """Does the Gradescope archive install the same run-time packages the package declares?"""
    assert sorted(canonicalize_name(name) for name in RUNTIME) == sorted(declared())


def test_setup_accepts_every_python_the_package_supports():
    """Does tools/setup.sh ask for the same minimum Python as pyproject.toml's requires-python?"""
    setup = (ROOT / "tools" / "setup.sh").read_text()
    minimum = re.search(r"^MIN_PYTHON=(\S+)", setup, re.MULTILINE).group(1)
    assert PYPROJECT["project"]["requires-python"] == f">={minimum}"


def run_setup(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """tools/setup.sh with nothing but `env` (PATH included) in its environment."""
    return subprocess.run(["/bin/bash", str(ROOT / "tools" / "setup.sh")], env=env, capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, check=False)


def fake_python(folder: Path, name: str, version: str) -> Path:
    """A program called `name` that says it is Python `version` and fails everything else."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f'#!/bin/bash\ncase "$*" in *python_version*) echo {version}; exit 0;; esac\nexit 1\n')
    path.chmod(0o755)
    return path


def test_setup_says_what_to_do_when_no_python_is_found(tmp_path):
    """With no Python at all, or only a too old one, does the set-up stop before touching anything, saying
    what it found and what to install?"""
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_setup(tmp_path, PATH=str(empty))
    assert result.returncode == 1
    assert "needs Python 3.11 or newer" in result.stderr and "found no Python at all" in result.stderr
    assert "apt-get install python3" in result.stderr and "PYTHON=" in result.stderr

    old = fake_python(tmp_path / "bin", "python3", "3.10.12")
    result = run_setup(tmp_path, PATH=str(old.parent))
    assert result.returncode == 1 and "found python3 (3.10.12)" in result.stderr, result.stderr
    result = run_setup(tmp_path, PATH=str(empty), PYTHON=str(old))
    assert result.returncode == 1 and f"found {old} (3.10.12)" in result.stderr, result.stderr
    assert not (tmp_path / ".venv").exists()


# -- the package outside the repository (slow) -----------------------------------------------------------

def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without what would point a child at the repository or its venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The package's wheel, built from a copy of its sources (nothing written into the repository)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "autograder", src / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(dist), str(src)], check=True, capture_output=True, env=clean_environment(), cwd=dist)
    (path,) = dist.glob("*.whl")
    assert path.name == f"autograd_course-{autograder.__version__}-py3-none-any.whl"
    return path


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Iterator[Path]:
    """A new virtual environment with the wheel and its declared dependencies, pinned by requirements.txt
    (torch 2.13.0 among them), and a Jupyter kernel, as a hosted notebook has."""
    where = tmp_path_factory.mktemp("venv")
    subprocess.run([sys._base_executable, "-m", "venv", str(where)], check=True, env=clean_environment())
    pip(where, "install", "-q", "-c", str(ROOT / "requirements.txt"), str(wheel), "ipykernel")
    yield where
    shutil.rmtree(where, ignore_errors=True)  # 1.3 GB, which pytest would keep for three runs


def pip(venv: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    result = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", *args], capture_output=True,
                            text=True, env=clean_environment(**env), cwd=venv, timeout=900, check=False)
    assert result.returncode == 0, f"pip {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def filled(name: str):
    """The student notebook `name` with every exercise cell replaced by the solution's cell."""
    course = nbformat.read(ROOT / "course" / name, as_version=4)
    answers = {c.id: c.source for c in nbformat.read(ROOT / "solutions" / name, as_version=4).cells
               if c.cell_type == "code" and BEGIN in c.source}
    cells = [cell for cell in course.cells if cell.get("id") in answers]
    assert answers and len(cells) == len(answers), f"course/{name} does not match solutions/{name}"
    for cell in cells:
        cell.source = answers[cell.id]
    return course


def run_elsewhere(name: str, venv: Path, folder: Path, **env: str):
    """Copies the filled notebook into `folder` and runs it there with the venv's kernel; the kernel's
    environment is this one plus `env`. A last cell reports where `autograder` was imported from."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = filled(name)
    nb.cells.append(nbformat.v4.new_code_cell("import autograder\nprint(autograder.__file__)"))
    folder.mkdir()
    nbformat.write(nb, folder / name)
    kernels = folder.parent / f"{folder.name}-kernels"
    (kernels / "course").mkdir(parents=True)
    (kernels / "course" / "kernel.json").write_text(json.dumps({
        "argv": [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "course", "language": "python", "env": clean_environment(**env)}))
    specs = KernelSpecManager(kernel_dirs=[str(kernels)])
    manager = KernelManager(kernel_name="course", kernel_spec_manager=specs)
    nb = nbformat.read(folder / name, as_version=4)
    NotebookClient(nb, km=manager, timeout=600, resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def check_titles(nb) -> list[str]:
    """The verdict line of every check() output, in order: 'check(KillHead): all checks pass', ..."""
    return [m.group(0) for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
            for m in CHECK_TITLE.finditer(o.get("data", {}).get("text/html", ""))]


def graphs(nb) -> tuple[int, int]:
    """(graphs drawn by Graphviz, graphs shown as text because Graphviz is missing) of draw()."""
    outputs = [o.get("data", {}).get("image/svg+xml", "") for cell in nb.cells if cell.cell_type == "code"
               for o in cell.get("outputs", [])]
    return sum('class="graph"' in o for o in outputs), sum(escape(AS_TEXT) in o for o in outputs)


def expected(name: str) -> tuple[list[str], int]:
    """The check() verdicts and the number of graphs of the executed solution notebook."""
    solution = nbformat.read(ROOT / "solutions" / name, as_version=4)
    titles = check_titles(solution)
    assert titles and all(t.endswith("all checks pass") for t in titles)
    return titles, graphs(solution)[0]


@pytest.mark.slow
def test_installed_wheel_runs_a_lesson_outside_the_repository(venv, wheel, tmp_path):
    """In a new environment holding only the wheel and its declared dependencies, does a copy of lesson 2 run
    with every exercise filled in: first cell silent, every check() passing, every graph drawn?"""
    pip(venv, "install", "-q", "--no-deps", "--no-index", str(wheel))  # whichever test ran first
    name = "02-custom-functions.ipynb"
    titles, drawn = expected(name)
    nb = run_elsewhere(name, venv, tmp_path / "student")
    assert nb.cells[0].id == SETUP_ID and nb.cells[0].outputs == []
    assert check_titles(nb) == titles
    assert graphs(nb) == (drawn, 0) and drawn > 0
    assert printed(nb.cells[-1]).strip().startswith(str(venv)), "autograder was not imported from the venv"


@pytest.mark.slow
def test_first_cell_installs_the_package_where_it_is_missing(venv, wheel, tmp_path):
    """Where the package is absent and Graphviz's `dot` too, does the first cell install it (here from the
    wheel named by AUTOGRADER_PACKAGE, with no index), saying so in one line and how to get Graphviz, and
    does lesson 5 then pass every check(), its graphs shown as text?"""
    pip(venv, "uninstall", "-y", "-q", "autograd-course")
    python = str(venv / "bin" / "python")
    absent = subprocess.run([python, "-c", "import autograder"], capture_output=True, env=clean_environment(),
                            cwd=tmp_path, check=False)
    assert absent.returncode != 0, "the package is still installed"

    # No network: a package pip cannot find fails the cell with pip's own words.
    source = nbformat.read(ROOT / "course" / "05-double-backward.ipynb", as_version=4).cells[0].source
    missing = tmp_path / "autograd_course-0-py3-none-any.whl"
    failed = subprocess.run([python, "-c", source], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env=clean_environment(AUTOGRADER_PACKAGE=str(missing), PIP_NO_INDEX="1"),
                            check=False)
    assert failed.returncode != 0 and f"RuntimeError: pip could not install {missing}" in failed.stderr

    name = "05-double-backward.ipynb"
    titles, drawn = expected(name)
    nb = run_elsewhere(name, venv, tmp_path / "student", AUTOGRADER_PACKAGE=str(wheel), PIP_NO_INDEX="1",
                       PATH=str(venv / "bin"))  # no `dot` on this PATH
    assert printed(nb.cells[0]).splitlines() == [f"Installing the course package from {wheel} ...", NO_DOT]
    assert check_titles(nb) == titles
    assert graphs(nb) == (0, drawn) and drawn > 0
    assert printed(nb.cells[-1]).strip().startswith(str(venv)), "autograder was not imported from the venv"
