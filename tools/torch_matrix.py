"""The course on the oldest and the newest torch it supports: python -m tools.torch_matrix [VERSION...]

For each torch version (by default autograder.torch_versions.OLDEST and NEWEST; the pinned one of
requirements.txt is `make test`'s own), it makes `.venv-torch/<version>` with that torch and every other
package at requirements.txt's pin, then runs there the tests marked `stack` (tests/test_stack.py and the
judge's catalogue): every problem's right answers get full marks and its wrong ones their causes through
check() and the batch grader, the example classes get the pinned torch's scores, and every lesson runs to
its end. `make test-torch` runs it; `.ci/run` runs it after `make test`.

PyPI's Linux torch brings its CUDA libraries (about 6 GB installed for each version: the CPU never uses
them, but `import torch` loads them). Each environment is kept for the next run unless `--discard` (as
`.ci/run` does: a fresh clone's environments serve once), which removes it once its tests ran, so that
only one is on disk at a time. A machine's pip configuration may cap torch below the newest release: the
only constraints applied here are requirements.txt's pins (PIP_CONSTRAINT).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.torch_versions import NEWEST, OLDEST

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venv-torch"
PACKAGE = ".[course,site,dev]"  # everything the tests import, so that pytest can collect every module
NEEDED_GB = 10  # one environment (about 6 GB) and the wheels pip unpacks it from (about 3 GB)


class Stop(Exception):
    """What the person running the matrix has to do, in one paragraph."""


def room_problem(where: Path, needed_gb: float = NEEDED_GB) -> str:
    """A paragraph when the file system holding `where` has less than `needed_gb` free, else ""."""
    where = next(p for p in (where, *where.parents) if p.exists())
    free = shutil.disk_usage(where).free / 1e9
    if free >= needed_gb:
        return ""
    return (f"torch-matrix: {free:.1f} GB free where {where} lies, and one torch environment needs about "
            f"{needed_gb} GB while it is installed (PyPI's torch brings its CUDA libraries). Free some room "
            f"(`make clean` removes the environments of earlier runs in .venv-torch/) and run it again.")


def pins_without_torch() -> str:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith("torch=="))


def environment(version: str) -> Path:
    """.venv-torch/<version>, made or brought up to date; its Python."""
    venv = VENVS / version
    python, done = venv / "bin" / "python", venv / ".installed"
    inputs = [ROOT / "requirements.txt", ROOT / "pyproject.toml"]
    if (done.exists() and done.read_text() == PACKAGE
            and all(p.stat().st_mtime <= done.stat().st_mtime for p in inputs)):
        return python
    if problem := room_problem(venv):
        raise Stop(problem)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as constraints:
        constraints.write(pins_without_torch())
    env = {**os.environ, "PIP_CONSTRAINT": constraints.name, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    started = time.monotonic()
    print(f"torch-matrix: installing torch {version} and the pinned packages into {venv.relative_to(ROOT)}",
          flush=True)
    try:
        installed = subprocess.run([str(python), "-m", "pip", "install", "-q", f"torch=={version}", "-e",
                                    PACKAGE], cwd=ROOT, env=env, check=False)
    finally:
        os.unlink(constraints.name)
    if installed.returncode != 0:
        raise Stop(f"torch-matrix: pip could not install torch {version} into {venv.relative_to(ROOT)} "
                   f"(its own words are above). If it ran out of room, free some and run it again; if the "
                   f"package index lacks this torch, name versions it has: python -m tools.torch_matrix "
                   f"VERSION...")
    done.write_text(PACKAGE)
    print(f"torch-matrix: installed in {time.monotonic() - started:.0f} s", flush=True)
    return python


def run(version: str, pytest_args: list[str], discard: bool = False) -> int:
    env = {**os.environ, "AUTOGRADER_PINNED_PYTHON": str(ROOT / ".venv" / "bin" / "python")}
    try:
        python = environment(version)
        print(f"torch-matrix: torch {version}: the tests marked `stack`", flush=True)
        return subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", "-m", "stack", "-n",
                               "2", "--dist", "loadfile", *pytest_args, "tests"], cwd=ROOT, env=env,
                              check=False).returncode
    finally:
        if discard:
            shutil.rmtree(VENVS / version, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", default=[OLDEST, NEWEST],
                        help=f"torch versions (default: {OLDEST} and {NEWEST})")
    parser.add_argument("--discard", action="store_true",
                        help="remove each version's environment once its tests ran (one on disk at a time)")
    parser.add_argument("--pytest", nargs=argparse.REMAINDER, default=[], help="more arguments for pytest")
    args = parser.parse_args()
    try:
        failed = [v for v in args.versions if run(v, args.pytest, args.discard) != 0]
    except Stop as stop:
        print(stop, file=sys.stderr)
        return 2
    if failed:
        print(f"torch-matrix: tests failed on torch {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"torch-matrix: every test marked `stack` passed on torch {', '.join(args.versions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
