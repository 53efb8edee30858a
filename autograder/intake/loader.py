"""Finds submissions and reads them into the code cells a worker will run (parsing only, no execution).

Everything here reads untrusted files as root, so:

- only regular files are read (files.py): a symbolic link among the submissions (to a file or a folder)
  becomes that submission's error and is never followed, in discovery or when reading (O_NOFOLLOW, and
  the file opened must be the one discovery saw); named pipes, devices and sockets are refused the same
  way. A folder named on the command line is the instructor's choice and is entered even if it is a link;
- a file over MAX_BYTES is refused from its size (fstat of the opened file), never read whole;
- whatever is wrong with one file (bad JSON, cells that are not objects, a `source` that is not text,
  nesting deep enough to exhaust the recursion limit, invalid UTF-8, ...) becomes that submission's
  error: load() never raises for one file;
- ids never collide with one another (ignoring case) or with the grader's own files in the output
  folder (grades.csv, canvas.csv, report.html, hidden files...).

A notebook's code cells are what Jupyter runs of them, magics included (jupyter.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake import layouts
from autograder.intake.files import MAX_BYTES, SUFFIXES, Unreadable, python_text, read_file
from autograder.intake.jupyter import Budget, jupyter_code
from autograder.intake.layouts import Discovery, Found, NoSubmissions  # noqa: F401 - NoSubmissions: the loader's error

MAX_ID_BYTES = 200  # a file name may have 255; room for a "-2" and for file systems that count otherwise
# Names the grader writes in the output folder, or may: an id that looks like one of them is taken.
GRADER_NAMES = ("grades.csv", "canvas.csv", "report.html", "index.html", "grading.toml")
GRADER_SUFFIXES = (".csv", ".html", ".json", ".zip", ".tmp", ".sha256", ".toml")
MAX_MODULE_BYTES = MAX_BYTES  # all the helper modules of one submission together


@dataclass
class Submission:
    """One student's submission: its id (see layouts.py), its code cells, the helper modules beside it
    (name in the worker's folder -> source), who handed it in where the layout says, or why it could
    not be read. sha256 covers every byte graded: the file and its modules with their names."""

    id: str
    path: Path | None
    cells: list[str] = field(default_factory=list)
    error: str = ""
    sha256: str = ""
    modules: dict[str, str] = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    found_at: str = ""  # for the instructor only: where it was found (never shown to the student)
    ignored: list[str] = field(default_factory=list)  # other notebooks of the student, not graded
    unreadable: bool = False  # the file (or folder) could not be read at all: the instructor is told
    # The code cells (indices into `cells`) the lesson itself expects to raise: tagged raises-exception,
    # as the "What goes wrong here?" exercises are. Their errors are not the student's to fix.
    expected_errors: list[int] = field(default_factory=list)
    # Each code cell's number among all the notebook's cells (markdown included), as Jupyter shows them.
    positions: list[int] = field(default_factory=list)
    # The code cells (indices into `cells`) nbgrader marks read-only (locked, not a solution): the
    # instructor's helpers and tests, not read for reaches (flags.py); they run, watched like the rest.
    read_only: list[int] = field(default_factory=list)

    @property
    def file(self) -> str:
        """The graded file's name (never a path of the instructor's machine)."""
        return self.path.name if self.path is not None else ""


# -- finding submissions --------------------------------------------------------------------------------

def discover(paths: list[Path], prefer: tuple[str, ...] = (), problems: tuple[str, ...] = ()) -> Discovery:
    """The submissions named, or found inside the folders and zips named (layouts.py): symbolic links and
    other files that are not regular files are listed when their name (or the folder they point to)
    makes them look like a submission, so that load() refuses them by name, but never followed. A name
    that is not UTF-8 (a folder made on an old Windows) is read as Windows-1252, and the instructor told."""
    discovery = layouts.discover(paths, prefer, problems)
    for found in discovery.found:
        decoded = decoded_name(found.name)
        if decoded != found.name:
            raw = os.fsencode(found.name)
            where = (found.found_at or found.name).replace(found.name, decoded)
            discovery.warnings.append(f"{where}: the name {raw!r} is not UTF-8; it was "
                                      f"read as Windows-1252: {decoded!r}. Check that this is the student's "
                                      f"name.")
            found.identity.setdefault("name_bytes", raw.hex())
            found.name = decoded
    return discovery


def decoded_name(name: str) -> str:
    """A name as the file system gave it (undecodable bytes as surrogates), read as Windows-1252 where it
    is not UTF-8; bytes Windows-1252 leaves undefined stay unreadable (safe_id makes them "_")."""
    if not any("\udc80" <= c <= "\udcff" for c in name):
        return name
    return os.fsencode(name).decode("cp1252", "surrogateescape")


def _looks_like_grader_file(candidate: str) -> bool:
    name = candidate.casefold()
    return name in GRADER_NAMES or name.endswith(GRADER_SUFFIXES) or name.startswith(".")


def safe_id(name: str) -> str:
    """A file name without extension, made safe as a folder name and a CSV cell: characters that are
    not printable (control characters, undecodable bytes) and path separators become "_", and so do
    leading dots (no hidden folders, no ".."); at most MAX_ID_BYTES bytes of UTF-8."""
    text = "".join(c if c.isprintable() and c not in "/\\" else "_" for c in name)
    stripped = text.lstrip(".")
    text = "_" * (len(text) - len(stripped)) + stripped
    while len(text.encode("utf-8")) > MAX_ID_BYTES:
        text = text[:-1]
    return text or "submission"


def unique_ids(paths: list[Path]) -> list[str]:
    """File names without extension (see safe_id), made unique as unique_names does."""
    return unique_names([(path.stem if path.suffix in SUFFIXES else path.name, "") for path in paths])


def unique_names(names: list[tuple[str, str]]) -> list[str]:
    """Ids for (name, tiebreak) pairs (see safe_id). A name seen before (ignoring case, as some file
    systems do) or one that looks like a file the grader writes (grades.csv, a .csv or .html...) is told
    apart by its tiebreak when it has one (a student's email or id: the same whoever else is in the
    class), else gets -2, -3, ... in the order given."""
    counts: dict[str, int] = {}
    for name, _ in names:
        key = safe_id(name).casefold()
        counts[key] = counts.get(key, 0) + 1
    ids, seen = [], set()
    for name, tiebreak in names:
        base = safe_id(name)
        if tiebreak and (counts[base.casefold()] > 1 or _looks_like_grader_file(base)):
            base = safe_id(f"{name} ({tiebreak})")
        candidate, n = base, 1
        while candidate.casefold() in seen or _looks_like_grader_file(candidate):
            n += 1
            candidate = f"{base}-{n}"
        seen.add(candidate.casefold())
        ids.append(candidate)
    return ids


# -- reading one file -----------------------------------------------------------------------------------

def read_cells(path: Path) -> list[str]:
    """A .py file is one cell; a notebook's code cells in order, as Jupyter runs them. Raises ValueError
    (Unreadable) when unreadable."""
    return cells_of(path.name, path.suffix, read_file(path))


def cells_of(name: str, suffix: str, raw: bytes) -> list[str]:
    if suffix == ".py":
        return [python_text(raw)]
    sources = notebook_sources(name, raw)
    budget = Budget(name)
    return [jupyter_code(source, budget, index + 1) for index, source in enumerate(sources)]


def notebook_sources(name: str, raw: bytes) -> list[str]:
    """The sources of a notebook's code cells; Unreadable, naming what is wrong, for anything that is not
    a notebook Jupyter wrote."""
    try:
        nb = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise _not_a_notebook(name, f"it is not UTF-8 text: {error.reason} at byte {error.start}") from None
    except RecursionError:
        raise _not_a_notebook(name, "it is nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, and integers too long to convert
        raise _not_a_notebook(name, f"it is not valid JSON: {str(error)[:200]}") from None
    if not isinstance(nb, dict):
        raise _not_a_notebook(name, f"its top level is a JSON {type(nb).__name__}, not an object")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        old = " (it looks like an old nbformat 3 notebook)" if "worksheets" in nb else ""
        raise _not_a_notebook(name, f"it has no list of cells{old}")
    sources = []
    for index, cell in enumerate(cells, 1):
        if not isinstance(cell, dict):
            raise _not_a_notebook(name, f"cell {index} is a JSON {type(cell).__name__}, not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise _not_a_notebook(name, f"cell {index}'s source is {_kind(source)}, not text")
        try:
            source.encode("utf-8")
        except UnicodeEncodeError:
            raise _not_a_notebook(name, f"cell {index}'s source holds characters that are not Unicode text "
                                        f"(lone surrogates)") from None
        sources.append(source)
    return sources


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list holding something other than strings"
    return f"a JSON {type(value).__name__}"


def _not_a_notebook(name: str, why: str) -> Unreadable:
    return Unreadable(f"{name} is not a readable Jupyter notebook ({why}). Save it again from Jupyter and "
                      f"resubmit.")


# -- everything ---------------------------------------------------------------------------------------

def load(paths: list[Path], prefer: tuple[str, ...] = (), warnings: list[str] | None = None,
         problems: tuple[str, ...] = ()) -> list[Submission]:
    """Every submission found in paths, read; one that cannot be read carries its error and no cells.
    Raises NoSubmissions only (nothing to grade). Zips are unpacked into temporary folders, removed once
    everything is read. `warnings` receives what the instructor should know (zip entries refused,
    metadata that could not be read)."""
    discovery = discover(paths, prefer, problems)
    try:
        subs = read_all(discovery.found)
    finally:
        discovery.close()
    if warnings is not None:
        warnings.extend(discovery.warnings)
    return subs


def expected_errors(suffix: str, raw: bytes) -> list[int]:
    """The code cells of a notebook tagged raises-exception (see code_cells)."""
    return code_cells(suffix, raw)[0]


def code_cells(suffix: str, raw: bytes) -> tuple[list[int], list[int], list[int]]:
    """The code cells of a notebook tagged raises-exception (the lesson's own "What goes wrong here?"
    cells, meant to raise), numbered as cells_of numbers them; each code cell's number among all the
    notebook's cells; the code cells nbgrader marks read-only. Anything unexpected gives none."""
    if suffix != ".ipynb":
        return [], [], []
    try:
        cells = json.loads(raw.decode("utf-8-sig"))["cells"]
        code = [(n, c) for n, c in enumerate(cells, 1)
                if isinstance(c, dict) and c.get("cell_type") == "code"]
        meta = [c.get("metadata") if isinstance(c.get("metadata"), dict) else {} for _, c in code]
        nbgrader = [m.get("nbgrader") if isinstance(m.get("nbgrader"), dict) else {} for m in meta]
        return ([i for i, m in enumerate(meta) if isinstance(m.get("tags"), list)
                 and "raises-exception" in m["tags"]], [n for n, _ in code],
                [i for i, g in enumerate(nbgrader) if g.get("locked") is True and not g.get("solution")])
    except Exception:  # noqa: BLE001 - the errors are then all listed, as before
        return [], [], []


def read_all(found: list[Found]) -> list[Submission]:
    ids = unique_names([(f.name, f.tiebreak) for f in found])
    return [read_one(f, sid) for f, sid in zip(found, ids)]


def read_one(found: Found, sid: str) -> Submission:
    """One submission read: its file, its modules; whatever is wrong becomes its error."""
    sub = Submission(sid, found.graded, error=found.error, identity=dict(found.identity),
                     found_at=found.found_at, ignored=list(found.ignored), unreadable=found.unreadable)
    digest = hashlib.sha256()
    try:
        if sub.error or found.graded is None:
            sub.error = sub.error or "No notebook (.ipynb) or Python file (.py) was found in your submission."
        else:
            raw = read_file(found.graded)
            sub.cells = cells_of(found.graded.name, found.graded.suffix, raw)
            sub.expected_errors, sub.positions, sub.read_only = code_cells(found.graded.suffix, raw)
            digest.update(raw)
            total = 0
            for name in sorted(found.modules):
                module = read_file(found.modules[name])
                total += len(module)
                if total > MAX_MODULE_BYTES:
                    raise Unreadable(f"The Python files beside {found.graded.name} come to more than the "
                                     f"grader's limit of {MAX_MODULE_BYTES // 2**20} MB, so they were not "
                                     f"read.")
                sub.modules[name] = python_text(module)
                digest.update(b"\0module\0" + name.encode("utf-8", "replace") + b"\0" + module)
            sub.sha256 = digest.hexdigest()
    except Unreadable as error:
        sub.error = str(error)
        sub.unreadable = True
    except Exception as error:  # noqa: BLE001 - one file never stops the batch
        sub.error = (f"{sub.file or 'Your submission'} could not be read ({type(error).__name__}). Save it "
                     f"again (from Jupyter for a notebook) and resubmit.")
        sub.unreadable = True
    if sub.error:
        sub.cells, sub.modules = [], {}
        # never read: what decides its result is why
        sub.sha256 = hashlib.sha256(f"unread: {sub.error}".encode("utf-8", "replace")).hexdigest()
    return sub
