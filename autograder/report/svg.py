"""The SVG backend: a Picture (figures.py) as inline SVG, for the HTML pages and check() in a notebook.

Heat maps are plain SVG rectangles (fast, and the same bytes on every run), every text in them escaped
here; graphs are drawn by Graphviz from labels graphs.py made plain text, in processes of their own with
a deadline (drawing.py). A picture that cannot be drawn becomes a line of text, never an error.
"""

from __future__ import annotations

import contextlib
import json
from html import escape
from typing import TYPE_CHECKING

from autograder.measure.graphs import Graph, svgs
from autograder.report.figures import FRAME, WHITE, Picture, colour, hex_colour, ink, picture, shown

if TYPE_CHECKING:
    from autograder.judge.findings import Figure  # the type only: findings imports torch

GAP, TITLE = 28, 18  # pixels: space between panels, caption height
CHAR = 6.6  # about one character's width at 11 px, to keep captions and legends inside the picture


def heatmaps(p: Picture) -> str:
    """Side-by-side heat maps on the picture's one colour scale: captions above, sized to fit, and the
    colour key and legend below. Small tensors carry their values in their squares."""
    cw, ch = p.cell()
    widths = [max(p.cols * cw, int(len(panel.caption) * CHAR) + 4) for panel in p.panels]
    width = max(sum(widths) + GAP * (len(p.panels) - 1), int(max(len(p.key), len(p.legend)) * CHAR))
    height = TITLE + p.rows * ch + 38
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
              f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">')]
    x0 = 0
    for panel, panel_width in zip(p.panels, widths):
        parts.append(f'<text x="{x0}" y="12">{escape(panel.caption)}</text>')
        parts.append(f'<rect x="{x0}" y="{TITLE}" width="{p.cols * cw}" height="{p.rows * ch}" fill="none" '
                     f'stroke="{hex_colour(FRAME)}"/>')
        scale, visible = p.scale_for(panel), p.visible_above(panel)
        for i, row in enumerate(panel.data):
            for j, v in enumerate(row):
                fill = colour(v, scale, visible)
                x, y = x0 + j * cw, TITLE + i * ch
                if fill != WHITE:  # the background is white: no rectangle needed
                    parts.append(f'<rect x="{x}" y="{y}" width="{cw}" height="{ch}" '
                                 f'fill="{hex_colour(fill)}">'
                                 f'<title>[{i}, {j}] = {v:.6g}</title></rect>')
                if p.values:
                    pen = "#fff" if ink(v, scale) == WHITE else "#000"
                    parts.append(f'<text x="{x + cw / 2:g}" y="{y + ch / 2 + 4:g}" text-anchor="middle" '
                                 f'font-size="10" fill="{pen}">{shown(v, scale)}</text>')
        x0 += panel_width + GAP
    parts.append(f'<text x="0" y="{height - 20}" fill="#555">{escape(p.key)}</text>')
    parts.append(f'<text x="0" y="{height - 5}" fill="#555">{escape(p.legend)}</text></svg>')
    return "".join(parts)


_drawn: dict[str, str] = {}  # SVG by graph: the reference's and common answers' recur on every page
MAX_CACHED = 512


def _key(data) -> tuple[str, Graph]:
    graph = Graph.from_dict(data)
    return json.dumps(graph.to_dict(), sort_keys=True), graph


def graph_svgs(datas: list) -> list[str]:
    """Graphs (as plain data, untrusted: see Graph.from_dict) drawn by Graphviz's dot, those not drawn
    before side by side within one deadline (graphs.svgs), each distinct graph once: the reference's
    graph and the graphs of common answers recur in every feedback page of a class, and each dot run
    costs tens of milliseconds. A graph too slow to draw is said so, and not tried again."""
    keyed = [_key(data) for data in datas]
    found = {key: _drawn[key] for key, _ in keyed if key in _drawn}
    todo = {key: graph for key, graph in keyed if key not in found}
    found.update(zip(todo, svgs(list(todo.values()))))
    for key in todo:
        if len(_drawn) >= MAX_CACHED:
            _drawn.pop(next(iter(_drawn)))  # the oldest
        _drawn[key] = found[key]
    return [found[key] for key, _ in keyed]


def graph_svg(data: dict) -> str:
    """One graph as graph_svgs draws it."""
    return graph_svgs([data])[0]


def draw_graphs(results: list) -> None:
    """Draws every graph of a page's results at once, before the page is written: the page then waits for
    its slowest graph only, and at most config.DRAW_SECONDS. Never raises (figure_svgs says what failed)."""
    with contextlib.suppress(Exception):
        graph_svgs([data for r in results if not r.passed for f in r.figures if f.kind == "graphs"
                    for _, data in f.panels if data])


def figure_svgs(figure: Figure) -> tuple[list[tuple[str, str]], str]:
    """(caption, svg) pairs for one figure, and the words to print under them ("" for heat maps, which
    carry theirs); a figure that cannot be drawn gives a line of text."""
    try:
        p = picture(figure)
        if p.heatmaps:
            return [("", heatmaps(p))], ""
        drawn = graph_svgs([panel.data for panel in p.panels])
        return [(panel.caption, text) for panel, text in zip(p.panels, drawn)], p.note
    except Exception as error:  # noqa: BLE001 - a picture is never worth a failed page
        note = escape(f"(this picture could not be drawn: {type(error).__name__})")
        text = (f'<svg xmlns="http://www.w3.org/2000/svg" width="420" height="20" font-family="sans-serif" '
                f'font-size="11"><text x="0" y="14">{note}</text></svg>')
        return [("", text)], ""

