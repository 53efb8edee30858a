"""How often each page uses each word, and the section that uses it most: the search page's ranking.

Sphinx's search index says which pages hold a word, not how often: a lesson that teaches
`create_graph` ranked below one that mentions it twice. This extension counts, for every page, each
word of its prose (inline code included, as a learner searches for `opcheck` or `create_graph`; code
cells left out) and the section where the word is most frequent, and writes them into
`_static/course-terms.js`, which only the search page loads; site/_static/course-search.js ranks and
links the results with it.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from docutils import nodes

WORD = re.compile(r"[a-z_][a-z0-9_]{2,}")
FILE = "_static/course-terms.js"
MIN_USES = 3


def own_prose(section: nodes.section) -> str:
    """The prose of a section without its subsections: its text outside code blocks and cell outputs
    (where every Function calls `save_for_backward`, whichever lesson teaches it)."""
    words = []
    for text in section.findall(nodes.Text):
        node = text.parent
        while node is not None and not isinstance(node, (nodes.section, nodes.literal_block)):
            node = node.parent
        if node is section:
            words.append(text.astext())
    return " ".join(words)


def count_words(app, doctree, docname) -> None:
    pages = app.env.__dict__.setdefault("course_terms", {})
    total: Counter = Counter()
    best: dict[str, tuple[int, str]] = {}
    for section in doctree.findall(nodes.section):
        if not section["ids"]:
            continue
        counts = Counter(WORD.findall(own_prose(section).lower()))
        total.update(counts)
        for word, count in counts.items():
            if word not in best or count > best[word][0]:
                best[word] = (count, section["ids"][0])
    top = doctree.next_node(nodes.section)
    top_id = top["ids"][0] if top is not None and top["ids"] else None
    # {word: [count, anchor of the section that uses it most, or "" for the page's top]}
    pages[docname] = {word: [count, "" if best[word][1] == top_id else best[word][1]]
                      for word, count in total.items()}


def write_terms(app, exception) -> None:
    """window.COURSE_TERMS = {docs: [docname, ...], anchors: [anchor, ...], terms: {word: [[doc, count,
    anchor], ...]}}: indexes into the two lists, for the pages that use the word at least MIN_USES times
    (a page that uses it once or twice does not teach it; Sphinx's own index still finds it)."""
    if exception is not None or app.builder.format != "html":
        return
    pages = getattr(app.env, "course_terms", {})
    docs = sorted(pages)
    anchors = sorted({anchor for words in pages.values() for count, anchor in words.values()
                      if count >= MIN_USES})
    where = {anchor: index for index, anchor in enumerate(anchors)}
    terms: dict[str, list] = defaultdict(list)
    for index, docname in enumerate(docs):
        for word, (count, anchor) in pages[docname].items():
            if count >= MIN_USES:
                terms[word].append([index, count, where[anchor]])
    table = {"docs": docs, "anchors": anchors, "terms": dict(sorted(terms.items()))}
    script = "window.COURSE_TERMS = " + json.dumps(table, separators=(",", ":")) + ";\n"
    (Path(app.outdir) / FILE).write_text(script, encoding="utf-8")


def search_page_only(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":
        app.add_js_file(FILE.removeprefix("_static/"), loading_method="defer")


def setup(app):
    app.connect("doctree-resolved", count_words)
    app.connect("html-page-context", search_page_only)
    app.connect("build-finished", write_terms)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
