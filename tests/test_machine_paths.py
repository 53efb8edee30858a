"""No committed notebook, document or built page names a folder of the machine that made it.

A path like /home/ana/.venv/lib/python3.11/site-packages/torch/autograd/function.py in a committed output
tells every reader where someone's work folder was, and means nothing on their machine. The lessons' outputs
(sources and outputs of solutions/ and course/), docs/ and README.md are checked here; the built site
(every page, every notebook it offers for download) in tests/tools/test_site.py, with the same patterns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

# An absolute path into a home, work or temporary folder, or to installed packages, on any system.
MACHINE_PATH = re.compile(
    r"(?<![\w.~])/(?:home|Users)/[^/\s\"'`<>]+/"            # /home/ana/..., /Users/ana/...
    r"|(?<![\w.~])/(?:root|work)/"                            # /root/..., /work/...
    r"|(?<![\w.~])/tmp/[^/\s\"'`<>]+/"                        # a folder under /tmp: /tmp/pytest-3/...
    r"|(?<![\w.~])/private/var/folders/"                      # macOS's temporary folders
    r"|(?:[A-Za-z]:|~|(?<![\w.~]))[/\\][^\s\"'`<>]*[/\\](?:site|dist)-packages\b"  # .../site-packages
    r"|(?<![\w.])~/\.[\w-]+/"                                  # a hidden folder of the home: ~/.pyenv/...
    r"|\b[A-Za-z]:\\{1,2}Users\\"                             # C:\Users\ana (C:\\Users in JSON)
)
BINARY = ("image/png", "image/jpeg", "image/gif")  # base64: its letters are not text


def machine_paths(text: str) -> list[str]:
    """The machine paths in a text, each as found."""
    return [match.group(0) for match in MACHINE_PATH.finditer(text)]


def strings(value, key: str = "") -> Iterator[str]:
    """Every string of a parsed notebook (sources, outputs, metadata), images left out."""
    if isinstance(value, str):
        if key not in BINARY:
            yield value
    elif isinstance(value, dict):
        for child_key, child in value.items():
            yield from strings(child, child_key)
    elif isinstance(value, list):
        for child in value:
            yield from strings(child, key)


def found_in(path: Path) -> list[str]:
    text = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        return [found for string in strings(json.loads(text)) for found in machine_paths(string)]
    return machine_paths(text)


COMMITTED = sorted([*ROOT.glob("solutions/*.ipynb"), *ROOT.glob("course/*.ipynb"), ROOT / "README.md",
                    *(path for path in (ROOT / "docs").rglob("*") if path.is_file())])


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_committed_file_names_a_folder_of_the_machine(path):
    """Does no lesson notebook (sources and outputs), document or README hold an absolute path of a home,
    work or temporary folder, or of installed packages?"""
    assert found_in(path) == []


def test_the_lessons_and_documents_are_all_checked():
    names = {path.relative_to(ROOT).as_posix() for path in COMMITTED}
    assert {"README.md", "docs/STYLE.md"} <= names
    assert sum(name.startswith("solutions/") for name in names) >= 7
    assert sum(name.startswith("course/") for name in names) >= 7


@pytest.mark.parametrize("text", [
    "File /home/ana/.venv/lib/python3.11/site-packages/torch/autograd/function.py:575",
    "/root/.pyenv/versions/3.11.7/lib/python3.11/inspect.py",
    "/work/wt-site/solutions/03-training.ipynb",
    "/tmp/pytest-of-ana/pytest-3/x.ipynb",
    "/Users/ana/course/lesson.ipynb",
    "/private/var/folders/xy/T/tmp1.py",
    r"C:\Users\ana\course",
    r"C:\\Users\\ana\\course",
    r"D:\envs\course\Lib\site-packages\torch\nn.py",
    "/opt/conda/lib/python3.11/site-packages/torch/__init__.py",
    "File ~/.venv/lib/python3.11/site-packages/torch/autograd/function.py:575",
    "~/.pyenv/versions/3.11.7/lib/python3.11/inspect.py",
])
def test_a_machine_path_is_found(text):
    assert machine_paths(text), text


@pytest.mark.parametrize("text", [
    "a fresh clone under `/tmp` of this machine",
    "its own `/proc` and a 64 MiB `/tmp`",
    "sandbox/worker.py, slots.py gives it a uid",
    "https://docs.pytorch.org/docs/stable/notes/autograd.html",
    "File .../torch/autograd/function.py:575, in apply",
    "Users should see one output",
    "a path that starts with ~ is the home of whoever reads it: ~/course",
])
def test_what_is_not_a_machine_path_is_not_found(text):
    assert machine_paths(text) == [], text
