"""Is a failed check's picture decided once (report/figures.py) and drawn alike by the three backends:
the SVG of the HTML pages, the PNG of Gradescope, and Gradescope's html/markdown words around them?"""

import math
import struct
import xml.etree.ElementTree as ET
import zlib

import pytest

from autograder.judge.findings import Figure
from autograder.report import markup, png, svg
from autograder.report.figures import (
    DEFAULT_LEGEND,
    GRAPH_LEGEND,
    NAN,
    WHITE,
    cell_size,
    colour,
    picture,
    rows_of,
    shown,
)

NAN_VALUE = float("nan")


def decode(data: bytes) -> list[list[tuple[int, int, int]]]:
    """The pixels of an 8-bit RGB PNG as png.encode writes it (filter 0 on every row)."""
    assert data.startswith(png.PNG)
    width, height = struct.unpack(">II", data[16:24])
    raw = zlib.decompress(data[data.index(b"IDAT") + 4:-12 - 4])
    stride = 1 + 3 * width
    rows = [raw[i * stride + 1:(i + 1) * stride] for i in range(height)]
    return [[tuple(row[3 * x:3 * x + 3]) for x in range(width)] for row in rows]


def svg_cells(text: str, cell: int) -> dict[tuple[int, int], str]:
    """The fill of each entry's square in a heat map SVG, by its top-left corner."""
    return {(int(el.get("x")), int(el.get("y"))): el.get("fill") for el in ET.fromstring(text).iter()
            if el.tag.endswith("rect") and el.get("width") == str(cell)}


def test_colour_map():
    """Is 0 white, ±scale (and beyond) full red or blue, halfway half faded, NaN black?"""
    assert colour(0.0, 2.0) == WHITE and colour(NAN_VALUE, 2.0) == NAN
    assert colour(2.0, 2.0) == colour(5.0, 2.0) == (255, 0, 0)
    assert colour(-2.0, 2.0) == colour(-math.inf, 2.0) == (0, 0, 255)
    assert colour(1.0, 2.0) == (255, 128, 128) and colour(-1.0, 2.0) == (128, 128, 255)


def test_model_reads_matrices_on_one_scale():
    """Are a number, a vector and a matrix read as rows (a vector as one row, as a tensor prints), what
    is not a number NaN, and the scale the largest finite magnitude of all panels?"""
    assert rows_of(3) == [[3.0]] and rows_of([1, 2]) == [[1.0, 2.0]] and rows_of([]) == []
    assert math.isnan(rows_of([["x", None]])[0][0])
    p = picture(Figure("heatmaps", "t", [("a", [[1.0, -4.0]]), ("b", [[NAN_VALUE], [math.inf]])]))
    assert (p.scale, p.rows, p.cols) == (4.0, 2, 2)
    assert p.legend == DEFAULT_LEGEND and p.note == f"{p.key} {DEFAULT_LEGEND}" and "±4" in p.key
    graphs = picture(Figure("graphs", "g", [("yours", {"nodes": []}), ("none", None)]))
    assert [panel.caption for panel in graphs.panels] == ["yours"] and graphs.note == GRAPH_LEGEND


@pytest.mark.parametrize(("rows", "cols", "values", "size"),
                         [(1, 3, False, (24, 24)), (20, 30, False, (12, 12)),
                          (200, 10, False, (8, 8)), (3, 8, True, (48, 22))])
def test_cell_size(rows, cols, values, size):
    """Is an entry 24 px in a small tensor, smaller in a large one but never under 8, and a rectangle
    that holds its value when values are printed?"""
    assert cell_size(rows, cols, values) == size


def test_values_print_as_three_digits_with_rounding_as_zero():
    assert ([shown(v, 1.0) for v in (0.123456, 1e-9, -0.0, NAN_VALUE, -math.inf)]
            == ["0.123", "0", "0", "nan", "-inf"])


def test_svg_and_png_draw_the_same_colours_and_cells():
    """Do the SVG and the PNG of one figure draw every entry in the same colour, with squares of the same
    size, each panel as large as the largest?"""
    figure = Figure("heatmaps", "t", [("yours", [[1.0, -2.0, 0.5], [NAN_VALUE, 0.0, 4.0]]),
                                      ("short", [[3.0]])])
    p = picture(figure)
    cell, _ = p.cell()
    drawn = svg.heatmaps(p)
    images = png.figure_pngs(p)
    assert [(caption, width, height) for caption, _, width, height in images] == \
        [("yours", 3 * cell + 2, 2 * cell + 2), ("short", 3 * cell + 2, 2 * cell + 2)]
    fills = svg_cells(drawn, cell)
    x0 = 0
    for panel, (_, data, width, _) in zip(p.panels, images):
        pixels = decode(data)
        for i, row in enumerate(panel.data):
            for j, v in enumerate(row):
                rgb = pixels[1 + i * cell + cell // 2][1 + j * cell + cell // 2]
                assert rgb == colour(v, p.scale)
                expected = None if rgb == WHITE else "#{:02x}{:02x}{:02x}".format(*rgb)
                assert fills.get((x0 + j * cell, 18 + i * cell)) == expected, (panel.caption, i, j)
        x0 += max(width - 2, int(len(panel.caption) * svg.CHAR) + 4) + svg.GAP


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_gradescope_words_are_those_of_the_svg(fmt):
    """Does Gradescope's text say under a picture what the SVG says in it: one colour key, one legend?"""
    p = picture(Figure("heatmaps", "t", [("yours", [[1.0, -2.0]])], legend="Each square is one entry of x."))
    texts = [el.text for el in ET.fromstring(svg.heatmaps(p)).iter() if el.tag.endswith("text")]
    assert texts[-2:] == [p.key, p.legend]
    out = markup.render([("figure", (p, [("yours", None, 0, 0)]))], fmt)
    said = p.note if fmt == "html" else markup.md_escape(p.note)
    assert said in out and markup.LEFT_OUT in out


def test_a_small_difference_is_visible():
    """Is a difference of 1e-5 beside values near 1 drawn in colour on the difference panel's own scale
    (once it was white on the values' scale), with the key saying so, and rounding (1e-15) left pale?"""
    figure = Figure("heatmaps", "t", [("yours", [[1.0, 0.5]]), ("right", [[1.0, 0.50001]]),
                                      ("difference (first − second)", [[1e-15, -1e-5]])])
    p = picture(figure)
    difference = p.panels[2]
    assert p.scale_for(difference) == pytest.approx(1e-5) and p.scale == 1.0
    assert colour(-1e-5, p.scale_for(difference)) == (0, 0, 255)
    assert colour(1e-15, p.scale_for(difference)) == WHITE
    assert "own scale: full colour at ±1e-05" in p.key
    fills = svg_cells(svg.heatmaps(p), p.cell()[0])
    assert "#0000ff" in fills.values()


def test_the_graph_legend_says_every_colour_and_line():
    """Does the legend under a graph say what each colour graphs.py draws and each kind of line means (a
    white gradient box and a dotted edge were once left unexplained)?"""
    from autograder.measure.graphs import COLOURS, EDGE_STYLES

    words = {"output": "Light green", "base": "dark green", "leaf": "blue", "saved": "orange", "op": "grey",
             "constant": "white", "dotted": "dotted line", "none": "line without an arrow", "": "An arrow"}
    assert set(words) == set(COLOURS) | set(EDGE_STYLES)
    for said in words.values():
        assert said in GRAPH_LEGEND


def test_a_difference_far_below_the_largest_is_still_visible():
    """Is a difference of 0.01 beside one of 0.3 (LayerNorm's row whose error is small) drawn at least a
    quarter-tone, in the SVG and the PNG alike, while rounding (1e-12 beside values near 1) stays white?"""
    figure = Figure("heatmaps", "t", [("yours", [[1.0, 0.5, 0.2]]), ("right", [[0.7, 0.49, 0.2]]),
                                      ("difference (first − second)", [[0.3, 0.01, 1e-12]])])
    p = picture(figure)
    difference = p.panels[2]
    faint, rounding = (colour(v, p.scale_for(difference), p.visible_above(difference)) for v in (0.01, 1e-12))
    assert faint[1] <= round(255 * 0.75) and rounding == WHITE
    assert colour(0.01, p.scale_for(difference))[1] > 240  # what it was: nearly white
    fills = svg_cells(svg.heatmaps(p), p.cell()[0])
    assert "#{:02x}{:02x}{:02x}".format(*faint) in fills.values()
    _, data, _, _ = png.figure_pngs(p)[2]
    cell = p.cell(values=False)[0]
    assert decode(data)[1 + cell // 2][1 + cell + cell // 2] == faint
