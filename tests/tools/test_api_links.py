"""The site's links from PyTorch API names to their documentation pages (site/_ext/api_links.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from tests.conftest import ROOT

markdown_it = pytest.importorskip("markdown_it", reason="the site's packages (make site) parse the lessons")


def load_api_links():
    spec = importlib.util.spec_from_file_location("api_links", ROOT / "site" / "_ext" / "api_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_links = load_api_links()

# A page of the stable documentation: generated/<qualified name>.html, a page of its own (func.html,
# notes/extending.html), or an anchor in one (autograd.html#torch.autograd.Function).
PAGE = re.compile(r"(?P<page>generated/(?P<generated>torch(?:\.\w+)+)|[a-z_]+(?:/[a-z_.]+)?)\.html"
                  r"(?:#(?P<anchor>torch(?:\.\w+)+|[a-z-]+))?")


def lesson_inline_code(path: Path) -> list[str]:
    """Every inline code span of the lesson's markdown cells (code blocks left out)."""
    parser = markdown_it.MarkdownIt("commonmark")
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        for block in parser.parse(cell.source):
            found += [child.content for child in block.children or [] if child.type == "code_inline"]
    return found


LESSONS = sorted((ROOT / "solutions").glob("[0-9][0-9]-*.ipynb"))


@pytest.mark.parametrize("name", sorted(api_links.API))
def test_every_address_is_a_documentation_page_of_its_name(name):
    """Is every address a page of docs.pytorch.org's stable documentation, whose page or anchor is the
    API it is for (the same last part of the name), or a module's or a note's page?"""
    url = api_links.url(name)
    assert url.startswith("https://docs.pytorch.org/docs/stable/"), url
    match = PAGE.fullmatch(url.removeprefix(api_links.DOCS))
    assert match, f"{name}: {url} is not shaped like a page of the documentation"
    documented = match.group("generated") or (match.group("anchor") if "." in (match.group("anchor") or "")
                                              else None)
    last = name.split(".")[-1]
    if documented:
        assert documented.split(".")[-1] == last, f"{name}: {url} documents {documented}"
    elif not match.group("page").startswith("notes/"):
        assert match.group("page") == last, f"{name}: {url} is not the page of module {name}"


def test_every_torch_name_of_the_lessons_is_mapped_or_listed_as_unmapped():
    """Is every `torch.`-qualified name the lessons write as inline code either linked to its page or
    listed, with a reason, as one without a page?"""
    assert LESSONS, "no lessons in solutions/"
    names = {api_links.api_name(code) for path in LESSONS for code in lesson_inline_code(path)}
    torch_names = {name for name in names if name and name.startswith("torch.")}
    assert torch_names, "the lessons name no torch API in inline code: is the parser reading them?"
    missing = sorted(torch_names - set(api_links.API) - set(api_links.UNMAPPED))
    assert missing == [], f"add these to API (or UNMAPPED) in site/_ext/api_links.py: {missing}"
    assert not set(api_links.API) & set(api_links.UNMAPPED)


@pytest.mark.parametrize(("code", "name"), [
    ("torch.autograd.gradcheck", "torch.autograd.gradcheck"),
    ("torch.no_grad()", "torch.no_grad"),
    ("with torch.no_grad():", "torch.no_grad"),
    ("@once_differentiable", "once_differentiable"),
    ("torch.library.custom_op(\"namespace::name\", mutates_args=...)", "torch.library.custom_op"),
    ("expx = torch.exp(x)", None),
    ("return grad_out * torch.cosh(x)", None),
])
def test_a_name_is_read_from_calls_decorators_and_with_but_not_from_statements(code, name):
    assert api_links.api_name(code) == name


def parse(rst: str):
    document = new_document("<lesson>", get_default_settings(Parser))
    Parser().parse(rst, document)
    return document


PAGE_RST = """
Lesson
======

Checking with ``gradcheck``
---------------------------

``gradcheck`` compares, and ``gradcheck`` again. `the docs <https://example.org>`__ ``x = 1``.

Section two
-----------

Once more ``torch.autograd.gradcheck`` and ``gradcheck``, then ``with torch.no_grad():``.
"""


def test_the_first_mention_in_each_section_links_headings_and_statements_do_not():
    """Is the first mention of a page in each section a link (once, whichever name it goes by), and
    are headings, existing links and statements left as they are?"""
    document = parse(PAGE_RST)
    api_links.link_api_names(None, document)
    links = [(ref["refuri"], ref.astext()) for ref in document.findall(nodes.reference)
             if "api-link" in ref["classes"]]
    gradcheck = api_links.url("gradcheck")
    assert links == [(gradcheck, "gradcheck"), (gradcheck, "torch.autograd.gradcheck"),
                     (api_links.url("torch.no_grad"), "with torch.no_grad():")]
    titles = list(document.findall(nodes.title))
    assert not any(isinstance(node, nodes.reference) for title in titles for node in title.findall())
