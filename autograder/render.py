"""Draws results: heat maps and graphs as inline SVG, HTML through the Jinja2 templates, plain text.

One renderer serves the inline check() and the batch grader's feedback pages. Pictures are drawn
deterministically (fixed SVG ids, no dates) so that notebook outputs reproduce.

Everything a worker sent (messages, tracebacks, printed output, graph labels, numbers) is untrusted:
the templates autoescape every value, and the only markup passed through unescaped (`|safe`) is what
this module builds, the report fragment and the pictures, in which every text is escaped here (heat
maps) or by Graphviz from a label graphs.py made plain text. A picture that cannot be drawn becomes a
line of text, never an error.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from html import escape

from autograder.graphs import Graph, svg
from autograder.judge import CheckResult, Figure


@lru_cache(maxsize=1)
def _templates():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("autograder", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True))
    env.globals["figure_svgs"] = figure_svgs
    return env


CELL, GAP, TITLE = 9, 28, 18  # pixels: one matrix entry, space between panels, caption height


def _colour(value: float, scale: float) -> str:
    """Diverging blue-white-red: white where the value is 0, so a difference panel shows only errors."""
    if math.isnan(value):  # before the clamp, which would make it +1 (min(1.0, nan) is 1.0)
        return "#000000"
    t = max(-1.0, min(1.0, value / scale)) if scale else 0.0
    fade = round(255 * (1 - abs(t)))
    return f"#ff{fade:02x}{fade:02x}" if t > 0 else f"#{fade:02x}{fade:02x}ff"


def heatmaps_svg(figure: Figure) -> str:
    """Side-by-side heat maps of equally shaped matrices on one colour scale, drawn as plain SVG
    rectangles (fast, and the same bytes on every run)."""
    panels = [(str(caption), _rows(matrix)) for caption, matrix in figure.panels]
    finite = [abs(v) for _, m in panels for row in m for v in row if math.isfinite(v)]
    scale = max(finite, default=0.0) or 1.0
    rows = max(len(m) for _, m in panels)
    cols = max((len(m[0]) if m else 0) for _, m in panels)
    cell = max(3, min(CELL, 360 // max(rows, cols, 1)))
    width = len(panels) * (cols * cell + GAP)
    height = TITLE + rows * cell + 22
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">')]
    for p, (caption, m) in enumerate(panels):
        x0 = p * (cols * cell + GAP)
        parts.append(f'<text x="{x0}" y="12">{escape(caption)}</text>')
        parts.append(f'<rect x="{x0}" y="{TITLE}" width="{cols * cell}" height="{rows * cell}" fill="none" stroke="#999"/>')
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                colour = _colour(v, scale)
                if colour != "#ffffff":
                    parts.append(f'<rect x="{x0 + j * cell}" y="{TITLE + i * cell}" width="{cell}" height="{cell}" '
                                 f'fill="{colour}"><title>[{i}, {j}] = {v:.6g}</title></rect>')
    parts.append(f'<text x="0" y="{height - 4}" fill="#555">blue -{scale:.3g} · white 0 · red +{scale:.3g}; '
                 f'rows: entries of the output, columns: entries of the input</text></svg>')
    return "".join(parts)


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def _rows(matrix) -> list[list[float]]:
    """A matrix (nested lists, a vector or a number) as rows of floats; what is not a number is NaN."""
    if not isinstance(matrix, list):
        return [[_number(matrix)]]
    return [[_number(v) for v in row] if isinstance(row, list) else [_number(row)] for row in matrix]


@lru_cache(maxsize=512)
def _graph_svg(key: str) -> str:
    return svg(Graph.from_dict(json.loads(key)))


def graph_svg(data: dict) -> str:
    """A graph (as plain data, untrusted: see Graph.from_dict) drawn by Graphviz's dot, once per distinct
    graph: the reference's graph and the graphs of common answers recur in every feedback page of a
    class, and each dot run costs tens of milliseconds."""
    return _graph_svg(json.dumps(Graph.from_dict(data).to_dict(), sort_keys=True))


def figure_svgs(figure: Figure) -> list[tuple[str, str]]:
    """(caption, svg) pairs for one figure; a figure that cannot be drawn gives a line of text."""
    try:
        if figure.kind == "heatmaps":
            return [("", heatmaps_svg(figure))]
        return [(str(caption), graph_svg(data)) for caption, data in figure.panels if data]
    except Exception as error:  # noqa: BLE001 - a picture is never worth a failed page
        note = escape(f"(this picture could not be drawn: {type(error).__name__})")
        picture = (f'<svg xmlns="http://www.w3.org/2000/svg" width="420" height="20" font-family="sans-serif" '
                   f'font-size="11"><text x="0" y="14">{note}</text></svg>')
        return [("", picture)]


def html_report(results: list[CheckResult], title: str = "", show_hidden: bool = True) -> str:
    """The pass/fail table with diagnoses and pictures, as an HTML fragment."""
    shown = [r for r in results if show_hidden or not r.hidden]
    return _templates().get_template("report.html.j2").render(results=shown, title=title)


def text_report(results: list[CheckResult], show_hidden: bool = True) -> str:
    lines = []
    for r in results:
        if r.hidden and not show_hidden:
            continue
        mark = "PASS" if r.passed else "FAIL"
        lines.append(f"{mark}  {r.name:<40} {r.score:g}/{r.max_score:g}")
        if r.message:
            lines.append(f"      {r.message}")
    total = sum(r.score for r in results if show_hidden or not r.hidden)
    best = sum(r.max_score for r in results if show_hidden or not r.hidden)
    lines.append(f"score {total:g}/{best:g}")
    return "\n".join(lines)


def feedback_page(submission: str, assignment: str, results: list[CheckResult], cells: list[dict],
                  output: str, show_hidden: bool = False) -> str:
    """One self-contained page for a student: table, diagnoses, pictures, cell errors, printed output.
    Hidden problems and checks are left out (they are in results.json and grades.csv for instructors)."""
    shown = [r for r in results if show_hidden or not r.hidden]
    return _templates().get_template("feedback.html.j2").render(
        submission=submission, assignment=assignment, results=shown, cells=cells, output=output,
        score=sum(r.score for r in shown), max_score=sum(r.max_score for r in shown),
        report=html_report(shown))
