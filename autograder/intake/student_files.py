"""One student's files: which of them is graded (their notebook, or their one .py file), which other
notebooks are left aside, and which .py files beside it are its modules. Nothing is run: names, and a
look at the text of Python files.
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.intake.files import SUFFIXES, is_dir, is_link, listing

MAX_FOLDER_ENTRIES = 5000  # entries looked at inside one student's folder


def candidates(folder: Path) -> tuple[list[tuple[int, Path]], list[Path], str]:
    """(depth, path) of the notebooks and .py files below folder, the zips among them, and an error."""
    found, zips, folders, looked = [], [], [(0, folder)], 0
    while folders:
        depth, current = folders.pop()
        try:
            entries = listing(current)
        except OSError as error:
            return [], [], f"could not be opened ({error.strerror})"
        for entry in entries:
            looked += 1
            if looked > MAX_FOLDER_ENTRIES:
                return [], [], f"holds over {MAX_FOLDER_ENTRIES:,} files and folders"
            path = Path(entry.path)
            if is_dir(entry):
                if depth < 20:
                    folders.append((depth + 1, path))
            elif path.suffix in SUFFIXES and not path.stem.endswith("-checkpoint"):
                found.append((depth, path))
            elif path.suffix == ".zip" and not is_link(entry):
                zips.append(path)
    return sorted(found, key=lambda c: (c[0], c[1].as_posix())), sorted(zips), ""


def choose(paths: list[Path], prefer: tuple[str, ...],
           name=lambda p: p.name) -> tuple[Path | None, list[Path], str]:
    """The file to grade among a student's files: the notebook (the one named like the lesson when
    there are several, else the first by name), else the one .py file (or the one no other imports).
    prefer: the names (casefolded, without extension) of the lesson's notebook; name: a path's name as
    the student uploaded it."""
    notebooks = [p for p in paths if p.suffix == ".ipynb"]
    pool = notebooks or [p for p in paths if p.suffix == ".py"]
    if not pool:
        return None, [], ("No notebook (.ipynb) or Python file (.py) was found in your submission. Hand in "
                          "your lesson notebook and resubmit.")
    if len(pool) == 1:
        return pool[0], [], ""
    preferred = [p for p in pool if Path(name(p)).stem.casefold() in prefer]
    if preferred:
        return preferred[0], [p for p in pool if p != preferred[0] and p.suffix == ".ipynb"], ""
    if notebooks:
        return notebooks[0], notebooks[1:], ""
    roots = [p for p in pool if not any(_imports(q, Path(name(p)).stem) for q in pool if q != p)]
    if len(roots) == 1:
        return roots[0], [], ""
    listed = ", ".join(name(p) for p in pool)
    return None, [], (f"Your submission holds several Python files and no notebook ({listed}), and the "
                      f"grader cannot tell which one is your work: hand in your notebook, or a single .py "
                      f"file (with the modules it imports).")


_IMPORT = r"^\s*(?:from\s+{0}(?:\s|\.)|import\s+(?:[\w.]+\s*,\s*)*{0}\b)"


def _imports(path: Path, module: str) -> bool:
    """Whether the Python file at path imports module (a look at its text: nothing is run)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(_IMPORT.format(re.escape(module)), text, re.MULTILINE) is not None
