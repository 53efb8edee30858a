"""Gradescope's feedback: each test's output and the submission-wide summary, as html, md or text,
with heat maps and autograd graphs as PNG data addresses within a byte budget for the whole results.json."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.config import MAX_CELL_ERROR, MAX_PRINTED

if TYPE_CHECKING:
    from autograder.report.files import Graded

PACKAGE = Path(__file__).resolve().parent.parent


class Pictures:
    """Turns figures into PNG data addresses within a byte budget for the whole results.json."""

    def __init__(self, budget: int):
        self.left = budget
        self.skipped = 0
        self._graphs: dict[str, bytes] = {}

    def take(self, png: bytes) -> str | None:
        from autograder.report.png import data_uri

        uri = data_uri(png)
        if len(uri) > self.left:
            self.skipped += 1
            return None
        self.left -= len(uri)
        return uri

    def graph(self, data: dict) -> bytes:
        from autograder.report.png import graph_png

        key = json.dumps(data, sort_keys=True)
        if key not in self._graphs:
            self._graphs[key] = graph_png(data)
        return self._graphs[key]


def figure_images(figure, pictures: Pictures) -> list[tuple[str, str | None, int, int]]:
    """(caption, data address or None when over budget, width, height) for each panel."""
    from autograder.report import png

    images = []
    if figure.kind == "heatmaps":
        matrices = [png.as_rows(m) for _, m in figure.panels]
        scale = png.scale_of(matrices)
        rows = max(len(m) for m in matrices)
        cols = max((max((len(r) for r in m), default=0) for m in matrices), default=0)
        cell = png.cell_size(rows, cols)
        for (caption, _), matrix in zip(figure.panels, matrices):
            data, width, height = png.heatmap(matrix, scale, cell)
            images.append((caption, pictures.take(data), width, height))
    else:
        for caption, data in figure.panels:
            if data:
                images.append((caption, pictures.take(pictures.graph(data)), 0, 0))
    return images


def _scale_note(figure) -> str:
    from autograder.report import png

    scale = png.scale_of([png.as_rows(m) for _, m in figure.panels])
    legend = getattr(figure, "legend", "") or "Rows are entries of the output, columns entries of the input."
    return f"blue: negative, white: 0, red: positive, full colour at ±{scale:.3g}; black: NaN. {legend}"


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


def _md_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>#|~" else c for c in text)


def _md_code(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def render_test(r, fmt: str, pictures: Pictures, graphs_shown: set[str]) -> str:
    """A test's explanation in Gradescope's output format: what the check asks, what is wrong, the
    pictures (heat maps and autograd graphs as PNG), and torch's own words."""
    from autograder.course.problems import CHECKS

    asks = CHECKS.get(r.check, "")
    lead = (f"Passed: {asks}." if r.passed else r.message) if asks else (r.message or "Passed.")
    if r.passed and r.message and asks:
        lead += " " + r.message  # a note that costs nothing
    blocks: list[tuple[str, object]] = [("p", lead)]
    if not r.passed and asks:
        blocks.append(("p", f"This check asks that {asks}."))
    for figure in r.figures if not r.passed and fmt != "text" else []:
        if figure.kind == "graphs":
            if r.problem in graphs_shown:
                blocks.append(("p", f"(The graphs of {r.problem}'s backward are shown under an earlier check.)"))
                continue
            graphs_shown.add(r.problem)
        images = figure_images(figure, pictures)
        note = _scale_note(figure) if figure.kind == "heatmaps" else \
            "Green: the output; blue: leaf tensors; grey: the operations autograd recorded."
        blocks.append(("figure", (figure.title, images, note)))
    if r.details:
        blocks.append(("pre", strip_grader_frames(r.details)))
    if fmt == "text" and any(f.kind for f in r.figures) and not r.passed:
        blocks.append(("p", "Run check() in your notebook to see the pictures of this failure."))
    return _render(blocks, fmt)


def _render(blocks: list[tuple[str, object]], fmt: str) -> str:
    out = []
    for kind, content in blocks:
        if kind == "figure":
            title, images, note = content
            if fmt == "html":
                parts = [f"<p><b>{html.escape(title)}</b></p><p>"]
                for caption, uri, width, height in images:
                    if uri:
                        size = f' width="{width}" height="{height}"' if width else ""
                        parts.append(f'{html.escape(caption)}: <img src="{uri}" alt="{html.escape(caption)}" '
                                     f'title="{html.escape(caption)}"{size}>&nbsp;&nbsp; ')
                    else:
                        parts.append(f"[{html.escape(caption)}: picture left out, the results are full] ")
                parts.append(f"</p><p><i>{html.escape(note)}</i></p>")
                out.append("".join(parts))
            else:
                lines = [f"**{_md_escape(title)}**", ""]
                for caption, uri, _, _ in images:
                    lines.append(f"{_md_escape(caption)}: ![{_md_escape(caption)}]({uri})" if uri else
                                 f"\\[{_md_escape(caption)}: picture left out, the results are full\\]")
                    lines.append("")
                lines.append(f"*{_md_escape(note)}*")
                out.append("\n".join(lines))
        elif kind == "pre":
            text = str(content)
            out.append(f"<pre>{html.escape(text)}</pre>" if fmt == "html" else _md_code(text) if fmt == "md" else text)
        else:
            text = str(content)
            out.append(f"<p>{html.escape(text)}</p>" if fmt == "html" else _md_escape(text) if fmt == "md" else text)
    return ("\n" if fmt == "html" else "\n\n").join(out)


def summary(assignment, files: list[Graded], chosen: list, source: dict[str, str], fmt: str,
            skipped_pictures: int) -> str:
    """The submission-wide output: what was graded, a line per problem students may see, the cells that
    raised and what the code printed. Hidden problems and checks are left out of every line."""
    shown = [r for r in chosen if not r.hidden]
    blocks: list[tuple[str, object]] = []
    if not any(r.hidden for r in chosen):
        blocks.append(("p", (f"{assignment.name}: {sum(r.score for r in chosen):g} / "
                            f"{sum(r.max_score for r in chosen):g} points.")))
    lines = []
    for problem in assignment.problems:
        mine = [r for r in shown if r.problem == problem.name]
        if not mine:
            continue
        failed = [r.check for r in mine if not r.passed]
        state = "every check passes" if not failed else "failed: " + ", ".join(failed)
        lines.append(f"{problem.name}: {sum(r.score for r in mine):g}/{sum(r.max_score for r in mine):g}, {state}"
                     + (f" (from {source[problem.name]})" if len(files) > 1 else ""))
    blocks.append(("list", lines))
    if not files:
        blocks.append(("p", ("No notebook (.ipynb) or Python file (.py) was found in your submission. Upload "
                            "your lesson notebook, e.g. 02-custom-functions.ipynb, and submit again.")))
    else:
        names = ", ".join(f.submission for f in files)
        blocks.append(("p", f"Graded {names}." + (" With several files, each problem is graded from the file "
                                                  "where it scored best." if len(files) > 1 else "")))
    blocks.append(("p", ("Each test below is one check. A failed check says what is wrong and, where it helps, "
                        "shows heat maps of your numbers next to the right ones (the difference is white where "
                        "you are right) and the autograd graph your backward built next to the reference's. "
                        "check(Name) in your notebook gives the same verdicts while you work.")))
    if skipped_pictures:
        blocks.append(("p", (f"{skipped_pictures} picture(s) were left out to keep these results small; "
                            f"check() in your notebook draws them all.")))
    for f in files:
        for cell in f.cell_errors:
            blocks.append(("p", f"{f.submission}: cell {cell['index']} raised an error; later cells still ran."))
            blocks.append(("pre", strip_grader_frames(str(cell["error"]))[-MAX_CELL_ERROR:]))
        if f.output.strip():
            text = f.output if len(f.output) <= MAX_PRINTED else f.output[:MAX_PRINTED] + "\n[... cut ...]"
            blocks.append(("p", f"What {f.submission} printed while it was graded:"))
            blocks.append(("pre", text))
    rendered = []
    for kind, content in blocks:
        if kind == "list":
            if fmt == "html":
                rendered.append("<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in content) + "</ul>")
            else:
                rendered.append("\n".join(f"- {_md_escape(line) if fmt == 'md' else line}" for line in content))
        else:
            rendered.append(_render([(kind, content)], fmt))
    return ("\n" if fmt == "html" else "\n\n").join(rendered)
