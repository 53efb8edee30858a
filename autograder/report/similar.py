"""Near-identical submissions, for report.html: pairs of students whose own code is the same once
comments, docstrings, layout and the names they chose are taken out. A hint of where to look, never a
verdict: students may have worked together as allowed, or started from the same published answer.

- Each top-level statement of a submission (a class, a function, a line of scratch work) is one *unit*,
  normalised through Python's own parser: `ast.unparse` drops comments and layout, docstrings and other
  bare strings are removed, and every name the unit binds (arguments, variables, the functions and
  classes it defines) becomes `_1`, `_2`... in order of appearance, while the names it only uses
  (`torch`, `Function`, `ctx.saved_tensors`'s attribute) stay. A cell Python cannot parse is compared
  as its tokens without comments.
- Only what the student wrote is compared: units of the lesson's starter notebook (the student version
  in course/, when the grader has it) are left out, and so are runs of tokens that the starter holds or
  that many submissions share (more than COMMON_SHARE of the class and more than COMMON_AT_LEAST): the
  set-up every student ran, and the short answer most students find on their own.
- What remains is cut into shingles (runs of SHINGLE tokens within a unit); two submissions are listed
  when the shingles they share are at least THRESHOLD of those either has (Jaccard's index) and at least
  MIN_SHARED (a few lines: two nearly empty notebooks are not alike). Shingles are counted through an
  inverted index, so a class costs the pairs that share something, not every pair.
- A submission is code a student wrote, untrusted: only its first MAX_CODE characters are compared (five
  times a whole lesson's), and a line longer than MAX_LINE (no one writes one; an unterminated string
  repeated makes Python's tokenizer quadratic) is cut into tokens by _TOKEN alone, which is linear, so
  that one submission costs at most a few seconds of the report.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

SHINGLE = 6  # tokens
THRESHOLD = 0.7  # Jaccard's index of two submissions' own shingles
MIN_SHARED = 30  # shingles in common: about four lines of code
COMMON_SHARE, COMMON_AT_LEAST = 0.1, 10  # a shingle in more submissions than both is everyone's
MAX_CODE, MAX_LINE = 100_000, 1_000  # characters (see the module's docstring)
# a string left open runs to the end of its line: read from every quote to the end, it was quadratic
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|'(?:[^'\\\n]|\\.)*'?|\"(?:[^\"\\\n]|\\.)*\"?|\S")


@dataclass(frozen=True)
class Unit:
    """A normalised top-level statement: its label ("class KillHead", "def helper", "" for the rest)."""

    label: str
    text: str

    @property
    def tokens(self) -> list[str]:
        return _TOKEN.findall(self.text)


@dataclass
class Pair:
    a: str
    b: str
    similarity: float  # Jaccard's index of their own shingles
    shared: int  # shingles in common
    identical: list[str] = field(default_factory=list)  # definitions the same after normalisation


class _Renamer(ast.NodeTransformer):
    """Every name bound in a unit becomes _1, _2... in order of first appearance."""

    def __init__(self, bound: set[str]):
        self.bound, self.names = bound, {}

    def new(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.names.setdefault(name, f"_{len(self.names) + 1}")

    def visit_Name(self, node):
        node.id = self.new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.new(node.arg)
        node.annotation = None
        return node

    def _definition(self, node):
        node.name = self.new(node.name)
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_Expr(self, node):  # a docstring or any other bare string does nothing
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None
        return self.generic_visit(node)


def _bound(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def _label(node: ast.stmt) -> str:
    if isinstance(node, ast.ClassDef):
        return f"class {node.name}"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"def {node.name}"
    return ""


def _normalised(node: ast.stmt) -> str:
    renamed = _Renamer(_bound(node)).visit(node)
    if renamed is None:
        return ""
    ast.fix_missing_locations(renamed)
    return ast.unparse(renamed)


def units_of(cell: str, cache: dict[str, list[Unit]] | None = None) -> list[Unit]:
    """The normalised units of one cell (cached by its text: most cells are the same in every
    submission)."""
    if cache is not None and cell in cache:
        return cache[cell]
    try:
        tree = ast.parse(cell)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        units = [Unit("", " ".join(_raw_tokens(cell)))]
    else:
        units = []
        for node in tree.body:
            label = _label(node)
            try:
                text = _normalised(node)
            except (RecursionError, ValueError):
                text = " ".join(_raw_tokens(ast.get_source_segment(cell, node) or ""))
            if text:
                units.append(Unit(label, text))
    if cache is not None:
        cache[cell] = units
    return units


def _raw_tokens(code: str) -> list[str]:
    """Tokens of code Python cannot parse, comments left out."""
    if any(len(line) > MAX_LINE for line in code.splitlines()):
        return _TOKEN.findall(re.sub(r"#[^\n]*", "", code))
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline)
                if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                  tokenize.DEDENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return _TOKEN.findall(re.sub(r"#[^\n]*", "", code))


@functools.lru_cache(maxsize=4096)  # by text: most units are the same in many submissions
def _shingles_of(text: str) -> frozenset[int]:
    tokens = _TOKEN.findall(text)
    # hash() of a str: fast and the same for one text within a run, which is all the comparison needs
    return frozenset(hash(" ".join(tokens[i:i + SHINGLE])) for i in range(max(1, len(tokens) - SHINGLE + 1)))


def shingles(unit: Unit) -> frozenset[int]:
    """The unit's runs of SHINGLE tokens, hashed."""
    return _shingles_of(unit.text)


def near_identical(codes: dict[str, list[str]], starter: list[str] = ()) -> list[Pair]:
    """The pairs of submissions (id -> code cells) whose own code is near-identical, most alike first."""
    cache: dict[str, list[Unit]] = {}
    left_out = {u.text for cell in starter for u in units_of(cell, cache)}
    starter_shingles = set().union(*(shingles(Unit("", t)) for t in left_out)) if left_out else set()
    own: dict[str, set[int]] = {}
    definitions: dict[str, dict[str, str]] = {}  # id -> normalised text -> label
    for sid, cells in codes.items():
        units = [u for cell in _within(cells) for u in units_of(cell, cache) if u.text not in left_out]
        own[sid] = set().union(*map(shingles, units)) - starter_shingles if units else set()
        definitions[sid] = {u.text: u.label for u in units if u.label}
    counts = Counter(s for mine in own.values() for s in mine)
    common = common_count(len(codes))
    holders: dict[int, list[str]] = {}
    for sid, mine in own.items():
        mine -= {s for s in mine if counts[s] > common}
        for s in mine:
            holders.setdefault(s, []).append(sid)
    together = Counter(pair for ids in holders.values() for pair in combinations(ids, 2))
    texts = Counter(t for d in definitions.values() for t in d)
    pairs = []
    for (a, b), shared in together.items():
        similarity = shared / (len(own[a]) + len(own[b]) - shared)
        if shared < MIN_SHARED or similarity < THRESHOLD:
            continue
        same = sorted({definitions[a][t] for t in definitions[a].keys() & definitions[b].keys()
                       if texts[t] <= common})
        pairs.append(Pair(a, b, round(similarity, 3), shared, same))
    return sorted(pairs, key=lambda p: (-p.similarity, p.a, p.b))


def _within(cells: list[str], budget: int = MAX_CODE) -> list[str]:
    """The cells up to budget characters in all, the last one cut there."""
    out = []
    for cell in cells:
        if budget <= 0:
            break
        out.append(cell[:budget])
        budget -= len(cell)
    return out


def common_count(submissions: int) -> float:
    """Code in more submissions than this is everyone's (see the module's docstring)."""
    return max(COMMON_AT_LEAST, COMMON_SHARE * submissions)


def groups(pairs: list[Pair]) -> list[list[str]]:
    """The students linked by the pairs, each group in order of first appearance, largest first."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for p in pairs:
        parent[root(p.a)] = root(p.b)
    members: dict[str, list[str]] = {}
    for p in pairs:
        for sid in (p.a, p.b):
            group = members.setdefault(root(sid), [])
            if sid not in group:
                group.append(sid)
    return sorted((sorted(g) for g in members.values()), key=lambda g: (-len(g), g))
