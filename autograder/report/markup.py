"""The text backend: blocks of feedback (paragraphs, preformatted text, lists, figures) written as
html, markdown or plain text, Gradescope's three output formats.

A figure is a Picture (figures.py) with its panels as PNG data addresses (png.py), or None where a
picture was left out; its title and the words under it are the model's, as on the HTML pages. Every
text is escaped for the format here (html.escape, or a backslash before markdown's own characters);
plain text is left as it is.
"""

from __future__ import annotations

import html
from typing import Any

from autograder.report.figures import Picture

LEFT_OUT = "picture left out, the results are full"
# caption, data address (None: left out), width, height (0: as drawn)
Image = tuple[str, str | None, int, int]


def md_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\`*_[]<>#|~" else c for c in text)


def md_code(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def _figure(p: Picture, images: list[Image], fmt: str) -> str:
    if fmt == "html":
        parts = [f"<p><b>{html.escape(p.title)}</b></p><p>"]
        for caption, uri, width, height in images:
            if uri:
                size = f' width="{width}" height="{height}"' if width else ""
                parts.append(f'{html.escape(caption)}: <img src="{uri}" alt="{html.escape(caption)}" '
                             f'title="{html.escape(caption)}"{size}>&nbsp;&nbsp; ')
            else:
                parts.append(f"[{html.escape(caption)}: {LEFT_OUT}] ")
        parts.append(f"</p><p><i>{html.escape(p.note)}</i></p>")
        return "".join(parts)
    lines = [f"**{md_escape(p.title)}**", ""]
    for caption, uri, _, _ in images:
        lines.append(f"{md_escape(caption)}: ![{md_escape(caption)}]({uri})" if uri else
                     f"\\[{md_escape(caption)}: {LEFT_OUT}\\]")
        lines.append("")
    lines.append(f"*{md_escape(p.note)}*")
    return "\n".join(lines)


def _block(kind: str, content: Any, fmt: str) -> str:
    if kind == "figure":
        return _figure(*content, fmt)
    if kind == "list":
        if fmt == "html":
            return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in content) + "</ul>"
        return "\n".join(f"- {md_escape(line) if fmt == 'md' else line}" for line in content)
    text = str(content)
    if kind == "pre":
        return f"<pre>{html.escape(text)}</pre>" if fmt == "html" else md_code(text) if fmt == "md" else text
    return f"<p>{html.escape(text)}</p>" if fmt == "html" else md_escape(text) if fmt == "md" else text


def render(blocks: list[tuple[str, Any]], fmt: str) -> str:
    """Blocks ("p", text), ("pre", text), ("list", lines) or ("figure", (picture, images)) in one format."""
    return ("\n" if fmt == "html" else "\n\n").join(_block(kind, content, fmt) for kind, content in blocks)
