"""Does nothing a worker or a file name carries reach HTML, SVG or a spreadsheet as anything but text:
graph labels, messages, tracebacks, printed output, and ids in grades.csv and the Canvas import?"""

import csv
import io
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from autograder.judge.findings import Figure
from autograder.judge.verdicts import CheckResult
from autograder.measure.graphs import Graph, svg
from autograder.report.csvsafe import cell, read_cell
from autograder.report.export import canvas_csv, read_graded
from autograder.report.figures import picture
from autograder.report.files import grades_csv
from autograder.report.pages import feedback_page
from autograder.report.png import graph_png
from autograder.report.svg import graph_svg, heatmaps

# Labels a student's Function can give its backward node (Evil._backward_cls.__name__ = ...).
HOSTILE_LABELS = [
    '<<TABLE HREF="javascript:alert(1)"><TR><TD>click</TD></TR></TABLE>>',  # an HTML-like label: a live link
    "<script>alert(1)</script>",
    "<<b>",  # an HTML-like label Graphviz cannot parse
    "ends with a backslash\\",  # an unterminated DOT string
    "nul\x00byte",
    'quote " and \\" and \\\\"',
    "\\N\\G\\L",  # Graphviz's escapes for the node's and graph's names
    "]\n}\ndigraph injected {",
    "lone \ud800 surrogate",
    "-->",
]
FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"x\")", "=1+2", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
            "\tx", "\rx", "'=already quoted"]


def svg_markup(text: str) -> tuple[set[str], set[str]]:
    """The element names and attribute names of an SVG (which must be well-formed XML)."""
    root = ET.fromstring(text)
    tags = {el.tag.split("}")[-1] for el in root.iter()}
    attributes = {name.split("}")[-1].lower() for el in root.iter() for name in el.attrib}
    return tags, attributes


def hostile_graph(label: str) -> dict:
    return {"nodes": [[label, label, "op"], ["x", "x\n(3)", "leaf"]], "edges": [["x", label]]}


# -- graphs -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_graph_labels_are_text_in_the_svg(label):
    """Is every label drawn by Graphviz as text: no link, script or foreign markup in the SVG, the
    picture drawn rather than replaced by the text fallback?"""
    picture = graph_svg(hostile_graph(label))
    tags, attributes = svg_markup(picture)
    assert not tags & {"a", "script", "foreignObject", "image", "iframe"}, tags
    assert "href" not in attributes and not any(a.startswith("on") for a in attributes), attributes
    assert "could not draw" not in picture
    if label.isprintable():
        texts = " ".join(el.text or "" for el in ET.fromstring(picture).iter() if el.tag.endswith("text"))
        assert label.splitlines()[0][:20] in texts


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_graph_png_is_drawn_for_any_label(label):
    """Is a PNG drawn for every label (Gradescope's pictures), with no exception?"""
    assert graph_png(hostile_graph(label)).startswith(b"\x89PNG")


def test_graphviz_failure_falls_back_to_text(fake_dot):
    """When Graphviz fails, is the graph shown as escaped text (SVG) or a placeholder (PNG), never an
    exception?"""
    fake_dot("exit 1\n")  # a `dot` that fails, first on PATH (tests/report/conftest.py)
    graph = Graph.from_dict(hostile_graph("<script>alert(1)</script>"))
    picture = svg(graph)
    tags, _ = svg_markup(picture)
    assert tags == {"svg", "text"} and "could not draw" in picture and "&lt;script&gt;" in picture
    assert graph_png(graph.to_dict()).startswith(b"\x89PNG")


@pytest.mark.parametrize("data", [None, [], "graph", {"nodes": "x"}, {"nodes": [[1, 2]], "edges": 5},
                                  {"nodes": [[{"a": 1}, "x", "op"]]}, {"nodes": [["a", "x", "op"]] * 500},
                                  {"nodes": [["a", "x", "op"]],
                                   "edges": [["a", "a", "a"], "ab", [["a"], "a"]]}])
def test_malformed_graph_data_is_dropped(data):
    """Is malformed graph data from a worker dropped piece by piece instead of raising?"""
    graph = Graph.from_dict(data)
    assert all(node == f"n{i}" for i, (node, _, _) in enumerate(graph.nodes))
    svg_markup(graph_svg(data))


def test_node_ids_are_renumbered_and_edges_kept():
    """Are a worker's node ids replaced by n0, n1, ... with the edges between them kept, once each?"""
    graph = Graph.from_dict({"nodes": [["<evil>", "a", "op"], ["x\ny", "b", "leaf"]],
                             "edges": [["x\ny", "<evil>"], ["x\ny", "<evil>"], ["x\ny", "gone"]]})
    assert graph.nodes == [("n0", "a", "op"), ("n1", "b", "leaf")] and graph.edges == [("n1", "n0", "")]


# -- feedback pages ------------------------------------------------------------------------------------------

class Markup(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes += attrs


def assert_no_live_markup(page: str) -> None:
    """No element that runs or links (script, img, a, iframe...), no event handler, no javascript: URL."""
    parser = Markup()
    parser.feed(page)
    assert not parser.tags & {"script", "img", "a", "iframe", "object", "embed", "foreignobject"}, parser.tags
    for name, value in parser.attributes:
        assert not name.startswith("on") and "javascript:" not in (value or "").lower(), (name, value)


def test_feedback_page_escapes_everything_from_a_worker():
    """Do a message, details, a cell's traceback, printed output, figure titles, captions, labels and
    numbers from a worker all reach the page as text, with no element or attribute of their own?"""
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)><a href='javascript:alert(3)'>x</a>"
    figures = [Figure("graphs", hostile, [(hostile, hostile_graph(label)) for label in HOSTILE_LABELS]),
               Figure("heatmaps", hostile, [(hostile, [[1.0, "x"], [None, 2.0]]), ("<b>", "not a matrix")])]
    results = [CheckResult("Exp", "gradient", False, 1.0, hostile, hostile, figures)]
    page = feedback_page(hostile, hostile, results, [{"index": 1, "error": hostile}], "</pre>" + hostile)
    assert_no_live_markup(page)
    assert page.count("&lt;script&gt;") >= 5


def test_heat_map_shows_what_is_not_a_number_in_black():
    """Are NaN and values that are not numbers at all drawn black (not as the largest positive value),
    with finite values setting the scale?"""
    drawn = heatmaps(picture(Figure("heatmaps", "t", [("yours", [[float("nan"), "x"], [2.0, -1.0]])])))
    fills = [el.get("fill") for el in ET.fromstring(drawn).iter()
             if el.tag.endswith("rect") and el.get("width") == "24"]
    assert fills == ["#000000", "#000000", "#ff0000", "#8080ff"]


# -- CSV ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", FORMULAS + ["alice", "-1", "+2.5", "1e3", "", "'", "''x", "x=1"])
def test_csv_cells_round_trip(value):
    """Is a text cell neutralised exactly when a spreadsheet would read a formula, and read back as it
    was?"""
    written = cell(value)
    assert read_cell(written) == value.replace("\r", "\n")  # a carriage return would end the row
    if value.startswith(("=", "+", "-", "@", "\t", "\r")) and value not in ("-1", "+2.5"):
        assert written.startswith("'")
    elif not value.startswith("'"):
        assert written == value


def test_grades_csv_neutralises_ids_not_scores():
    """Does grades.csv neutralise ids (and problem names) that start like a formula, but keep every
    score a number?"""
    rows = [(sid, {"score": 3.0, "tests": [{"name": "Exp: gradient", "score": 3.0}]}) for sid in FORMULAS]
    table = list(csv.reader(io.StringIO(grades_csv(rows, ["Exp", "=Sneaky"], 5.0), newline="")))
    assert table[0] == ["submission", "score", "max_score", "Exp", "'=Sneaky", "graded", "adjustments",
                        "late_penalty", "late", "flagged"]
    assert len(table) == len(FORMULAS) + 1
    for row, sid in zip(table[1:], FORMULAS):
        assert row[0] == cell(sid) and row[1:] == ["3", "5", "3", "0", "3", "0", "0", "", ""]
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r")), row


def test_canvas_import_neutralises_names_and_reads_ids_back(tmp_path):
    """Does the export read ids back from grades.csv exactly, and write a Canvas import whose text
    cells (ids, names from the roster, the column) never start like a formula?"""
    rows = [(sid, {"score": 2.0, "tests": []}) for sid in ["=evil", "alice"]]
    (tmp_path / "grades.csv").write_text(grades_csv(rows, ["Exp"], 5.0))
    for sid, _ in rows:
        (tmp_path / sid).mkdir()
        (tmp_path / sid / "results.json").write_text(json.dumps({"extra_data": {"assignment": "lab"}}))
    graded, assignment = read_graded(tmp_path)
    assert [g.submission for g in graded] == ["=evil", "alice"] and assignment == "lab"
    table = list(csv.reader(io.StringIO(canvas_csv(graded, "=lab").csv)))
    assert table[0][-1] == "'=lab" and table[2][0] == table[2][3] == "'=evil" and table[3][0] == "alice"
    roster = tmp_path / "roster.csv"
    roster.write_text('Student,ID,SIS User ID,SIS Login ID,Section\n'
                      '"=HYPERLINK(""http://x"")",1,S1,alice,@A\n')
    table = list(csv.reader(io.StringIO(canvas_csv(graded, "lab", roster).csv)))
    assert table[2] == ["'=HYPERLINK(\"http://x\")", "1", "S1", "alice", "'@A", "2"]
    for row in table:
        assert not any(c.startswith(("=", "+", "@", "\t", "\r")) for c in row), row


@pytest.mark.parametrize("name", ["\x1b]0;pwned\x07", "\x1b[2J", "\x9b2J", "\x7f\x08\r", "\u202egnp.py",
                                  "\udcff"])
def test_a_name_reaches_the_terminal_escaped(name):
    """Does plain.shown write every control character (C0 but newline and tab, DEL, C1), bidirectional
    control and lone surrogate of a name as a visible escape, and plain.valid make a surrogate U+FFFD?"""
    from autograder.report.plain import shown, valid

    text = shown(f"a\t{name}\nb")
    assert text.startswith("a\t") and text.endswith("\nb") and text.isascii()
    assert all(c.isprintable() for c in text.replace("\t", "").replace("\n", ""))
    assert valid("x\ud800y") == "x\ufffdy" and valid("\U0001F600") == "\U0001F600"
