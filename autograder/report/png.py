"""Pictures as PNG, for places that take no SVG: Gradescope's sanitised output keeps `<img>` with a
`data:image/png` address but drops inline `<svg>` (and SVG data addresses).

The PNG backend of the figure model (figures.py): heat maps are written pixel by pixel here, one PNG
per panel in the picture's colours and cell size (no plotting library: small files, the same bytes
every run; no text, so no values in the squares), and autograd graphs are drawn by Graphviz, as for
the SVG pictures.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib

from autograder.measure.graphs import Graph, digraph
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
    """(caption, png, width, height) for each panel of a picture; a graph's size is Graphviz's (0, 0)."""
    if p.heatmaps:
        return [(panel.caption, *heatmap(panel.data, p, p.scale_for(panel), p.visible_above(panel)))
                for panel in p.panels]
    return [(panel.caption, graph_png(panel.data), 0, 0) for panel in p.panels]


_graphs: dict[str, bytes] = {}  # drawn graphs by their data: the reference's recurs under several checks


def graph_png(data: dict, dpi: int = 80) -> bytes:
    """An autograd graph (Graph.to_dict() data, untrusted: see Graph.from_dict) drawn by Graphviz as
    PNG; when Graphviz cannot draw it, a small grey PNG (never an error)."""
    try:
        graph = Graph.from_dict(data)
        key = json.dumps([graph.to_dict(), dpi], sort_keys=True)
        if key in _graphs:
            return _graphs[key]
        dot = digraph(graph)
        dot.graph_attr["dpi"] = str(dpi)
        png = dot.pipe(format="png")
    except Exception:  # noqa: BLE001 - a picture is never worth a failed result
        png = b""
    if not png.startswith(PNG):
        return placeholder()  # not kept: a later try may draw it
    if len(_graphs) < MAX_CACHED:
        _graphs[key] = png
    return png


def placeholder(width: int = 48, height: int = 16) -> bytes:
    """A framed grey PNG where a picture could not be drawn."""
    frame, fill = bytes(FRAME) * width, bytes(FRAME) + bytes((238, 238, 238)) * (width - 2) + bytes(FRAME)
    return encode(width, height, [frame] + [fill] * (height - 2) + [frame])


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
