"""One student's files: which of them is graded (their notebook, or their one .py file), which other
notebooks are left aside, and which .py files beside it are its modules. Nothing is run: names, and a
look at the text of Python files.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake.files import SUFFIXES, is_dir, is_link, listing, python_text, read_file

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


@dataclass
class Choice:
    """The file graded among a student's files, the other notebooks left aside with why (file -> why),
    and the student's error when none can be graded."""

    chosen: Path | None
    ignored: dict[Path, str] = field(default_factory=dict)
    error: str = ""


def choose(paths: list[Path], prefer: tuple[str, ...], name=lambda p: p.name,
           problems: tuple[str, ...] = ()) -> Choice:
    """The file to grade among a student's files, by one rule (the same locally and on Gradescope):
    notebooks before .py files; among several notebooks, the one that defines the most of the
    assignment's problems (`problems`: a class or function of that name that is more than the lesson's
    `raise NotImplementedError()` stub, read from the code, nothing run), then the one named like the
    lesson (`prefer`: casefolded names without extension), then the first in the order given. Without
    a notebook, the one .py file (or the one no other imports). name: a path's name as the student
    uploaded it."""
    notebooks = [p for p in paths if p.suffix == ".ipynb"]
    pool = notebooks or [p for p in paths if p.suffix == ".py"]
    if not pool:
        return Choice(None, error=NOTHING_FOUND)
    if len(pool) == 1:
        return Choice(pool[0])
    if notebooks:
        defined = {p: implemented(p, problems) for p in pool}
        named = {p: Path(name(p)).stem.casefold() in prefer for p in pool}
        ranked = sorted(pool, key=lambda p: (-len(defined[p]), not named[p]))  # stable: the order given
        best = ranked[0]
        return Choice(best, {p: _why(name(p), defined[p], name(best), defined[best], named[best], problems)
                             for p in ranked[1:]})
    roots = [p for p in pool if not any(_imports(q, Path(name(p)).stem) for q in pool if q != p)]
    if len(roots) == 1:
        return Choice(roots[0])
    listed = ", ".join(name(p) for p in pool)
    return Choice(None, error=(f"Your submission holds several Python files and no notebook ({listed}), and "
                               f"the grader cannot tell which one is your work: hand in your notebook, or a "
                               f"single .py file (with the modules it imports)."))


NOTHING_FOUND = ("No notebook (.ipynb) or Python file (.py) was found in your submission. Hand in your "
                 "lesson notebook and resubmit.")


def _why(file: str, defined: set[str], best: str, best_defined: set[str], best_named: bool,
         problems: tuple[str, ...]) -> str:
    if len(best_defined) > len(defined):
        mine = ", ".join(sorted(defined)) or "none"
        return (f"not graded: it defines {len(defined)} of the {len(problems)} problems ({mine}), "
                f"{best} defines {len(best_defined)}")
    tie = "is named like the lesson's notebook" if best_named else "comes first by name"
    return f"not graded: it defines as many of the problems as {best}, which {tie}"


def implemented(path: Path, problems: tuple[str, ...]) -> set[str]:
    """The problems (names of classes or functions) a notebook or .py file defines at its top level
    with more than a stub, read from its text; cells that do not parse count for nothing."""
    if not problems:
        return set()
    try:
        raw = read_file(path)
        if path.suffix == ".ipynb":
            cells = json.loads(raw.decode("utf-8-sig"))["cells"]
            sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                       for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
        else:
            sources = [python_text(raw)]
    except Exception:  # noqa: BLE001 - an unreadable file defines nothing; the loader says why later
        return set()
    found: set[str] = set()
    for source in sources:
        for node in _statements(str(source)):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in problems:
                (found.add if not _stub(node) else found.discard)(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not isinstance(node.value, (ast.Constant,
                                                                                            type(None))):
                # sinh = lambda x: Sinh.apply(x)[0] defines sinh; sinh = None does not
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found |= {t.id for t in targets if isinstance(t, ast.Name)} & set(problems)
            elif isinstance(node, ast.ImportFrom):  # from helpers import KillHead: defined there
                found |= {a.asname or a.name for a in node.names} & set(problems)
    return found


def _statements(source: str) -> list[ast.stmt]:
    """A cell's top-level statements, its magics and shell escapes read as `pass`; [] when it does not
    parse."""
    try:
        return ast.parse(re.sub(r"^(\s*)[%!].*$", r"\1pass", source, flags=re.MULTILINE)).body
    except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, ValueError: it defines nothing
        return []


def _stub(node: ast.AST) -> bool:
    """A class whose methods, or a function whose body, only raise NotImplementedError (or pass)."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, ast.FunctionDef)]
        return all(_stub(m) for m in methods)
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Raise) and "NotImplementedError" in ast.dump(s))
               for s in body)


_IMPORT = r"^\s*(?:from\s+{0}(?:\s|\.)|import\s+(?:[\w.]+\s*,\s*)*{0}\b)"


def _imports(path: Path, module: str) -> bool:
    """Whether the Python file at path imports module (a look at its text: nothing is run)."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(_IMPORT.format(re.escape(module)), text, re.MULTILINE) is not None
