"""The figure model: how a failed check's picture reads, decided once for every backend.

A judge's Figure (heat maps of matrices, or autograd graphs) becomes a Picture here: its panels (each
matrix read as rows of floats, anything that is not a number NaN), one colour scale shared by the
panels (a difference panel has its own, so that any difference shows), one cell size, and the words
that go with it (the colour key and the legend). Three backends only draw a Picture: svg.py for the HTML
pages and check(), png.py for Gradescope's pictures, and markup.py for Gradescope's html, markdown or
text around them. The colour map, the scale, the cell size and every legend are defined here and
nowhere else.

A graph panel's data is left as the judge gave it (untrusted when it comes from a worker): the
backends rebuild it with Graph.from_dict before drawing, as graphs.py requires.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograder.judge.findings import Figure  # the type only: findings imports torch

RGB = tuple[int, int, int]
WHITE: RGB = (255, 255, 255)
NAN: RGB = (0, 0, 0)  # black: NaN, or a value that is not a number at all
FRAME: RGB = (153, 153, 153)  # the grey line around each panel

# a square: 24 px for a small tensor, 360 px across at most, never under 8
MIN_CELL, MAX_CELL, SPAN = 8, 24, 360
VALUE_CELL = (48, 22)  # a rectangle wide enough for the value printed in it (small tensors)

DEFAULT_LEGEND = "Rows: entries of the output; columns: entries of the input."
# every colour and line of graphs.COLOURS and graphs.EDGE_STYLES (torchviz's), said
GRAPH_LEGEND = ("Light green: the tensors named (out, and the gradients grad_x...) as autograd recorded "
                "them, with their shape; dark green, joined by a dotted line: the tensor a named one is a "
                "view of; blue: leaf tensors (the inputs); orange: tensors saved for backward; grey: the "
                "operations autograd recorded; white: a named tensor with no autograd history, drawn alone "
                "(nothing links it to the inputs). An arrow runs from an operation's input to the "
                "operation; a line without an arrow ties a saved tensor to the operation that saved it.")


VISIBLE = 0.25  # the palest colour of a difference that is more than rounding
ROUNDING = 1e-6  # of the values' scale: a difference below it is rounding (shown() prints it as 0)


def colour(value: float, scale: float, visible_above: float | None = None) -> RGB:
    """Diverging blue-white-red: white where the value is 0, so a difference panel shows only errors;
    full colour at ±scale and beyond; black for NaN. Beyond `visible_above` (a difference panel's: more
    than rounding), never paler than a quarter of full colour, so that no real difference looks white."""
    if math.isnan(value):  # before the clamp, which would make it +1 (min(1.0, nan) is 1.0)
        return NAN
    t = max(-1.0, min(1.0, value / scale)) if scale else 0.0
    if visible_above is not None and abs(value) > visible_above and abs(t) < VISIBLE:
        t = math.copysign(VISIBLE, value)
    fade = round(255 * (1 - abs(t)))
    return (255, fade, fade) if t > 0 else (fade, fade, 255)


def hex_colour(rgb: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def ink(value: float, scale: float) -> RGB:
    """The colour of a value printed in its square: white on black and on strong colours, else black."""
    dark = math.isnan(value) or (math.isfinite(value) and abs(value / scale) > 0.6)
    return WHITE if dark else NAN


def shown(value: float, scale: float) -> str:
    """A value as printed in its square: three significant digits; 0 for what is rounding next to the
    picture's largest value (a difference of 1e-11 between finite differences and backward)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if abs(value) < ROUNDING * scale:
        return "0"
    text = f"{value:.3g}"
    return "0" if text in ("0", "-0") else text


def number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def rows_of(matrix: Any) -> list[list[float]]:
    """A matrix (nested lists, a vector or a number) as rows of floats: a vector is one row, as a tensor
    prints; what is not a number is NaN."""
    if not isinstance(matrix, list):
        return [[number(matrix)]]
    if matrix and not any(isinstance(row, list) for row in matrix):
        return [[number(v) for v in matrix]]
    return [[number(v) for v in row] if isinstance(row, list) else [number(row)] for row in matrix]


def _largest(matrix: list[list[float]]) -> float:
    return max((abs(v) for row in matrix for v in row if math.isfinite(v)), default=0.0)


def scale_of(matrices: list[list[list[float]]]) -> float:
    """Full colour at the largest finite magnitude of all panels together (1 when all are 0)."""
    return max((_largest(m) for m in matrices), default=0.0) or 1.0


def cell_size(rows: int, cols: int, values: bool = False) -> tuple[int, int]:
    """(width, height) of one entry's square in pixels: a rectangle for a printed value, else a square
    sized so that the larger side of the matrix spans about SPAN pixels."""
    if values:
        return VALUE_CELL
    side = max(MIN_CELL, min(MAX_CELL, SPAN // max(rows, cols, 1)))
    return side, side


def colour_key(scale: float) -> str:
    return f"blue: negative, white: 0, red: positive (full colour at ±{scale:.3g}); black: NaN."


@dataclass(frozen=True)
class Panel:
    caption: str
    data: Any  # a heat map: rows of floats; a graph: the judge's Graph data (untrusted)
    scale: float = 0.0  # its own colour scale (a difference panel), or 0: the picture's


def is_difference(caption: str) -> bool:
    """A panel of differences (yours minus the right one): drawn on its own scale, so that a difference
    of 1e-5 beside values of 1 is as visible as one of 1."""
    return caption.startswith("difference")


@dataclass(frozen=True)
class Picture:
    """One figure, ready to draw: for heat maps, every panel on one scale with cells of one size."""

    kind: str  # "heatmaps" or "graphs"
    title: str
    panels: tuple[Panel, ...]
    legend: str  # what a square (or a colour of a graph) is
    scale: float = 1.0
    rows: int = 0  # the largest panel's, for heat maps
    cols: int = 0
    values: bool = False  # print each value in its square (small tensors; backends that can print)

    @property
    def heatmaps(self) -> bool:
        return self.kind == "heatmaps"

    @property
    def key(self) -> str:
        """What the colours mean, for heat maps ("" for graphs, whose legend says it)."""
        if not self.heatmaps:
            return ""
        own = [panel.scale for panel in self.panels if panel.scale]
        return colour_key(self.scale) + (f" The difference has its own scale: full colour at ±{own[0]:.3g}."
                                         if own else "")

    def scale_for(self, panel: Panel) -> float:
        return panel.scale or self.scale

    def visible_above(self, panel: Panel) -> float | None:
        """A difference panel's threshold: a difference above 1e-6 of the values is more than rounding (of
        float64, or of finite differences) and gets a visible colour however small beside the largest."""
        return ROUNDING * self.scale if panel.scale else None

    @property
    def note(self) -> str:
        """The words under the picture: the colour key, then the legend."""
        return f"{self.key} {self.legend}" if self.key else self.legend

    def cell(self, values: bool | None = None) -> tuple[int, int]:
        return cell_size(self.rows, self.cols, self.values if values is None else values)


def picture(figure: Figure) -> Picture:
    """The model of one of a CheckResult's figures."""
    title = str(figure.title)
    if figure.kind != "heatmaps":
        panels = tuple(Panel(str(caption), data) for caption, data in figure.panels if data)
        return Picture(figure.kind, title, panels, GRAPH_LEGEND)
    panels = tuple(Panel(str(caption), rows_of(matrix)) for caption, matrix in figure.panels)
    values = [p for p in panels if not is_difference(p.caption)]
    scale = scale_of([p.data for p in values or panels])
    # full colour at the largest difference, but never for rounding: below 1e-9 of the values (the
    # tolerance against the reference) a difference stays pale
    panels = tuple(Panel(p.caption, p.data, max(_largest(p.data), 1e-9 * scale))
                   if values and is_difference(p.caption) else p for p in panels)
    rows = max((len(p.data) for p in panels), default=0)
    cols = max((len(row) for p in panels for row in p.data), default=0)
    return Picture("heatmaps", title, panels, str(figure.legend or DEFAULT_LEGEND), scale, rows, cols,
                   bool(figure.values))
