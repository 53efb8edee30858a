"""The course site's own HTML: toggles that say what they hide, and images that say what they show.

- `{course-toggle} Show the explanation` folds its content behind a native <details> whose summary is
  that label (and "Hide ..." once open): no script needed, and a screen reader reads the label.
- myst-nb's folded code cells lose their generic aria-label "Toggle hidden content", so that their
  visible prompt ("Show solution", "Show the answer") is what assistive technology announces.
- Under a "What goes wrong here?" heading, everything after the first cell's output (the explanation,
  the fix) folds behind "Show the explanation": the reader guesses first, as in a Predict section.
- Code keeps its indentation when a long line wraps: every line of highlighted code is a box that knows
  its indentation (`--i`, short: a lesson has a thousand lines), so that course.css continues it below,
  indented further, never at column 0.
- An image in a cell output gets alt text from its content: an autograd graph lists its Functions and
  tensors, a plot names its title and axes as the cell's code sets them.
"""

from __future__ import annotations

import hashlib
import re
from html import escape
from pathlib import Path
from typing import ClassVar
from xml.etree import ElementTree

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from pygments.formatters import HtmlFormatter

SVG = "{http://www.w3.org/2000/svg}"


class course_toggle(nodes.Element):
    """Content folded behind a labelled <details>."""


class CourseToggle(Directive):
    required_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict] = {"hide": directives.unchanged}

    def run(self):
        self.assert_has_content()
        show = self.arguments[0].strip()
        hide = self.options.get("hide") or re.sub(r"^Show\b", "Hide", show)
        node = course_toggle(show=show, hide=hide)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def summary(show: str, hide: str) -> str:
    return ('<summary><span class="course-toggle__show">' + escape(show) + "</span>"
            '<span class="course-toggle__hide">' + escape(hide) + "</span></summary>\n")


def visit_course_toggle(self, node):
    self.body.append('<details class="course-toggle">\n' + summary(node["show"], node["hide"])
                     + '<div class="course-toggle__body">\n')


def depart_course_toggle(self, node):
    self.body.append("</div>\n</details>\n")


def visit_hidden_cell(self, node):
    """myst-nb's folded cell part, with the visible prompt as its only label."""
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>\n'
                     f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n'
                     f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n'
                     "</summary>\n")


def depart_hidden_cell(self, node):
    self.body.append("</details>\n")


TAG = re.compile(r"<[^>]*>")
WHITESPACE = re.compile(r'<span class="w">( +)</span>')


class LineFormatter(HtmlFormatter):
    """Pygments' HTML, each line in a <span class="code-line" style="--i:N">, N its indentation
    in columns (no style for 0). The newline stays outside the span, so that copying the code copies it
    as it was."""

    def _format_lines(self, tokensource):
        for kind, line in super()._format_lines(tokensource):
            body = line.rstrip("\n")
            if kind != 1 or not body:
                yield kind, line
                continue
            text = TAG.sub("", body).expandtabs(4)
            indent = len(text) - len(text.lstrip(" "))
            # Bytes count on a long lesson (2 MB a page): no style where the indentation is course.css's
            # default 0, and spaces without the <span class="w"> that changes nothing about them.
            style = f' style="--i:{indent}"' if indent else ""
            spans = WHITESPACE.sub(r"\1", body)
            yield kind, f'<span class="code-line"{style}>{spans}</span>{line[len(body):]}'


def use_line_formatter(app):
    highlighter = getattr(app.builder, "highlighter", None)
    if highlighter is not None and getattr(highlighter, "dest", "html") == "html":
        highlighter.formatter = LineFormatter


WHAT_GOES_WRONG = "What goes wrong here?"


def has_output(node) -> bool:
    children = [child for child in node.children if isinstance(child, nodes.Element)]
    return node.get("nb_element") == "cell_code" and any(
        child.get("nb_element") == "cell_code_output" for child in children)


def fold_explanations(doctree) -> int:
    """In each "What goes wrong here?" section, what follows the first cell with an output (the first
    code cell, where none has one) up to the next heading moves into a toggle "Show the explanation".
    Returns how many were folded."""
    folded = 0
    for section in list(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if title is None or title.parent is not section or not title.astext().startswith(WHAT_GOES_WRONG):
            continue
        children = list(section.children)
        start = next((i for i, child in enumerate(children) if has_output(child)), None)
        if start is None:  # the student edition (make site SOLUTIONS=0): the cells have no outputs
            start = next((i for i, child in enumerate(children) if child.get("nb_element") == "cell_code"),
                         None)
        if start is None:
            continue
        end = next((i for i, child in enumerate(children) if isinstance(child, nodes.section)), len(children))
        body = children[start + 1:end]
        if not body:
            continue
        toggle = course_toggle(show="Show the explanation", hide="Hide the explanation")
        for child in body:
            section.remove(child)
            toggle += child
        section.insert(start + 1, toggle)
        folded += 1
    return folded


def graph_alt(svg: bytes) -> str | None:
    """"Autograd graph: Functions ...; tensors ..." for a graph drawn by graphviz, else None."""
    try:
        root = ElementTree.fromstring(svg)
    except ElementTree.ParseError:
        return None
    functions, tensors = [], []
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "node":
            continue
        label = " ".join(t.text.strip() for t in group.iter(f"{SVG}text") if t.text and t.text.strip())
        if not label:
            continue
        name = label.split(" ", 1)[0]
        is_function = name.endswith("Grad") or "Backward" in name
        target = functions if is_function else tensors
        if label not in target:
            target.append(label)
    if not functions and not tensors:
        return None
    parts = []
    if functions:
        parts.append("Functions " + ", ".join(functions))
    if tensors:
        parts.append("tensors " + ", ".join(tensors))
    return "Autograd graph: " + "; ".join(parts) + "."


def plot_alt(code: str) -> str:
    """"Plot: <title>, <y label> against <x label>", from the calls that set them in the cell's code."""
    def first(name):
        # name("text"), set_name("text") or name="text" (as in ax.set(xlabel=...))
        match = re.search(rf"\b(?:set_)?{name}(?:\(\s*|\s*=\s*)[rf]?([\"'])(.+?)\1", code)
        return re.sub(r"[${}\\]", "", match.group(2)) if match else None
    kind = "Heat map" if "imshow" in code or "pcolormesh" in code else "Plot"
    title, x, y = first("title"), first("xlabel"), first("ylabel")
    words = [title] if title else []
    if x and y:
        log_scale = "log" in code.split("ylabel", 1)[-1][:60]
        words.append(f"{y} against {x}" + (" (log scale)" if log_scale else ""))
    return f"{kind} drawn by the cell above" + (": " + ", ".join(words) if words else "") + "."


def cell_source(node) -> str:
    """The code of the notebook cell an output image belongs to."""
    while node is not None and node.get("nb_element") != "cell_code":
        node = node.parent
    if node is None:
        return ""
    sources = [n for n in node.findall(nodes.literal_block)]
    return sources[0].astext() if sources else ""


def describe_images(app, doctree, docname):
    """Alt text for every cell-output image that has none (myst-nb gives it its hashed file name)."""
    for image in doctree.findall(nodes.image):
        uri = image.get("uri", "")
        if image.get("alt") and image["alt"] != uri:
            continue
        path = Path(uri) if Path(uri).is_absolute() else Path(app.srcdir) / uri
        alt = None
        if path.suffix == ".svg" and path.exists():
            alt = graph_alt(path.read_bytes())
        if alt is None:
            alt = plot_alt(cell_source(image))
        image["alt"] = alt


def setup(app):
    from myst_nb.sphinx_ import HideCodeCellNode

    # Sphinx re-reads every page when an "env" setting changes: this one changes with the site's extensions
    # (this file, api_links.py), so that an edit there reaches every page (the build otherwise re-reads only
    # the pages whose source changed).
    source_hash = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(Path(__file__).parent.glob("*.py"))))
    source_hash = source_hash.hexdigest()
    app.add_config_value("course_html_source", source_hash, "env")
    app.add_node(course_toggle, html=(visit_course_toggle, depart_course_toggle))
    app.add_directive("course-toggle", CourseToggle)
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_hidden_cell))
    app.connect("doctree-read", lambda app, doctree: describe_images(app, doctree, app.env.docname))
    app.connect("doctree-read", lambda app, doctree: fold_explanations(doctree))
    app.connect("builder-inited", use_line_formatter)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
