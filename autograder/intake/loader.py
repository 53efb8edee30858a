"""Finds submissions and reads them into the code cells a worker will run (parsing only, no execution).

Everything here reads untrusted files as root, so:

- only regular files are read: a symbolic link among the submissions (to a file or a folder) becomes
  that submission's error and is never followed, in discovery or when reading (O_NOFOLLOW, and the
  file opened must be the one discovery saw); named pipes, devices and sockets are refused the same way.
  A folder named on the command line is the instructor's choice and is entered even if it is a link;
- a file over MAX_BYTES is refused from its size (fstat of the opened file), never read whole;
- whatever is wrong with one file (bad JSON, cells that are not objects, a `source` that is not text,
  nesting deep enough to exhaust the recursion limit, invalid UTF-8, ...) becomes that submission's
  error: load() never raises for one file;
- ids never collide with one another (ignoring case) or with the grader's own files in the output
  folder (grades.csv, canvas.csv, report.html, hidden files...).

A notebook's code cells run as Jupyter runs them: each cell goes through IPython's own input
transformer (IPython.core.inputtransformer2, as in the kernel), and what would reach outside Python
does nothing instead:

- line magics (`%matplotlib inline`, `%load_ext ...`, `%pip ...`), shell escapes (`!ls`, `x = !ls`,
  which gives []) and help (`obj?`) are replaced by a no-op in place, so the rest of the cell and its
  line numbers stay as Jupyter has them; `%time stmt` runs its statement, as in Jupyter; `%timeit` does
  not (its loop would only cost grading time, and its assignments do not persist in Jupyter either);
- a cell magic whose body Jupyter runs in the notebook itself runs its body: `%%time`, `%%capture` (the
  output is not captured, and its variable, `%%capture out`, is not set) and `%%prun`; every other cell
  magic leaves an empty cell: `%%bash`, `%%script`, `%%html`, `%%javascript`, `%%latex`, `%%timeit`
  and `%%writefile` / `%%file` (the file is not written: put the code in the notebook itself, or hand
  the module in beside it);
- a cell IPython's transformer cannot handle is run as written (a SyntaxError in that cell, as in
  Jupyter).

IPython's transformer reads a cell once (about a second per MB), and again for every magic it replaces,
so a notebook of many magics in long cells could keep the grader busy for minutes: the characters it
reads for one submission are counted, and a submission that needs more than MAX_TRANSFORM_CHARS (a
lesson's notebook needs about 15,000) gets an error naming the cell.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import io
import json
import os
import re
import stat
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from autograder.intake import layouts
from autograder.intake.layouts import Discovery, Found, NoSubmissions  # noqa: F401 - NoSubmissions: the loader's error

SUFFIXES = (".ipynb", ".py")
MAX_BYTES = 20 * 1024 * 1024  # one notebook or .py file; larger ones are refused unread
MAX_TRANSFORM_CHARS = 1_000_000  # characters IPython's transformer may read for one submission (~5 s)
MAX_ID_BYTES = 200  # a file name may have 255; room for a "-2" and for file systems that count otherwise
# Names the grader writes in the output folder, or may: an id that looks like one of them is taken.
GRADER_NAMES = ("grades.csv", "canvas.csv", "report.html", "index.html")
GRADER_SUFFIXES = (".csv", ".html", ".json", ".zip", ".tmp")
RUN_BODY = ("time", "capture", "prun")  # cell magics whose body Jupyter runs in the notebook's namespace
_IPYTHON_SYNTAX = re.compile(r"[%!?]|^[ \t\f]*[,;/]", re.MULTILINE)  # what IPython's token transforms need


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
    where: str = ""  # for the instructor only: where it was found (never shown to the student)
    ignored: list[str] = field(default_factory=list)  # other notebooks of the student, not graded
    unreadable: bool = False  # the file (or folder) could not be read at all: the instructor is told
    # The code cells (indices into `cells`) the lesson itself expects to raise: tagged raises-exception,
    # as the "What goes wrong here?" exercises are. Their errors are not the student's to fix.
    expected_errors: list[int] = field(default_factory=list)

    @property
    def file(self) -> str:
        """The graded file's name (never a path of the instructor's machine)."""
        return self.path.name if self.path is not None else ""


class Unreadable(ValueError):
    """Why one submission cannot be graded, in words for the student."""


# -- finding submissions --------------------------------------------------------------------------------

def discover(paths: list[Path], prefer: tuple[str, ...] = ()) -> Discovery:
    """The submissions named, or found inside the folders and zips named (layouts.py): symbolic links and
    other files that are not regular files are listed when their name (or the folder they point to)
    makes them look like a submission, so that load() refuses them by name, but never followed."""
    return layouts.discover(paths, prefer)


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

def read_file(path: Path) -> bytes:
    """The bytes of a regular file, read without following a link and only when under MAX_BYTES."""
    try:
        before = os.lstat(path)
    except OSError as error:
        raise Unreadable(f"{path.name} could not be read ({error.strerror}).") from None
    if stat.S_ISLNK(before.st_mode):
        raise Unreadable(_LINK.format(name=path.name))
    if not stat.S_ISREG(before.st_mode):
        raise Unreadable(_NOT_A_FILE.format(name=path.name))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Unreadable(_LINK.format(name=path.name)) from None
        raise Unreadable(f"{path.name} could not be read ({error.strerror}).") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            raise Unreadable(f"{path.name} was replaced while the grader was reading it, so it was not read.")
        if opened.st_size > MAX_BYTES:
            raise Unreadable(_TOO_BIG.format(name=path.name, size=opened.st_size / 2**20, limit=MAX_BYTES // 2**20))
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, MAX_BYTES + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_BYTES:  # grew while being read
                raise Unreadable(_TOO_BIG.format(name=path.name, size=total / 2**20, limit=MAX_BYTES // 2**20))
        return b"".join(chunks)
    finally:
        os.close(fd)


_LINK = ("{name} is a symbolic link, which the grader does not follow: it reads only regular files. Submit the "
         "notebook (or .py file) itself, not a link to it.")
_NOT_A_FILE = ("{name} is not a regular file (a named pipe, a device, a socket...): submit the notebook (or .py "
               "file) itself.")
_TOO_BIG = ("{name} is {size:.1f} MB, over the grader's limit of {limit} MB for one file, so it was not read. "
            "Its outputs are probably what is big: clear them (Edit > Clear Outputs of All Cells in Jupyter), "
            "save and resubmit.")


def read_cells(path: Path) -> list[str]:
    """A .py file is one cell; a notebook's code cells in order, as Jupyter runs them. Raises ValueError
    (Unreadable) when unreadable."""
    return cells_of(path.name, path.suffix, read_file(path))


def cells_of(name: str, suffix: str, raw: bytes) -> list[str]:
    if suffix == ".py":
        return [python_text(raw)]
    sources = notebook_sources(name, raw)
    budget = _Budget(name)
    return [jupyter_code(source, budget, index + 1) for index, source in enumerate(sources)]


def python_text(raw: bytes) -> str:
    """A .py file's text, decoded as Python decodes it (UTF-8 unless a coding line says otherwise);
    undecodable bytes become U+FFFD."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return raw.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return raw.decode("utf-8", errors="replace")


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


# -- what Jupyter runs ----------------------------------------------------------------------------------

class _Budget:
    """The characters IPython's transformer may still read for one submission."""

    def __init__(self, name: str, chars: int = MAX_TRANSFORM_CHARS):
        self.name, self.left = name, chars

    def spend(self, chars: int, cell: int) -> None:
        self.left -= chars
        if self.left < 0:
            raise Unreadable(f"{self.name}: cell {cell} takes the grader past its limit on the code it reads "
                             f"for one notebook ({MAX_TRANSFORM_CHARS:,} characters). IPython's transformer reads a "
                             f"cell once, and again for each piece of IPython syntax it replaces (magics, ! "
                             f"commands, ?): keep code cells short and such syntax rare, and resubmit.")


def _manager():
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


def jupyter_code(source: str, budget: _Budget | None = None, cell: int = 1) -> str:
    """The Python that runs for one code cell: IPython's transformation of it, with every call it makes
    into IPython (magics, shell escapes, help) replaced by a no-op, and cell magics run or skipped as
    the module docstring says. Raises Unreadable only when the budget runs out."""
    budget = budget or _Budget("the notebook")
    manager = _manager()  # IPython missing is the grader's fault: said loudly, never silently skipped
    try:
        while True:  # cell magics, %%time inside %%capture included: each body is read again
            budget.spend(len(source), cell)
            if not source.endswith("\n"):
                source += "\n"
            lines = source.splitlines(keepends=True)
            for transform in manager.cleanup_transforms:
                lines = transform(lines)
            magic = _cell_magic(manager, lines)
            if magic is None:
                break
            name, line, body = magic
            if name not in RUN_BODY or (name == "time" and line.strip()):  # %%time with a statement: UsageError
                return ""
            source = body
        if not _IPYTHON_SYNTAX.search(source):
            return "".join(lines)
        for _ in range(500):  # IPython's own TRANSFORM_LOOP_LIMIT
            budget.spend(sum(map(len, lines)), cell)
            changed, lines = manager.do_one_token_transform(lines)
            if not changed:
                break
        else:
            return source  # IPython gives up on this cell too
    except Unreadable:
        raise
    except Exception:  # noqa: BLE001 - IPython could not transform it: run it as written, as a SyntaxError will
        return source
    code = "".join(lines)
    if "get_ipython" not in code:
        return code
    budget.spend(len(code), cell)
    return without_ipython_calls(code)


def _cell_magic(manager, lines: list[str]) -> tuple[str, str, str] | None:
    """(name, line, body) when IPython reads the cell as a cell magic."""
    for transform in manager.line_transforms:
        out = transform(lines)
        if out != lines:
            call = ast.parse(out[0]).body[0].value  # get_ipython().run_cell_magic('name', 'line', 'body')
            name, line, body = (ast.literal_eval(arg) for arg in call.args)
            return name, line, body
    return None


def _ipython_call(node: ast.AST) -> str | None:
    """The method name of a call `get_ipython().<method>(...)`, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "get_ipython"):
        return node.func.attr
    return None


def _replacement(node: ast.Call, method: str, statement: bool) -> str:
    if method == "getoutput":  # x = !ls: no output
        return "[]"
    args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
    if method == "run_line_magic" and len(args) == 2 and args[0] == "time" and args[1] and args[1].strip() \
            and "\n" not in args[1] and "\r" not in args[1]:
        return args[1].strip() if statement else f"({args[1].strip()})"  # %time runs what it times
    return "None"


def without_ipython_calls(code: str) -> str:
    """The code with each `get_ipython().<method>(...)` call (what IPython's transformer makes of magics,
    shell escapes and help) replaced in place by a no-op; code that does not parse is left as it is."""
    try:
        tree = ast.parse(code)
    except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError: the worker will say so
        return code
    statements = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    calls = sorted((((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset), node, method)
                    for node in ast.walk(tree) if (method := _ipython_call(node))), key=lambda c: c[0])
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", code)  # the line ends ast counts: \r\n, \n, \r
    chosen, end = [], (0, 0)
    for span, node, method in calls:
        if span[:2] >= end:  # outermost calls only
            chosen.append((span, _replacement(node, method, id(node) in statements)))
            end = span[2:]
    for plain in (False, True):
        result = _replaced(lines, chosen, plain)
        if plain or _parses(result):  # a %time statement that does not parse: plain no-ops instead
            return result
    return code


def _replaced(lines: list[str], chosen: list[tuple[tuple[int, int, int, int], str]], plain: bool) -> str:
    """The lines with each span (ast's lines, UTF-8 byte columns) replaced; with plain, by None."""
    out = list(lines)
    for (line, col, end_line, end_col), text in reversed(chosen):
        if plain or line != end_line:
            text = "None" if line == end_line else "(None" + "\n" * (end_line - line) + ")"
        first, last = out[line - 1].encode("utf-8"), out[end_line - 1].encode("utf-8")
        merged = first[:col].decode("utf-8") + text + last[end_col:].decode("utf-8")
        out[line - 1:end_line] = [merged] + [""] * (end_line - line)
    return "".join(out)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError
        return False
    return True


# -- everything ---------------------------------------------------------------------------------------

def load(paths: list[Path], prefer: tuple[str, ...] = (), warnings: list[str] | None = None) -> list[Submission]:
    """Every submission found in paths, read; one that cannot be read carries its error and no cells.
    Raises NoSubmissions only (nothing to grade). Zips are unpacked into temporary folders, removed once
    everything is read. `warnings` receives what the instructor should know (zip entries refused,
    metadata that could not be read)."""
    discovery = discover(paths, prefer)
    try:
        subs = read_all(discovery.found)
    finally:
        discovery.close()
    if warnings is not None:
        warnings.extend(discovery.warnings)
    return subs


def expected_errors(suffix: str, raw: bytes) -> list[int]:
    """The code cells of a notebook tagged raises-exception (the lesson's own "What goes wrong here?"
    cells, meant to raise), numbered as cells_of numbers them. Anything unexpected gives none."""
    if suffix != ".ipynb":
        return []
    try:
        cells = json.loads(raw.decode("utf-8-sig"))["cells"]
        code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
        return [i for i, cell in enumerate(code)
                if isinstance((cell.get("metadata") or {}).get("tags"), list)
                and "raises-exception" in cell["metadata"]["tags"]]
    except Exception:  # noqa: BLE001 - the errors are then all listed, as before
        return []


def read_all(found: list[Found]) -> list[Submission]:
    ids = unique_names([(f.name, f.tiebreak) for f in found])
    return [read_one(f, sid) for f, sid in zip(found, ids)]


def read_one(found: Found, sid: str) -> Submission:
    """One submission read: its file, its modules; whatever is wrong becomes its error."""
    sub = Submission(sid, found.graded, error=found.error, identity=dict(found.identity), where=found.where,
                     ignored=list(found.ignored), unreadable=found.unreadable)
    digest = hashlib.sha256()
    try:
        if sub.error or found.graded is None:
            sub.error = sub.error or "No notebook (.ipynb) or Python file (.py) was found in your submission."
        else:
            raw = read_file(found.graded)
            sub.cells = cells_of(found.graded.name, found.graded.suffix, raw)
            sub.expected_errors = expected_errors(found.graded.suffix, raw)
            digest.update(raw)
            total = 0
            for name in sorted(found.modules):
                module = read_file(found.modules[name])
                total += len(module)
                if total > MAX_MODULE_BYTES:
                    raise Unreadable(f"The Python files beside {found.graded.name} come to more than the grader's "
                                     f"limit of {MAX_MODULE_BYTES // 2**20} MB, so they were not read.")
                sub.modules[name] = python_text(module)
                digest.update(b"\0module\0" + name.encode("utf-8", "replace") + b"\0" + module)
            sub.sha256 = digest.hexdigest()
    except Unreadable as error:
        sub.error = str(error)
        sub.unreadable = True
    except Exception as error:  # noqa: BLE001 - one file never stops the batch
        sub.error = (f"{sub.file or 'Your submission'} could not be read ({type(error).__name__}). Save it again "
                     f"(from Jupyter for a notebook) and resubmit.")
        sub.unreadable = True
    if sub.error:
        sub.cells, sub.modules = [], {}
        # never read: what decides its result is why
        sub.sha256 = hashlib.sha256(f"unread: {sub.error}".encode("utf-8", "replace")).hexdigest()
    return sub
