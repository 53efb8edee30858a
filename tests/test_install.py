"""Does the course work outside this repository, as Colab, Binder or a bare Jupyter opens it?

The fast tests check what the package declares: its dependencies are what it and the lessons import,
requirements.txt pins each declared package within its range, and the set-up accepts every Python the
package supports (tests/test_release.py: the release is named in one place). The slow ones build the wheel,
install it with its declared dependencies into a new virtual environment that cannot see the repository,
and run a copy of a student notebook there, its exercises filled in from the solutions: once with the
package installed, and once without it, so that the notebook's first cell installs it (from the wheel: no
network) where Graphviz's `dot` is also missing. Then the first cell offline (one paragraph, Run All
stopped), over another torch than the pinned one (a stand-in: kept), and make dist's files (tools/dist.py)
and GitHub's archive of a commit, each installed by the first cell and graded."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from html import escape
from importlib.metadata import packages_distributions
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

import autograder
from autograder.gradescope.build import RUNTIME
from autograder.measure.graphs import AS_TEXT, NO_DOT
from tests.conftest import ROOT
from tools import dist
from tools.make_student import BEGIN, SETUP_ID

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CHECK_TITLE = re.compile(r"check\((\w+)\): (all checks of this notebook pass|some checks fail)")


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


def package_sources(folder: Path) -> Path:
    """A copy of what the package is built from (nothing is written into the repository)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, folder / name)
    shutil.copytree(ROOT / "autograder", folder / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The package's wheel, built from a copy of its sources."""
    src = package_sources(tmp_path_factory.mktemp("src"))
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(dist), str(src)], check=True, capture_output=True, env=clean_environment(), cwd=dist)
    (path,) = dist.glob("*.whl")
    assert path.name == autograder.WHEEL == f"autograd_course-{autograder.__version__}-py3-none-any.whl"
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
    nb = filled(name)
    nb.cells.append(nbformat.v4.new_code_cell("import autograder\nprint(autograder.__file__)"))
    return run_in_kernel(nb, name, venv, folder, **env)


def run_in_kernel(nb, name: str, venv: Path, folder: Path, **env: str):
    """Writes `nb` as folder/name and runs it, as Run All does (stopping at a cell that fails, whose
    CellExecutionError is raised), with the venv's kernel in this environment plus `env`."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

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
    client = NotebookClient(nb, km=manager, timeout=600, resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    finally:
        nbformat.write(nb, folder / name)  # what ran, to look at
    return nb


def printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def check_titles(nb) -> list[str]:
    """The verdict line of every check() output, in order: 'check(KillHead): all checks of this notebook
    pass', ..."""
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
    assert titles and all(t.endswith("all checks of this notebook pass") for t in titles)
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

    name = "05-double-backward.ipynb"
    titles, drawn = expected(name)
    nb = run_elsewhere(name, venv, tmp_path / "student", AUTOGRADER_PACKAGE=str(wheel), PIP_NO_INDEX="1",
                       PATH=str(venv / "bin"))  # no `dot` on this PATH
    assert printed(nb.cells[0]).splitlines() == [f"Installing the course package from {wheel} ...", NO_DOT]
    assert check_titles(nb) == titles
    assert graphs(nb) == (0, drawn) and drawn > 0
    assert printed(nb.cells[-1]).strip().startswith(str(venv)), "autograder was not imported from the venv"


@pytest.mark.slow
def test_first_cell_offline_says_what_to_do_and_stops_run_all(venv, wheel, tmp_path):
    """Where the package is missing and the release cannot be downloaded, does the first cell stop Run All
    with one paragraph, no traceback, that names the address, how to point it at a wheel and how to install
    from a clone, followed by pip's own last lines; and does doing what it says (%env, run it again) work?"""
    pip(venv, "uninstall", "-y", "-q", "autograd-course")
    name = "05-double-backward.ipynb"
    nb = nbformat.read(ROOT / "course" / name, as_version=4)
    nb.cells = [nb.cells[0], nbformat.v4.new_code_cell("print('ran on')")]
    offline = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",  # nothing listens
               "PIP_RETRIES": "0", "PIP_NO_INDEX": "1"}
    with pytest.raises(CellExecutionError):
        run_in_kernel(nb, name, venv, tmp_path / "offline", **offline)
    nb = nbformat.read(tmp_path / "offline" / name, as_version=4)
    first, after = nb.cells
    assert after.outputs == [] and after.execution_count is None, "Run All went on past the set-up cell"
    assert printed(first) == f"Installing the course package from {autograder.PACKAGE_URL} ...\n"
    (error,) = [o for o in first.outputs if o.output_type == "error"]
    shown = "\n".join(error.traceback)  # what Jupyter shows of an error
    paragraph, said = shown.splitlines()[:8], shown.splitlines()[8:]
    assert paragraph == [
        "The course package could not be installed (is this computer offline?) from",
        f"  {autograder.PACKAGE_URL}",
        f"Offline, install it from a wheel: get {autograder.WHEEL} (in a clone of the",
        "course, `make dist` writes it into dist/; or ask your instructor), run",
        f"  %env AUTOGRADER_PACKAGE=/path/to/{autograder.WHEEL}",
        "in a cell above this one, and run this cell again. Or, in a clone of the course, run",
        f"  {venv / 'bin' / 'python'} -m pip install -e .",
        "in a terminal, then restart the kernel. pip said:"]
    assert 1 <= len(said) <= 4 and all(line.startswith("  ") for line in said), said  # pip's last lines
    assert "Connection refused" in "".join(said) and "Retrying" not in "".join(said), said
    assert "Traceback" not in shown and "File " not in shown and "raise" not in shown
    assert "\x1b" not in shown  # no colours: the same text in every front end

    # What the paragraph says: %env in a cell above it, then the set-up cell again, still offline.
    nb.cells = [nbformat.v4.new_code_cell(f"%env AUTOGRADER_PACKAGE={wheel}"), first,
                nbformat.v4.new_code_cell("from autograder import check\nprint(check)")]
    nb = run_in_kernel(nb, name, venv, tmp_path / "as-told", **offline)
    assert printed(nb.cells[1]).startswith(f"Installing the course package from {wheel} ...\n")
    assert "<function check" in printed(nb.cells[2])


def fake_torch(folder: Path, version: str) -> Path:
    """A wheel of a distribution named torch at `version` holding a stub: what pip sees of an installed
    PyTorch, without its gigabytes."""
    folder.mkdir(exist_ok=True)
    info = f"torch-{version}.dist-info"
    files = {"torch/__init__.py": f'__version__ = "{version}"  # a stand-in for PyTorch\n',
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                              "Tag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"torch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


def installed_version(venv: Path, name: str) -> str | None:
    shown = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", name], capture_output=True,
                           text=True, env=clean_environment(), check=False).stdout
    return next((line.split(":", 1)[1].strip() for line in shown.splitlines() if line.startswith("Version:")),
                None)


@pytest.mark.slow
def test_first_cell_keeps_the_notebooks_own_torch(wheel, tmp_path):
    """With another PyTorch than requirements.txt's already installed (a stand-in named torch, at the
    lowest version the package accepts and at a newer one than the pin), does the first cell install the
    package and leave that torch as it was; online, would pip install nothing but the package; and with a
    torch older than the package's range, does the cell stop and say so (pip would have to replace it)?"""
    where = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(where)], check=True, env=clean_environment())
    wheels = tmp_path / "wheels"
    lowest = str(declared()["torch"].specifier).removeprefix(">=")
    versions = {"lowest": lowest, "newer": "2.15.0", "older": "2.3.1"}
    accepted = declared()["torch"].specifier
    assert [accepted.contains(v) for v in versions.values()] == [True, True, False]
    assert Version(versions["newer"]) > Version(pinned()["torch"])
    for version in versions.values():
        fake_torch(wheels, version)
    # requirements.txt's pins but torch's (they replace a pip configuration's, which may cap torch)
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("".join(f"{name}=={pin}\n" for name, pin in pinned().items() if name != "torch"))
    (tmp_path / "nothing").mkdir()  # nor this machine's folders of wheels: a torch for pip to pick is online
    pins = {"PIP_CONSTRAINT": str(constraints), "PIP_FIND_LINKS": str(tmp_path / "nothing")}
    local = ("--no-index", "--find-links", str(wheels))
    pip(where, "install", "-q", *local, f"torch=={versions['lowest']}", **pins)
    others = [str(requirement) for name, requirement in declared().items() if name != "torch"]
    pip(where, "install", "-q", *others, **pins)  # torchviz needs a torch: the stand-in is one
    assert installed_version(where, "torch") == versions["lowest"]

    # Online, the set-up cell's `pip install` would install the package alone and keep this torch.
    report = pip(where, "install", "--dry-run", "-q", "--report", "-", str(wheel), **pins).stdout
    assert [item["metadata"]["name"] for item in json.loads(report)["install"]] == ["autograd-course"]

    source = nbformat.read(ROOT / "course" / "02-custom-functions.ipynb", as_version=4).cells[0].source
    python = str(where / "bin" / "python")

    def set_up(torch: str) -> subprocess.CompletedProcess:
        pip(where, "install", "-q", *local, f"torch=={torch}", **pins)
        subprocess.run([python, "-m", "pip", "uninstall", "-y", "-q", "autograd-course"], capture_output=True,
                       env=clean_environment(), check=False)
        return subprocess.run([python, "-c", source], capture_output=True, text=True, cwd=tmp_path,
                              env=clean_environment(AUTOGRADER_PACKAGE=str(wheel), PIP_NO_INDEX="1", **pins),
                              timeout=600, check=False)

    for torch in (versions["lowest"], versions["newer"]):
        result = set_up(torch)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"Installing the course package from {wheel} ...")
        assert installed_version(where, "torch") == torch, f"the set-up cell replaced torch {torch}"
        assert installed_version(where, "autograd-course") == autograder.__version__

    result = set_up(versions["older"])
    assert result.returncode != 0
    assert "SetupFailed: The course package could not be installed" in result.stderr
    assert f"requirement torch>={lowest}" in result.stderr.partition("pip said:")[2], result.stderr
    assert installed_version(where, "torch") == versions["older"]


@pytest.mark.slow
def test_make_dist_files_install_and_grade_outside_the_repository(venv, tmp_path):
    """Do make dist's sdist and wheel (the wheel built from the sdist) hold every file of the package, and
    does each, and the archive GitHub serves at the release's address (git archive of a commit), install
    with the set-up cell and give check(KillHead) full marks, reading no file of the repository?"""
    built_wheel, sdist = dist.build(package_sources(tmp_path / "src"), tmp_path / "dist")
    package = sorted(git_files("autograder"))
    in_wheel = [p for p in zipfile.ZipFile(built_wheel).namelist() if not p.startswith("autograd_course-")]
    assert sorted(in_wheel) == package
    with tarfile.open(sdist) as archive:
        prefix = f"autograd_course-{autograder.__version__}/"
        held = {m.name.removeprefix(prefix) for m in archive.getmembers() if m.isfile()}
    assert set(package) <= held, f"the sdist lacks {sorted(set(package) - held)}"

    github = tmp_path / f"{autograder.RELEASE}.zip"
    subprocess.run(["git", "-C", str(ROOT), "archive", "--format=zip", f"--output={github}",
                    f"--prefix=autograd-course-{autograder.__version__}/", "HEAD"], check=True)
    for file in (built_wheel, sdist, github):
        result = dist.prove(file, venv / "bin" / "python", tmp_path / "work")
        assert result["text"].startswith("check(KillHead): all checks of this notebook pass"), result["text"]
        assert result["opened"] == [] and Path(result["package"]).is_relative_to(venv)


def git_files(folder: str) -> list[str]:
    return subprocess.run(["git", "-C", str(ROOT), "ls-files", folder], capture_output=True, text=True,
                          check=True).stdout.split()
