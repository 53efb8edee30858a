"""Does the lessons' math read right on the site? Each markdown cell is parsed as the site parses it
(MyST: CommonMark with the dollarmath and amsmath extensions, site/conf.py), without building the site.

A `$` left in the text outside math means a formula was not recognised (a display `$$` in the middle of a
paragraph pairs its dollars wrongly, and its lines starting with + or - become bullets); `\\_` inside
`\\text{...}` shows its backslash, since MathJax's text mode does not read it.
"""

from __future__ import annotations

import html
import re

import nbformat
import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from tests.conftest import ROOT

LESSONS = sorted(path.name for path in (ROOT / "solutions").glob("*.ipynb"))
MATH = re.compile(r'<(span|div) class="math[^"]*">(.*?)</\1>', re.DOTALL)
CODE = re.compile(r"<code>.*?</code>|<pre>.*?</pre>", re.DOTALL)
TEXT_UNDERSCORE = re.compile(r"\\text\{[^}]*\\_")


def rendered(source: str) -> str:
    return MarkdownIt("commonmark").use(dollarmath_plugin).use(amsmath_plugin).render(source)


@pytest.mark.parametrize("name", LESSONS)
def test_every_formula_is_recognised(name):
    """No `$` outside math and code in any markdown cell of solutions/<lesson>."""
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    stray = []
    for index, cell in enumerate(nb.cells, 1):
        if cell.cell_type != "markdown":
            continue
        text = CODE.sub("", MATH.sub("", rendered(cell.source)))
        if "$" in html.unescape(text):
            stray.append(index)
    assert stray == [], f"solutions/{name}: cells {stray} have a formula the site does not recognise"


@pytest.mark.parametrize("name", LESSONS)
def test_no_escaped_underscore_in_text_mode(name):
    r"""No `\_` inside `\text{...}` (write `\mathrm{grad\_x}`): MathJax would show the backslash."""
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    found = [index for index, cell in enumerate(nb.cells, 1)
             if cell.cell_type == "markdown" and TEXT_UNDERSCORE.search(cell.source)]
    assert found == [], f"solutions/{name}: cells {found} have \\_ inside \\text{{...}}"
