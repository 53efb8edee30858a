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

from autograder.judge.findings import Figure
from autograder.judge.verdicts import CheckResult
from autograder.measure.graphs import Graph, svg


@lru_cache(maxsize=1)
def _templates():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("autograder.report", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True))
    env.globals["figure_svgs"] = figure_svgs
    return env


CELL, GAP, TITLE = 9, 28, 18  # pixels: one matrix entry (at most), space between panels, caption height
MIN_CELL, MAX_CELL, VALUE_CELL = 8, 24, (48, 22)  # a square never smaller than 8 px; with its value, 48 x 22
CHAR = 6.6  # about one character's width at 11 px, to keep captions and legends inside the picture


def _colour(value: float, scale: float) -> str:
    """Diverging blue-white-red: white where the value is 0, so a difference panel shows only errors."""
    if math.isnan(value):  # before the clamp, which would make it +1 (min(1.0, nan) is 1.0)
        return "#000000"
    t = max(-1.0, min(1.0, value / scale)) if scale else 0.0
    fade = round(255 * (1 - abs(t)))
    return f"#ff{fade:02x}{fade:02x}" if t > 0 else f"#{fade:02x}{fade:02x}ff"


def _shown(v: float, scale: float) -> str:
    """A value as printed in its square: three significant digits; 0 for what is rounding next to the
    picture's largest value (a difference of 1e-11 between finite differences and backward)."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if abs(v) < 1e-6 * scale:
        return "0"
    text = f"{v:.3g}"
    return "0" if text in ("0", "-0") else text


def heatmaps_svg(figure: Figure) -> str:
    """Side-by-side heat maps of equally shaped matrices on one colour scale, drawn as plain SVG
    rectangles (fast, and the same bytes on every run): captions above, sized to fit, and a legend below
    saying what the colours and the squares are. Small tensors carry their values in their squares."""
    panels = [(str(caption), _rows(matrix)) for caption, matrix in figure.panels]
    finite = [abs(v) for _, m in panels for row in m for v in row if math.isfinite(v)]
    scale = max(finite, default=0.0) or 1.0
    rows = max(len(m) for _, m in panels)
    cols = max((max((len(r) for r in m), default=0) for _, m in panels), default=0)
    values = bool(getattr(figure, "values", False))
    if values:
        cw, ch = VALUE_CELL
    else:
        cw = ch = max(MIN_CELL, min(MAX_CELL, 360 // max(rows, cols, 1)))
    widths = [max(cols * cw, int(len(caption) * CHAR) + 4) for caption, _ in panels]
    key = f"blue: negative, white: 0, red: positive (full colour at ±{scale:.3g}); black: NaN."
    legend = str(getattr(figure, "legend", "") or "Rows: entries of the output; columns: entries of the input.")
    width = max(sum(widths) + GAP * (len(panels) - 1), int(max(len(key), len(legend)) * CHAR))
    height = TITLE + rows * ch + 38
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">')]
    x0 = 0
    for (caption, m), panel_width in zip(panels, widths):
        parts.append(f'<text x="{x0}" y="12">{escape(caption)}</text>')
        parts.append(f'<rect x="{x0}" y="{TITLE}" width="{cols * cw}" height="{rows * ch}" fill="none" stroke="#999"/>')
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                colour = _colour(v, scale)
                x, y = x0 + j * cw, TITLE + i * ch
                if colour != "#ffffff":
                    parts.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{colour}">'
                                 f'<title>[{i}, {j}] = {v:.6g}</title></rect>')
                if values:
                    ink = "#fff" if colour == "#000000" or (math.isfinite(v) and abs(v / scale) > 0.6) else "#000"
                    parts.append(f'<text x="{x + cw / 2:g}" y="{y + ch / 2 + 4:g}" text-anchor="middle" '
                                 f'font-size="10" fill="{ink}">{_shown(v, scale)}</text>')
        x0 += panel_width + GAP
    parts.append(f'<text x="0" y="{height - 20}" fill="#555">{escape(key)}</text>')
    parts.append(f'<text x="0" y="{height - 5}" fill="#555">{escape(legend)}</text></svg>')
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
