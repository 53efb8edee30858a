"""The Gradescope autograder archive: `python -m autograder gradescope --assignment NAME --out FILE.zip`.

It holds setup.sh and run_autograder (scripts/, run by Gradescope), the run-time requirements pinned as
in the course's requirements.txt, the settings (gradescope.json), the package and the private extension
files. The same inputs build the same bytes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import zipfile
from pathlib import Path

from autograder import config
from autograder.gradescope.settings import SETTINGS_FILE, Settings

# What the grader imports at run time, pinned exactly as in requirements.txt (the archive's copy).
RUNTIME = tuple(config.RUNTIME)
PACKAGE = Path(__file__).resolve().parent.parent
REPOSITORY = PACKAGE.parent
SCRIPTS = Path(__file__).resolve().parent / "scripts"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)  # fixed, so the same inputs build the same bytes

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
        ("setup.sh", (SCRIPTS / "setup.sh").read_bytes(), True),
        ("run_autograder", (SCRIPTS / "run_autograder").read_bytes(), True),
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


def unpack(archive: Path, target: Path) -> None:
    """The archive unpacked as Gradescope's `unzip` does, file modes included (zipfile.extractall drops
    them): to try an archive here (tests/gradescope, tools.bench --overhead)."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            path = target / info.filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(z.read(info))
            path.chmod(info.external_attr >> 16 & 0o777)
