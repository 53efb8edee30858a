"""Gradescope's feedback: each test's output and the submission-wide summary, as html, md or text,
with heat maps and autograd graphs as PNG data addresses within a byte budget for the whole results.json."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograder.cells import shortened
from autograder.config import MAX_CELL_ERROR, MAX_PRINTED
from autograder.report.figures import picture
from autograder.report.markup import render
from autograder.report.png import data_uri, figure_pngs
from autograder.results import subtotals

if TYPE_CHECKING:
    from autograder.report.files import Graded

PACKAGE = Path(__file__).resolve().parent.parent


class Pictures:
    """PNG data addresses within a byte budget for the whole results.json."""

    def __init__(self, budget: int):
        self.left = budget
        self.skipped = 0

    def take(self, png: bytes) -> str | None:
        uri = data_uri(png)
        if len(uri) > self.left:
            self.skipped += 1
            return None
        self.left -= len(uri)
        return uri


def strip_grader_frames(text: str) -> str:
    """A traceback without the grader's own frames (their paths and code are no business of students')."""
    out, skip = [], False
    for line in text.splitlines():
        if line.startswith('  File "'):
            skip = f'"{PACKAGE}' in line or '"/autograder/source/' in line
        elif not line.startswith("    "):
            skip = False
        if not skip:
            out.append(line)
    return "\n".join(out)


def render_test(r, fmt: str, pictures: Pictures, graphs_shown: set[str]) -> str:
    """A test's explanation in Gradescope's output format: what the check asks, what is wrong, the
    pictures (heat maps and autograd graphs as PNG), and torch's own words."""
    from autograder.judge.checks import BY_NAME

    asks = BY_NAME[r.check].question if r.check in BY_NAME else ""
    lead = (f"Passed: {asks}." if r.passed else r.message) if asks else (r.message or "Passed.")
    if r.passed and r.message and asks:
        lead += " " + r.message  # a note that costs nothing
    blocks: list[tuple[str, object]] = [("p", lead)]
    if not r.passed and asks:
        blocks.append(("p", f"This check asks that {asks}."))
    for figure in r.figures if not r.passed and fmt != "text" else []:
        if figure.kind == "graphs":
            if r.problem in graphs_shown:
                blocks.append(("p", (f"(The graphs of {r.problem}'s backward are shown under an "
                                     f"earlier check.)")))
                continue
            graphs_shown.add(r.problem)
        drawn = picture(figure)
        images = [(caption, pictures.take(png), width, height)
                  for caption, png, width, height in figure_pngs(drawn)]
        blocks.append(("figure", (drawn, images)))
    if r.details:
        blocks.append(("pre", strip_grader_frames(r.details)))
    if fmt == "text" and any(f.kind for f in r.figures) and not r.passed:
        blocks.append(("p", "Run check() in your notebook to see the pictures of this failure."))
    return render(blocks, fmt)


def summary(assignment, files: list[Graded], chosen: list, source: dict[str, str], fmt: str,
            skipped_pictures: int, about: list[str] = ()) -> str:
    """The submission-wide output: what was graded (`about`: the file graded and those ignored), a line
    per problem students may see, the cells skipped or that raised and what the code printed. Hidden
    problems and checks are left out of every line; the score says how many points they hold."""
    shown = [r for r in chosen if not r.hidden]
    blocks: list[tuple[str, object]] = []
    hidden = sum(r.max_score for r in chosen if r.hidden)
    total = (f"{assignment.name}: {sum(r.score for r in shown):g} / {sum(r.max_score for r in shown):g} "
             f"points")
    blocks.append(("p", total + (f" on the tests shown here; {hidden:g} more points are in hidden tests, "
                                 f"graded but not shown here." if hidden else ".")))
    if about:
        blocks.append(("list", list(about)))
    for f in files:
        if f.flag is not None and f.flag.shown():
            said = (f"Flagged for your instructor: {f.submission} reaches into the grader's own code (the "
                    f"frames, objects, modules or channel of the process that measures your Functions), "
                    f"which no Function needs. The problems it may have touched score nothing until your "
                    f"instructor reviews it. Where:")
            blocks.append(("p", said))
            blocks.append(("list", [e.describe() for e in f.flag.shown()]))
    lines = []
    names = [p.name for p in assignment.problems]
    scores, points = subtotals(shown, names), subtotals(shown, names, "max_score")
    for name in names:
        mine = [r for r in shown if r.problem == name]
        if not mine:
            continue
        failed = [r.check for r in mine if not r.passed]
        state = "every check passes" if not failed else "failed: " + ", ".join(failed)
        lines.append(f"{name}: {scores[name]:g}/{points[name]:g}, {state}"
                     + (f" (from {source[name]})" if len(files) > 1 else ""))
    blocks.append(("list", lines))
    if not files:
        blocks.append(("p", ("No notebook (.ipynb) or Python file (.py) was found in your submission. Upload "
                            "your lesson notebook, e.g. 02-custom-functions.ipynb, and submit again.")))
    elif not about:
        names = ", ".join(f.submission for f in files)
        blocks.append(("p", f"Graded {names}." + (" With several files, each problem is graded from the file "
                                                  "where it scored best." if len(files) > 1 else "")))
    blocks.append(("p", ("Each test below is one check. A failed check says what is wrong and, where it "
                        "helps, shows heat maps of your numbers next to the right ones (the difference is "
                        "white where you are right) and the autograd graph your backward built next to the "
                        "reference's. "
                        "check(Name) in your notebook gives the same verdicts while you work.")))
    if skipped_pictures:
        blocks.append(("p", (f"{skipped_pictures} picture(s) were left out to keep these results small; "
                            f"check() in your notebook draws them all.")))
    for f in files:
        for cell in f.cell_errors:
            name = cell.get("name") or f"Cell {cell['index']}"
            if cell.get("type") == "skipped":
                blocks.append(("p", f"{f.submission}: {cell['error']}"))
                continue
            blocks.append(("p", f"{f.submission}: {name} raised an error; later cells still ran."))
            blocks.append(("pre", shortened(strip_grader_frames(str(cell["error"])), MAX_CELL_ERROR)))
        if f.output.strip():
            text = f.output if len(f.output) <= MAX_PRINTED else f.output[:MAX_PRINTED] + "\n[... cut ...]"
            blocks.append(("p", f"What {f.submission} printed while it was graded:"))
            blocks.append(("pre", text))
    return render(blocks, fmt)
