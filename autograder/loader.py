"""Finds submissions and reads them into the code cells a worker will run (parsing only, no execution)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

SUFFIXES = (".ipynb", ".py")


@dataclass
class Submission:
    """One student's file: its id (file name without extension, made unique), its code cells, or why
    it could not be read."""

    id: str
    path: Path
    cells: list[str] = field(default_factory=list)
    error: str = ""
    sha256: str = ""
    # The code cells (indices into `cells`) the lesson itself expects to raise: tagged raises-exception,
    # as the "What goes wrong here?" exercises are. Their errors are not the student's to fix.
    expected_errors: list[int] = field(default_factory=list)


class NoSubmissions(ValueError):
    pass


def discover(paths: list[Path]) -> list[Path]:
    """The submission files named, or found inside the folders named (sorted, checkpoints skipped)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file()
                            and ".ipynb_checkpoints" not in p.parts and not p.name.startswith("."))
        elif path.is_file() and path.suffix in SUFFIXES:
            found.append(path)
        elif not path.exists():
            raise NoSubmissions(f"{path} does not exist. Name notebooks (.ipynb), Python files (.py) or "
                                f"folders that hold them.")
        else:
            raise NoSubmissions(f"{path} is neither a notebook (.ipynb) nor a Python file (.py) nor a folder.")
    if not found:
        raise NoSubmissions("No submissions found: name notebooks (.ipynb), Python files (.py) or folders "
                            "holding them.")
    return found


def unique_ids(paths: list[Path]) -> list[str]:
    """File names without extension; a name seen before gets -2, -3, ... in the order given."""
    ids, seen = [], set()
    for path in paths:
        base, candidate, n = path.stem, path.stem, 1
        while candidate in seen:
            n += 1
            candidate = f"{base}-{n}"
        seen.add(candidate)
        ids.append(candidate)
    return ids


def strip_magics(source: str) -> str | None:
    """The cell without IPython magics and shell escapes; None for a whole-cell magic (%%...)."""
    if source.lstrip().startswith("%%"):
        return None
    kept = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(kept)


def read_cells(path: Path) -> list[str]:
    """A .py file is one cell; a notebook's code cells in order. Raises ValueError when unreadable."""
    raw = path.read_bytes()
    if path.suffix == ".py":
        return [raw.decode("utf-8", errors="replace")]
    try:
        nb = json.loads(raw)
        cells = nb["cells"]
        sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                   for c in cells if c.get("cell_type") == "code"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path.name} is not a readable Jupyter notebook ({type(error).__name__}: "
                         f"{str(error)[:200]}). Save it again from Jupyter and resubmit.") from None
    return [s for s in (strip_magics(src) for src in sources) if s is not None]


def expected_errors(path: Path) -> list[int]:
    """The code cells of a notebook tagged raises-exception, numbered as read_cells numbers them."""
    if path.suffix != ".ipynb":
        return []
    try:
        cells = json.loads(path.read_bytes())["cells"]
        found, index = [], 0
        for cell in cells:
            if cell.get("cell_type") != "code":
                continue
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if strip_magics(source) is None:
                continue
            tags = (cell.get("metadata") or {}).get("tags") or []
            if isinstance(tags, list) and "raises-exception" in tags:
                found.append(index)
            index += 1
        return found
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def load(paths: list[Path]) -> list[Submission]:
    files = discover(paths)
    subs = []
    for path, sid in zip(files, unique_ids(files)):
        sub = Submission(sid, path)
        try:
            sub.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
            sub.cells = read_cells(path)
            sub.expected_errors = expected_errors(path)
        except (OSError, ValueError) as error:
            sub.error = str(error)
        subs.append(sub)
    return subs
