"""The notebook's cells as a student reads about them: the cell a run stopped in (it killed the worker,
exited, or ran past the time for running the notebook), which the pipeline then leaves out to grade the
Functions around it (`to_skip`); then, in one step (`cleaned`), the cells' outcome as the student reads
it: the errors numbered as Jupyter shows the cells, without the grader's paths, tracebacks with the
student's frames only; and why the code after a failing cell never ran (`hint`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from autograder.intake.loader import Submission
from autograder.sandbox import Outcome

# How the sandbox says the cells stopped (sandbox/job.py): the cell is the 1-based code cell.
_STOPPED = re.compile(r"Your (?:program (?P<cause>.+?) while running|code did not finish running) "
                      r"cell (?P<cell>\d+)\b(?: within (?P<limit>[\d.]+) s)?", re.DOTALL)
MAX_SKIPPED = 3  # cells left out of one notebook: each costs a run of the notebook, up to its time limit
SKIPPED = "skipped"  # the `type` of a cell error that records a skipped cell


def name(sub: Submission, cell: int) -> str:
    """A code cell (1-based) named as Jupyter shows it: "Cell 44 (code cell 22)" in a notebook, "Cell 3"
    when the notebook's own numbering is not known."""
    if 0 < cell <= len(sub.positions) and sub.positions[cell - 1] != cell:
        return f"Cell {sub.positions[cell - 1]} (code cell {cell})"
    return f"Cell {cell}"


def first_line(source: str) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip() and not s.lstrip().startswith("#")), "")
    return line if len(line) <= 80 else line[:77] + "..."


def stopped(outcome: Outcome) -> tuple[int, str] | None:
    """(the code cell, 1-based, that stopped the cells running, what happened) when the worker died,
    exited or ran out of time while running the cells, before anything was measured; else None."""
    if outcome.data or outcome.explanations:
        return None
    for reason in outcome.failures.values():
        found = _STOPPED.search(reason)
        if found:
            cause = found["cause"] or (f"ran past the grader's time limit of {found['limit']} s for running "
                                       f"the notebook (an endless loop, or work too long for grading, such "
                                       f"as a training loop)")
            return int(found["cell"]), cause
    return None


def to_skip(sub: Submission, cells: list[str], outcome: Outcome, skipped: int) -> dict | None:
    """When the run (of cells, after `skipped` cells were left out) stopped in a code cell that can be
    left out in a new run: the cell error that tells the student which (its "index") and why; else None."""
    found = stopped(outcome)
    if found is None or skipped >= MAX_SKIPPED or len(cells) < 2:
        return None
    cell, cause = found
    if not (0 < cell <= len(cells) and cells[cell - 1].strip()):
        return None
    code = first_line(sub.cells[cell - 1]) if cell <= len(sub.cells) else ""
    which = f"{name(sub, cell)}, which starts with `{code}`," if code else name(sub, cell)
    return {"index": cell, "type": SKIPPED,
            "error": f"{which} {cause}, so it was skipped: the notebook was run again without it, and the "
                     f"Functions defined before and after it were graded. Remove or shorten that cell before "
                     f"you hand in."}


def cleaned(sub: Submission, outcome: Outcome, skipped: list[dict], spent: float,
            private: Callable[[str], str]) -> Outcome:
    """The cells' outcome as the student reads it, made in one step: the errors of the lesson's own
    raises-exception cells left out (they are meant to raise), the cells skipped first (`to_skip`'s
    notes), each error named as Jupyter numbers the cells ("Cell 44 (code cell 22)"), the grader's paths
    out of what the cells printed and raised (`private`: pipeline.Private), tracebacks with the
    student's frames only; the seconds of the runs that stopped in a skipped cell added (`spent`)."""
    expected = set(sub.expected_errors)
    errors = [*skipped, *(c for c in outcome.cell_errors if c.get("index", 0) - 1 not in expected)]
    for error in errors:
        error["name"] = name(sub, int(error.get("index", 0)))
        error["error"] = private(str(error.get("error", "")))
        if error.get("type") != SKIPPED:
            error["error"] = student_frames(error["error"], sub)
    outcome.cell_errors, outcome.output = errors, private(outcome.output)
    outcome.seconds += spent
    return outcome


def hint(sub: Submission | None, error: dict) -> str:
    """Why the code after a failing cell never ran, in a sentence naming the cause."""
    index, kind, text = error.get("index", 0), str(error.get("type", "")), str(error.get("error", ""))
    cell = name(sub, index) if sub is not None else f"Cell {index}"
    if kind == SKIPPED:
        return " " + text
    if kind == "SystemExit":
        return (f" {cell} called sys.exit() or exit() (SystemExit), which ends the program: "
                f"nothing after it in that cell ran. Remove the call.")
    if kind == "MemoryError":
        return (f" {cell} ran out of memory (MemoryError: it reached the grader's memory limit), "
                f"so nothing after that point ran.")
    if kind == "RecursionError":
        return (f" {cell} recursed without end (RecursionError: maximum recursion depth exceeded), so "
                f"nothing after that point ran.")
    if kind == "BlockingIOError" and "Resource temporarily unavailable" in text:
        return (f" {cell} could not start another process (BlockingIOError): it reached the grader's "
                f"limit on processes, e.g. by forking without end, so nothing after that point ran.")
    return f" {cell} raised an error ({kind or 'see below'}; see below), which may be why."


_FRAME = re.compile(r'^  File "(?P<file>[^"]*)", line \d+')


def _students(file: str) -> bool:
    """A frame in the student's code: a cell, or a module of theirs (a relative path once the grader's
    folders are taken out); not the grader's, Python's or a library's."""
    return file.startswith("<cell ") or file == "<string>" or not (
        file.startswith(("/", "<", "~", "autograder/")) or "site-packages/" in file)


def student_frames(text: str, sub: Submission | None = None) -> str:
    """A cell's traceback with the student's frames only: the grader's own frame (the one that ran the
    cell) left out, Python's and the libraries' left out and counted; its start and error line kept;
    cells numbered as Jupyter shows them (`<cell 44>` for the 22nd code cell)."""
    if sub is not None and sub.positions:
        def renumber(found: re.Match) -> str:
            index = int(found[1])
            return f'"<cell {sub.positions[index - 1] if 0 < index <= len(sub.positions) else index}>"'

        text = re.sub(r'"<cell (\d+)>"', renumber, text)
    out, keep, library, frames = [], True, 0, 0
    for line in text.splitlines():
        frame = _FRAME.match(line)
        if frame:
            keep = _students(frame["file"])
            frames += keep
            library += not keep and "autograder/" not in frame["file"]
        elif not line.startswith("    "):
            keep = True
        if keep:
            out.append(line)
    header = 1 if out and out[0].startswith("Traceback") else 0
    if library:
        out.insert(header, f"  [{library} frame(s) of Python's or a library's code left out]")
    elif header and frames <= 1 and re.match(r"(SyntaxError|IndentationError|TabError)\b", out[-1]):
        out.pop(0)  # the cell never ran: Python shows a SyntaxError without a traceback
    if out and not out[0].startswith(("Traceback", "  File", "  [")) and len(text) >= 3900:
        out.insert(0, "[the start of this traceback was cut: it was too long]")
    return "\n".join(out)


def shortened(text: str, limit: int) -> str:
    """Text within limit characters, its start (the cell, the first frames) and its end (the error line)
    kept."""
    if len(text) <= limit:
        return text
    half = (limit - 40) // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters left out ...]\n{text[-half:]}"
