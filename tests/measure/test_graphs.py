"""Are autograd graphs read and drawn the same way on every run, and shown as text without Graphviz?"""

import os
import sys
from html import escape

import pytest
import torch

from autograder.measure.graphs import (
    AS_TEXT,
    COULD_NOT,
    NO_DOT,
    NO_GRAPHVIZ,
    Graph,
    graph_of,
    graphviz_missing,
    svg,
)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


def draw_square():
    x = torch.tensor(1.0, requires_grad=True).clone()
    out = Square.apply(x)
    (grad_x,) = torch.autograd.grad(out, x, create_graph=True)
    return graph_of(grad_x=grad_x, x=x, out=out)


def test_same_code_same_svg():
    """Does drawing the same computation twice give the same SVG, byte for byte?"""
    assert svg(draw_square()) == svg(draw_square())


def test_nodes_name_the_backward_functions():
    """Does the graph show the custom Function's SquareBackward node and the named tensors?"""
    graph = draw_square()
    labels = [label for _, label, _ in graph.nodes]
    assert "SquareBackward" in labels
    assert any(label.startswith("grad_x") for label in labels)


def test_tensor_without_history_is_a_lone_node():
    """Is a tensor with no autograd history drawn alone, as the SinhBad lesson needs?"""
    graph = graph_of(c=torch.ones(2))
    assert graph.nodes == [("n0", "c\n (2)", "constant")] and graph.edges == []  # torchviz's label


def test_untrusted_graph_data_is_sanitised():
    """Does rebuilding a graph from a worker's data drop malformed nodes and dangling edges?"""
    graph = Graph.from_dict({"nodes": [["n0", "ok", "op"], ["n1", "x", "evil"], ["n2"]],
                             "edges": [["n0", "n1"], ["n0", "n0"]]})
    assert graph.nodes == [("n0", "ok", "op")] and graph.edges == [("n0", "n0", "")]


# -- where Graphviz is missing ---------------------------------------------------------------------------

@pytest.fixture
def no_dot(monkeypatch, tmp_path):
    """A PATH on which there is no `dot`, and no graph drawn earlier in the cache."""
    from autograder.report import svg as render

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(render, "_drawn", {})


def verdicts(report) -> list[tuple]:
    return [(r.name, r.passed, r.score, r.message) for r in report.results]


def test_check_without_dot_gives_the_same_verdicts_and_graphs_as_text(monkeypatch, tmp_path):
    """Where `dot` is missing, does check() give the same verdicts and heat maps, with each graph shown as
    text that says Graphviz is not installed?"""
    from autograder.report import svg as render
    from tests.judge.test_judge import run_check
    from tests.wrong_functions import CASES

    detached = next(c for c in CASES if c[3] == "detached copy")  # a graph under gradgradcheck
    with_dot = run_check(*detached[:2])
    drawn = with_dot._repr_html_()
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(render, "_drawn", {})
    without_dot = run_check(*detached[:2])
    html = without_dot._repr_html_()
    assert verdicts(without_dot) == verdicts(with_dot) and not without_dot.passed
    assert drawn.count('class="graph"') == 2 and 'class="graph"' not in html, "graphs are still drawn by dot"
    assert html.count("<svg") == drawn.count("<svg"), "a picture is missing"
    assert html.count(escape(AS_TEXT)) == 2 and "ExpBackward [op]" in html


def test_draw_without_dot_shows_the_graph_as_text(no_dot):
    """Does a draw() output become a picture of text naming every node and saying Graphviz is missing?"""
    picture = draw_square()._repr_mimebundle_()["image/svg+xml"]
    assert escape(AS_TEXT) in picture and 'class="graph"' not in picture
    assert "SquareBackward [op]" in picture and "SquareBackward -&gt; out / ()" in picture


def test_a_graph_graphviz_fails_on_still_says_so(monkeypatch, tmp_path):
    """Where Graphviz is installed but fails on one graph, does the text say that, not that it is missing?"""
    dot = tmp_path / "dot"
    dot.write_text("#!/bin/sh\nexit 1\n")  # a `dot` that fails, first on PATH
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    picture = svg(draw_square())
    assert escape(COULD_NOT) in picture and escape(AS_TEXT) not in picture


def test_missing_graphviz_package_is_said(monkeypatch):
    """Without the Python package graphviz, does the set-up say to install it, graphs shown as text?"""
    monkeypatch.setitem(sys.modules, "graphviz", None)
    assert graphviz_missing() == NO_GRAPHVIZ
    assert escape(AS_TEXT) in svg(draw_square())


def test_first_cell_is_silent_with_graphviz_and_says_how_to_get_it_without(no_dot, monkeypatch, capsys):
    """Does the notebooks' first cell print nothing where the package imports and `dot` is found, and
    only how to install Graphviz where `dot` is missing?"""
    from tools.make_student import setup_cell

    source = setup_cell().source
    exec(source, {})  # noqa: S102 - the course's own set-up cell
    assert capsys.readouterr().out.strip() == NO_DOT
    monkeypatch.undo()
    exec(source, {})  # noqa: S102
    assert capsys.readouterr().out == ""


def test_torchviz_loads_without_setuptools_and_the_reference_graph_only_when_shown():
    """Does torchviz load with the stand-in for distutils (not setuptools, a third of a second), leaving no
    stand-in behind, and does the grader's start (validation, first-order problems) draw no reference
    graph, the graph only a double-backward or companion failure shows?"""
    import subprocess

    code = """
import sys
from autograder.course import find_assignment
from autograder.judge.reference import reference_graph
from autograder.judge.validate import validate
from autograder.measure.graphs import torchviz_dot
validate(find_assignment("custom-functions"), 0)
assert reference_graph.cache_info().currsize == 0, "a reference graph was drawn"
torchviz_dot()
assert "torchviz.dot" in sys.modules
assert "setuptools" not in sys.modules and "distutils" not in sys.modules, sorted(sys.modules)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
    assert draw_square().nodes  # and graphs are drawn as before
