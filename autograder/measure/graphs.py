"""Autograd graphs drawn by torchviz (`torchviz.make_dot`), with stable node names.

torchviz names every node by its memory address, so the same code draws a different SVG on every run
and notebook outputs cannot be compared. Here torchviz reads the graph as usual, but what it draws is
recorded as plain data, its nodes named n0, n1, ... in the order torchviz meets them: the grader can ship
that safely out of a worker process, and drawing it with Graphviz gives the same SVG on every run, in
torchviz's own colours and layout.

A graph that comes from a worker is untrusted: its labels are a student's class names (a class may be
called `<script>`, or `<<TABLE HREF="javascript:...">>`, an HTML-like label to Graphviz). Labels are
therefore always plain text to Graphviz (escaped, control characters replaced), node ids are renumbered,
and a graph Graphviz still cannot draw is shown as text instead (svg() never raises). Graphviz runs
as a process of its own with a deadline and a memory limit (drawing.py): within the caps below a forged
graph can still keep it busy for minutes, and is then said to be not drawn.

Where Graphviz is not installed (a notebook opened in a bare environment), every graph is shown as text
that says so, and the first cell of every course notebook says how to install it (warn_if_no_graphviz).
"""

from __future__ import annotations

import shutil
import sys
import textwrap
import types
from dataclasses import dataclass, field
from html import escape

from autograder import config, drawing

# torchviz's colours: the named outputs, the base of an output that is a view, leaf tensors that require
# grad, tensors saved for backward, operations; white for a named tensor outside the graph.
COLOURS = {"output": "darkolivegreen1", "base": "darkolivegreen3", "leaf": "lightblue", "saved": "orange",
           "op": "lightgrey", "constant": "white"}
KINDS = {colour: kind for kind, colour in COLOURS.items()}
EDGE_STYLES = {"": {}, "none": {"dir": "none"}, "dotted": {"style": "dotted"}}
MAX_NODES = 200  # a runaway student graph is cut here rather than drawn for minutes
MAX_EDGES = 4 * MAX_NODES
MAX_LABEL = 80
NO_DOT = ("Graphviz's `dot` program is not installed, so check() and draw() show autograd graphs as text "
          "(verdicts and heat maps are unchanged). To see the graphs, install Graphviz: "
          "`!apt-get install -y graphviz` in a Colab cell, "
          "`sudo apt-get install graphviz` on Debian or Ubuntu, "
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
    """Nodes are (id, label, kind) with kind one of COLOURS; edges (tail, head, style) run from input
    towards output, style "" (an arrow), "none" (a saved tensor, no arrow) or "dotted" (a view's base)."""

    nodes: list[tuple[str, str, str]] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"nodes": [list(n) for n in self.nodes], "edges": [list(e) for e in self.edges]}

    @classmethod
    def from_dict(cls, data) -> Graph:
        """Rebuilds a graph from untrusted plain data: well-formed nodes only (renumbered n0, n1, ...,
        labels made plain text of at most MAX_LABEL characters), edges between them only, each once, with
        a known style, among the first entries only; anything else is dropped (never an error)."""
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
        edges: list[tuple[str, str, str]] = []
        seen = set()
        # read only as far as a worker's graph goes (MAX_EDGES, and as many again joined through aliases):
        # a forged list of a million edges that match nothing would cost a second at each reading
        for e in raw_edges[:2 * MAX_EDGES] if isinstance(raw_edges, list) else []:
            if len(edges) >= MAX_EDGES:
                break
            if isinstance(e, list | tuple) and len(e) in (2, 3) and all(isinstance(x, str | int) for x in e):
                tail, head = ids.get(str(e[0])), ids.get(str(e[1]))
                style = str(e[2]) if len(e) == 3 else ""
                if tail and head and style in EDGE_STYLES and (tail, head, style) not in seen:
                    seen.add((tail, head, style))
                    edges.append((tail, head, style))
        return cls(nodes, edges)

    def labels(self) -> list[str]:
        return [label for _, label, _ in self.nodes]

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": svg(self, config.OWN_DRAW_SECONDS)}  # draw(): the learner's own graph


def plain_label(text: str) -> str:
    """A label as plain text: at most MAX_LABEL characters, line breaks kept, every other character
    that is not printable (control characters, lone surrogates) replaced by U+FFFD."""
    return "".join(c if c.isprintable() or c == "\n" else "\ufffd" for c in text[:MAX_LABEL])


class _Recorder:
    """Stands in for graphviz.Digraph while torchviz draws: records its nodes and edges, in order."""

    def __init__(self, *args, **kwargs):
        self.body: list[str] = []
        self.graph_attr: dict = {}
        self.order: list[str] = []
        self.nodes: dict[str, tuple[str, str]] = {}
        self.edges: list[tuple[str, str, str]] = []

    def _see(self, name: str) -> None:
        if name not in self.nodes and name not in self.order:
            self.order.append(name)

    def node(self, name, label=None, fillcolor=None, **attrs) -> None:
        name = str(name)
        self._see(name)
        kind = KINDS.get(fillcolor or "", "op")
        label = str(label if label is not None else name)
        if kind == "saved" and label.startswith("\n"):
            label = "saved" + label  # an unnamed tensor that save_for_backward keeps
        self.nodes[name] = (label, kind)

    def edge(self, tail, head, dir=None, style=None, **attrs) -> None:
        tail, head = str(tail), str(head)
        self._see(tail)
        self._see(head)
        self.edges.append((tail, head, "none" if dir == "none" else "dotted" if style == "dotted" else ""))


def torchviz_dot():
    """torchviz's drawing module. torchviz reads one class from distutils, which Python 3.12 no longer has
    and which setuptools provides only by importing much of itself (a third of a second): unless distutils
    is loaded already, a stand-in with that class is given while torchviz loads, then taken back."""
    if "distutils" in sys.modules:
        import torchviz.dot

        return torchviz.dot

    class LooseVersion:
        def __init__(self, text: str):
            self.parts = tuple(int(p) if p.isdigit() else 0 for p in str(text).split("+")[0].split("."))

        def __lt__(self, other: LooseVersion) -> bool:
            return self.parts < other.parts

    package, version = types.ModuleType("distutils"), types.ModuleType("distutils.version")
    version.LooseVersion, package.version = LooseVersion, version
    sys.modules.update({"distutils": package, "distutils.version": version})
    try:
        import torchviz.dot
    finally:
        for name, module in (("distutils", package), ("distutils.version", version)):
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return torchviz.dot


def _record(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50) -> _Recorder:
    """What torchviz.make_dot draws, recorded instead of drawn."""
    import warnings

    dot = torchviz_dot()

    original = dot.Digraph
    dot.Digraph = _Recorder
    try:
        with warnings.catch_warnings():  # torchviz compares versions with distutils, which warns
            warnings.simplefilter("ignore", DeprecationWarning)
            return dot.make_dot(var, params=params, show_attrs=show_attrs, show_saved=show_saved,
                                max_attr_chars=max_attr_chars)
    finally:
        dot.Digraph = original


def _graph(recorder: _Recorder) -> Graph:
    """The recorded drawing as a Graph, its nodes named n0, n1, ... in the order torchviz met them (every
    edge kept, as torchviz draws it: an operation that uses a tensor twice gets two arrows)."""
    ids = {name: f"n{i}" for i, name in enumerate(n for n in recorder.order if n in recorder.nodes)}
    graph = Graph([(ids[n], *recorder.nodes[n]) for n in recorder.order if n in ids][:MAX_NODES])
    kept = {n[0] for n in graph.nodes}
    graph.edges = [(ids[a], ids[b], s) for a, b, s in recorder.edges
                   if a in ids and b in ids and ids[a] in kept and ids[b] in kept][:MAX_EDGES]
    return _without_aliases(graph)


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50) -> Graph:
    """torchviz.make_dot's graph (same arguments) as plain data with stable node names."""
    return _graph(_record(var, params, show_attrs, show_saved, max_attr_chars))


def _without_aliases(graph: Graph) -> Graph:
    """The graph without AliasBackward0 nodes, each edge through one joined up: a plain alias of a tensor
    (how the grader reads a tensor past any subclass) is no operation of the learner's."""
    aliases = {n for n, label, _ in graph.nodes if label == "AliasBackward0"}
    if not aliases:
        return graph
    into = {a: [t for t, h, s in graph.edges if h == a] for a in aliases}
    edges = []
    for tail, head, style in graph.edges:
        if head in aliases:
            continue
        for source in (into[tail] if tail in aliases else [tail]):
            edges.append((source, head, style))
    return Graph([n for n in graph.nodes if n[0] not in aliases], list(dict.fromkeys(edges)))


def _shape(t) -> str:
    return "(" + ", ".join(str(s) for s in t.shape) + ")"


def graph_of(show_saved: bool = False, **tensors) -> Graph:
    """The graph behind the named tensors, e.g. graph_of(grad_x=grad_x, x=x, out=out): every named tensor
    with a history is an output torchviz starts from, and every name labels its tensor wherever it appears.
    A named tensor outside the graph is drawn alone (white when it needs no gradient)."""
    roots = tuple(t for t in tensors.values() if t.grad_fn is not None)
    params = {name: t for name, t in tensors.items()}
    recorder = _record(roots, params=params, show_saved=show_saved) if roots else _Recorder()
    graph = _graph(recorder)
    if len(graph.nodes) >= MAX_NODES:
        return graph
    drawn = {int(name) for name in recorder.nodes if name.isdigit()}  # torchviz names a node by id()
    used = {n for n, _, _ in graph.nodes}
    for name, t in tensors.items():
        if t.grad_fn is None and id(t) not in drawn:
            node = next(f"n{i}" for i in range(len(used) + 1) if f"n{i}" not in used)
            used.add(node)
            graph.nodes.append((node, f"{name}\n {_shape(t)}", "leaf" if t.requires_grad else "constant"))
    return graph


def digraph(graph: Graph):
    """The Graphviz drawing of a graph, with torchviz's attributes (a graphviz.Digraph, shown as SVG)."""
    import graphviz

    size = max(12.0, 0.15 * (len(graph.nodes) + len(graph.edges)))  # as torchviz's resize_graph
    dot = graphviz.Digraph(
        format="svg",
        graph_attr={"size": f"{size:g},{size:g}"},
        node_attr={"style": "filled", "shape": "box", "align": "left", "fontsize": "10", "ranksep": "0.1",
                   "height": "0.2", "fontname": "monospace"},
    )
    for node, label, kind in graph.nodes:  # escape(): never an HTML-like label, backslashes literal
        dot.node(graphviz.escape(node), graphviz.escape(plain_label(label)),
                 fillcolor=COLOURS.get(kind, "white"))
    for tail, head, style in graph.edges:
        dot.edge(graphviz.escape(tail), graphviz.escape(head), **EDGE_STYLES.get(style, {}))
    return dot


def svg(graph: Graph, seconds: float | None = None) -> str:
    """The graph as an SVG string, ready to inline in HTML (see svgs); never raises."""
    return svgs([graph], seconds)[0]


def svgs(graphs: list[Graph], seconds: float | None = None) -> list[str]:
    """The graphs as SVG strings, drawn by dot side by side in processes of their own (drawing.py) and
    waited for `seconds` at most in all (config.DRAW_SECONDS). A graph dot was too slow or too large to
    draw is a sentence that says so; one dot cannot draw (or no Graphviz) lists its nodes and edges as
    text, and says which of the two it is. Never raises."""
    try:
        sources = [digraph(graph).source for graph in graphs]
    except Exception:  # noqa: BLE001 - no graphviz package (ImportError): a picture is never worth a page
        return [text_svg(graph, AS_TEXT if graphviz_missing() else COULD_NOT) for graph in graphs]
    drawn = drawing.draw_all([(source, "svg") for source in sources], seconds)
    return [_svg(graph, picture, seconds) for graph, picture in zip(graphs, drawn)]


def _svg(graph: Graph, picture: bytes | drawing.NotDrawn, seconds: float | None) -> str:
    if isinstance(picture, bytes):
        text = picture.decode("utf-8", "replace")
        if "<svg" in text:
            return text[text.index("<svg"):]  # without the XML prologue, so that the SVG can sit in HTML
        picture = drawing.NotDrawn(drawing.FAILED)
    if picture.why in (drawing.SLOW, drawing.LARGE):
        return lines_svg(textwrap.wrap(f"(This graph was {not_drawn(picture.why, seconds)}. The checks and "
                                       f"their points do not depend on it.)", 90))
    return text_svg(graph, AS_TEXT if picture.why == drawing.MISSING else COULD_NOT)


def not_drawn(why: str, seconds: float | None = None) -> str:
    """Why a graph has no picture, after "This graph was": SLOW or LARGE (drawing.py)."""
    if why == drawing.SLOW:
        return (f"not drawn: Graphviz took more than "
                f"{config.DRAW_SECONDS if seconds is None else seconds:g} s to lay it out")
    return "not drawn: it is too large for the memory and output the grader gives Graphviz"


def text_svg(graph: Graph, heading: str = COULD_NOT) -> str:
    """The graph as lines of escaped text in an SVG: the heading, each node, then each edge (tail -> head)."""
    names = {node: " / ".join(line.strip() for line in plain_label(label).splitlines()) or node
             for node, label, _ in graph.nodes}
    lines = [heading]
    lines += [f"{names[node]} [{kind}]" for node, _, kind in graph.nodes]
    lines += [f"{names.get(tail, tail)} -> {names.get(head, head)}" for tail, head, _ in graph.edges]
    return lines_svg(lines)


def lines_svg(lines: list[str]) -> str:
    """Lines of text, escaped, in an SVG."""
    height = 16 * len(lines) + 8
    width = 8 + 7 * max((len(line) for line in lines), default=0)
    texts = "".join(f'<text x="4" y="{16 * (i + 1)}">{escape(line)}</text>' for i, line in enumerate(lines))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="monospace" font-size="11">{texts}</svg>')


def draw(*roots, params: dict | None = None, show_saved: bool = False, show_attrs: bool = False,
         **tensors) -> Graph:
    """torchviz.make_dot with stable node names, so that a notebook's output is the same on every run.

        draw(grad_x=grad_x, x=x, out=out)      # name the tensors: each named tensor is labelled
        draw(y, params={"x": x}, show_saved=True)   # or exactly as torchviz.make_dot(y, params=...)

    Tensors saved by a custom Function's save_for_backward are always drawn (orange); show_saved=True adds
    those PyTorch's own operations save. Call it before backward() frees the graph, or pass
    retain_graph=True / create_graph=True.
    """
    if roots:
        root = roots[0] if len(roots) == 1 else tuple(roots)
        return make_dot(root, params=dict(params or {}, **tensors), show_saved=show_saved,
                        show_attrs=show_attrs)
    return graph_of(show_saved=show_saved, **tensors)
