"""Pictures as PNG, for places that take no SVG: Gradescope's sanitised output keeps `<img>` with a
`data:image/png` address but drops inline `<svg>` (and SVG data addresses).

The PNG backend of the figure model (figures.py): heat maps are written pixel by pixel here, one PNG
per panel in the picture's colours and cell size (no plotting library: small files, the same bytes
every run; no text, so no values in the squares), and autograd graphs are drawn by Graphviz, as for
the SVG pictures, in processes of their own with a deadline (drawing.py).
"""

from __future__ import annotations

import base64
import contextlib
import json
import struct
import zlib

from autograder.drawing import LARGE, SLOW, NotDrawn, draw_all
from autograder.measure.graphs import Graph, digraph, not_drawn
from autograder.report.figures import FRAME, WHITE, Picture, colour

PNG = b"\x89PNG\r\n\x1a\n"
MAX_CACHED = 256


def encode(width: int, height: int, rows: list[bytes]) -> bytes:
    """An 8-bit RGB PNG from `height` rows of 3 * `width` bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 on every row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return PNG + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def heatmap(matrix: list[list[float]], p: Picture, scale: float | None = None,
            visible_above: float | None = None) -> tuple[bytes, int, int]:
    """One panel of a picture as a PNG heat map with a one-pixel frame: (png, width, height). Squares of
    the picture's size, without the values (a PNG here has no text)."""
    cell, _ = p.cell(values=False)
    width, height = p.cols * cell + 2, p.rows * cell + 2
    frame_row = bytes(FRAME) * width
    out = [frame_row]
    for row in matrix:
        pixels = b"".join(bytes(colour(v, scale or p.scale, visible_above)) * cell for v in row)
        pixels += bytes(WHITE) * cell * (p.cols - len(row))
        line = bytes(FRAME) + pixels + bytes(FRAME)
        out.extend([line] * cell)
    out.extend([bytes(FRAME) + bytes(WHITE) * (width - 2) + bytes(FRAME)] * (cell * (p.rows - len(matrix))))
    out.append(frame_row)
    return encode(width, height, out), width, height


def figure_pngs(p: Picture) -> list[tuple[str, bytes, int, int]]:
    """(caption, png, width, height) for each panel of a picture; a graph's size is Graphviz's (0, 0), and a
    graph not drawn is a grey placeholder whose caption says why."""
    if p.heatmaps:
        return [(panel.caption, *heatmap(panel.data, p, p.scale_for(panel), p.visible_above(panel)))
                for panel in p.panels]
    drawn = graph_pngs([panel.data for panel in p.panels])
    return [(f"{panel.caption} ({why})" if why else panel.caption, png, 0, 0)
            for panel, (png, why) in zip(p.panels, drawn)]


_graphs: dict[str, tuple[bytes, str]] = {}  # drawn graphs by their data: the reference's recurs


def graph_pngs(datas: list, dpi: int = 80) -> list[tuple[bytes, str]]:
    """Autograd graphs (Graph.to_dict() data, untrusted: see Graph.from_dict) drawn by Graphviz as PNG,
    side by side within one deadline (drawing.py), each with "" or why it was not drawn
    (graphs.not_drawn); where Graphviz cannot draw one, a small grey PNG (never an error)."""
    keyed, found = [], {}
    for data in datas:
        try:
            graph = Graph.from_dict(data)
            key = json.dumps([graph.to_dict(), dpi], sort_keys=True)
            dot = digraph(graph)
            dot.graph_attr["dpi"] = str(dpi)
            keyed.append((key, dot.source))
        except Exception:  # noqa: BLE001 - a picture is never worth a failed result (no graphviz package)
            keyed.append((None, ""))
    todo = {key: source for key, source in keyed if key is not None and key not in _graphs}
    for key, png in zip(todo, draw_all([(source, "png") for source in todo.values()])):
        if isinstance(png, bytes) and png.startswith(PNG):
            found[key] = (png, "")
        elif isinstance(png, NotDrawn) and png.why in (SLOW, LARGE):
            found[key] = (placeholder(), not_drawn(png.why))  # kept: trying again would cost as much
        else:
            found[key] = (placeholder(), "")  # not kept: a later try may draw it
            continue
        if len(_graphs) < MAX_CACHED:
            _graphs[key] = found[key]
    return [_graphs.get(key) or found.get(key) or (placeholder(), "") for key, _ in keyed]


def draw_graphs(results: list) -> None:
    """Draws every graph of a submission's failed checks at once, before its results are written: they
    then wait for the slowest graph only, and at most config.DRAW_SECONDS. Never raises."""
    with contextlib.suppress(Exception):
        graph_pngs([data for r in results if not r.passed for f in r.figures if f.kind == "graphs"
                    for _, data in f.panels if data])


def graph_png(data: dict, dpi: int = 80) -> bytes:
    """One graph as graph_pngs draws it."""
    return graph_pngs([data], dpi)[0][0]


def placeholder(width: int = 48, height: int = 16) -> bytes:
    """A framed grey PNG where a picture could not be drawn."""
    frame, fill = bytes(FRAME) * width, bytes(FRAME) + bytes((238, 238, 238)) * (width - 2) + bytes(FRAME)
    return encode(width, height, [frame] + [fill] * (height - 2) + [frame])


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
