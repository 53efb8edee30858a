"""Autograd graphs as plain data, drawn the way torchviz draws them but with stable node ids.

torchviz names nodes by memory address, so the same code draws a different SVG on every run and
notebook outputs cannot be compared. Here a graph is first read into plain data (nodes numbered in
the order a depth-first walk meets them), which the grader can also ship safely out of a worker
process, and only then drawn with Graphviz.

A graph that comes from a worker is untrusted: its labels are a student's class names (a class may be
called `<script>`, or `<<TABLE HREF="javascript:...">>`, an HTML-like label to Graphviz). Labels are
therefore always plain text to Graphviz (escaped, control characters replaced), node ids are renumbered,
and a graph Graphviz still cannot draw is shown as text instead (svg() never raises).

Where Graphviz is not installed (a notebook opened in a bare environment), every graph is shown as text
that says so, and the first cell of every course notebook says how to install it (warn_if_no_graphviz).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from html import escape

# torchviz's colours, so a learner who meets torchviz elsewhere sees the same picture.
COLOURS = {"output": "darkolivegreen1", "leaf": "lightblue", "op": "lightgrey", "constant": "white"}
MAX_NODES = 200  # a runaway student graph is cut here rather than drawn for minutes
MAX_EDGES = 4 * MAX_NODES
MAX_LABEL = 80
NO_DOT = ("Graphviz's `dot` program is not installed, so check() and draw() show autograd graphs as text "
          "(verdicts and heat maps are unchanged). To see the graphs, install Graphviz: "
          "`!apt-get install -y graphviz` in a Colab cell, `sudo apt-get install graphviz` on Debian or Ubuntu, "
          "`brew install graphviz` on macOS, `conda install -c conda-forge graphviz` in a conda environment, "
          "`winget install graphviz` on Windows; then restart the kernel.")
NO_GRAPHVIZ = ("The Python package `graphviz` is not installed, so check() and draw() show autograd graphs "
               "as text (verdicts and heat maps are unchanged). To see the graphs: `pip install graphviz`, "
               "and Graphviz's `dot` program too if `dot -V` finds none; then restart the kernel.")
AS_TEXT = "(graph shown as text: Graphviz is not installed here, see the first cell of a course notebook)"
COULD_NOT = "(Graphviz could not draw this graph; its nodes and edges:)"


def graphviz_missing() -> str | None:
    """What to install to get graphs drawn (NO_GRAPHVIZ or NO_DOT), or None when Graphviz can draw."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return NO_GRAPHVIZ
    return None if shutil.which("dot") else NO_DOT


def warn_if_no_graphviz() -> None:
    """Says how to get Graphviz where it is missing (the first cell of every course notebook calls it)."""
    missing = graphviz_missing()
    if missing:
        print(missing)


@dataclass
class Graph:
    """Nodes are (id, label, kind) with kind one of COLOURS; edges run from input towards output."""

    nodes: list[tuple[str, str, str]] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"nodes": [list(n) for n in self.nodes], "edges": [list(e) for e in self.edges]}

    @classmethod
    def from_dict(cls, data) -> Graph:
        """Rebuilds a graph from untrusted plain data: well-formed nodes only (renumbered n0, n1, ...,
        labels made plain text of at most MAX_LABEL characters), edges between them only, each once;
        anything else is dropped (never an error)."""
        if not isinstance(data, dict):
            return cls()
        raw_nodes, raw_edges = data.get("nodes"), data.get("edges")
        ids: dict[str, str] = {}
        nodes = []
        for n in raw_nodes[:MAX_NODES] if isinstance(raw_nodes, list) else []:
            if not (isinstance(n, list | tuple) and len(n) == 3 and all(isinstance(x, str | int) for x in n)):
                continue
            key, label, kind = (str(x) for x in n)
            if kind in COLOURS and key not in ids:
                ids[key] = f"n{len(ids)}"
                nodes.append((ids[key], plain_label(label), kind))
        edges: list[tuple[str, str]] = []
        seen = set()
        for e in raw_edges if isinstance(raw_edges, list) else []:
            if len(edges) >= MAX_EDGES:
                break
            if isinstance(e, list | tuple) and len(e) == 2 and all(isinstance(x, str | int) for x in e):
                tail, head = ids.get(str(e[0])), ids.get(str(e[1]))
                if tail and head and (tail, head) not in seen:
                    seen.add((tail, head))
                    edges.append((tail, head))
        return cls(nodes, edges)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": svg(self)}


def plain_label(text: str) -> str:
    """A label as plain text: at most MAX_LABEL characters, line breaks kept, every other character
    that is not printable (control characters, lone surrogates) replaced by U+FFFD."""
    return "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in text[:MAX_LABEL])


def _shape(t) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def graph_of(**tensors) -> Graph:
    """Reads the autograd graph behind the named tensors, e.g. graph_of(out=y, x=x)."""
    graph = Graph()
    ids: dict[tuple[str, int], str] = {}
    names = {id(t): name for name, t in tensors.items()}

    def add(key: tuple[str, int], label: str, kind: str) -> tuple[str, bool]:
        if key in ids:
            return ids[key], False
        ids[key] = f"n{len(ids)}"
        graph.nodes.append((ids[key], label, kind))
        return ids[key], True

    def tensor_node(t, kind: str) -> tuple[str, bool]:
        name = names.get(id(t), "")
        return add(("tensor", id(t)), f"{name}\n{_shape(t)}".strip(), kind)

    def visit(fn) -> str:
        if hasattr(fn, "variable"):  # AccumulateGrad: draw the leaf tensor it accumulates into
            return tensor_node(fn.variable, "leaf")[0]
        node, new = add(("fn", id(fn)), type(fn).__name__, "op")
        if new and len(graph.nodes) < MAX_NODES:
            for parent, _ in fn.next_functions:
                if parent is not None:
                    graph.edges.append((visit(parent), node))
        return node

    for t in tensors.values():
        if t.grad_fn is not None:
            node, _ = tensor_node(t, "output")
            graph.edges.append((visit(t.grad_fn), node))
        else:
            tensor_node(t, "leaf" if t.requires_grad else "constant")
    return graph


def digraph(graph: Graph):
    """The Graphviz drawing of a graph (a graphviz.Digraph, shown as SVG in Jupyter)."""
    import graphviz

    dot = graphviz.Digraph(
        format="svg",
        graph_attr={"size": "12,12", "ranksep": "0.2"},
        node_attr={"style": "filled", "shape": "box", "align": "left", "fontsize": "10",
                   "height": "0.2", "fontname": "monospace"},
    )
    for node, label, kind in graph.nodes:  # escape(): never an HTML-like label, backslashes literal
        dot.node(graphviz.escape(node), graphviz.escape(plain_label(label)), fillcolor=COLOURS.get(kind, "white"))
    for tail, head in graph.edges:
        dot.edge(graphviz.escape(tail), graphviz.escape(head))
    return dot


def svg(graph: Graph) -> str:
    """The graph as an SVG string, ready to inline in HTML; a graph Graphviz cannot draw (or no
    Graphviz) gives an SVG that lists its nodes and edges as text, and says which of the two it is."""
    try:
        text = digraph(graph).pipe(format="svg", encoding="utf-8")
        return text[text.index("<svg"):]  # drop the XML prologue so the SVG can sit inside HTML
    except Exception:  # noqa: BLE001 - a picture is never worth a failed page
        return text_svg(graph, AS_TEXT if graphviz_missing() else COULD_NOT)


def text_svg(graph: Graph, heading: str = COULD_NOT) -> str:
    """The graph as lines of escaped text in an SVG: the heading, each node, then each edge (tail -> head)."""
    names = {node: " / ".join(plain_label(label).splitlines()) or node for node, label, _ in graph.nodes}
    lines = [heading]
    lines += [f"{names[node]} [{kind}]" for node, _, kind in graph.nodes]
    lines += [f"{names.get(tail, tail)} -> {names.get(head, head)}" for tail, head in graph.edges]
    height = 16 * len(lines) + 8
    width = 8 + 7 * max(len(line) for line in lines)
    texts = "".join(f'<text x="4" y="{16 * (i + 1)}">{escape(line)}</text>' for i, line in enumerate(lines))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="monospace" font-size="11">{texts}</svg>')


def draw(**tensors) -> Graph:
    """Draws the autograd graph behind the named tensors: draw(grad_x=grad_x, x=x, out=out).

    Call it before backward() frees the graph, or pass retain_graph=True / create_graph=True.
    """
    return graph_of(**tensors)
