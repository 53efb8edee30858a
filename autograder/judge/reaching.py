"""Reaching into the grader, read in the grader from a submission's source: its cells and helper modules
are parsed with ast, never run, so nothing the submission does in its worker can hide what is written.

A grading worker runs the submission beside the code that measures it (docs/instructors.md, "What a
takeover can do"): whatever runs there can find the frames above its calls, the garbage collector's
objects, the grader's modules or the worker's file descriptors, and answer the grader in the worker's
place. No right submission needs any of that. `scan` lists every place the source does it, or hides what
it does (code built from strings, attributes looked up by names built while it runs); reach_names.py
says which names count and why. A flagged submission scores nothing on the problems it may have touched
until the instructor accepts it (flags.py, term/rules.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from autograder.course.setup_cell import is_setup_cell
from autograder.judge import reach_names as names

MAX_REACHES = 40  # listed per submission; the first ones say enough


@dataclass(frozen=True)
class Reach:
    """One place of the source that reaches: the code cell (1-based) or helper module, the line, what it
    does (reach_names: a phrase and the name used) and the line's text."""

    source: int | str
    line: int
    what: str
    text: str


def scan(cells: list[str], modules: dict[str, str] | None = None, instructors: frozenset[int] = frozenset()
         ) -> list[Reach]:
    """Every reach in the cells (as the worker runs them) and the helper modules, in order, at most
    MAX_REACHES. A cell that does not parse does not run either, and is skipped; so is the course's own
    set-up cell (it imports subprocess and importlib to install the package where it is missing), and the
    instructor's cells (1-based: nbgrader's read-only helpers and tests, which may inspect a Function as
    a test does; while running they are watched like any cell)."""
    found: list[Reach] = []
    sources = [(i, s) for i, s in enumerate(cells, 1) if not is_setup_cell(str(s)) and i not in instructors]
    sources += sorted((modules or {}).items())
    for where, source in sources:
        found += _read(str(source), where)
        if len(found) >= MAX_REACHES:
            break
    return found[:MAX_REACHES]


@lru_cache(maxsize=256)
def _read(source: str, where: int | str) -> tuple[Reach, ...]:
    """One cell or module read once for the whole class: the cells a notebook is handed out with recur, at
    the same place, in every submission."""
    return tuple(_Reader(source, where).read())


def _dotted(node: ast.AST) -> str:
    """a.b.c for an attribute chain on a name, else ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _module_reach(module: str) -> str | None:
    """The phrase for a module no right submission imports (a.b.c is such a module when a, a.b or a.b.c
    is), else None."""
    parts = module.split(".")
    for k in range(1, len(parts) + 1):
        found = names.MODULES.get(".".join(parts[:k]))
        if found:
            return found
    return None


class _Reader(ast.NodeVisitor):
    def __init__(self, source: str, where: int | str):
        self.source, self.where = source, where
        self.lines = source.splitlines()
        self.found: list[Reach] = []
        self.aliases: dict[str, str] = {}  # a local name -> a module of names.ALLOWED it stands for
        self.handled: set[int] = set()  # ids of Name nodes already judged as part of a bigger node

    def read(self) -> list[Reach]:
        try:
            tree = ast.parse(self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
        for node in ast.walk(tree):  # every module alias, wherever imported, before any use is judged
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    bound = alias.name if alias.asname else top
                    if bound in names.ALLOWED or bound in names.DENIED:
                        self.aliases[alias.asname or top] = bound
        try:
            self.visit(tree)
        except RecursionError:
            self.flag(tree, f"{names.DYNAMIC} (code nested too deep to read)")
        return self.found

    def flag(self, node: ast.AST, what: str) -> None:
        line = getattr(node, "lineno", 1)
        text = self.lines[line - 1].strip()[:160] if 0 < line <= len(self.lines) else ""
        reach = Reach(self.where, line, what, text)
        if reach not in self.found:
            self.found.append(reach)

    # -- imports --------------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imported(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return  # the submission's own helper modules
        self.imported(node, node.module)
        allowed = names.ALLOWED.get(node.module)
        for alias in node.names:
            if alias.name == "*" and node.module in names.ALLOWED_WHAT:
                self.flag(node, f"{names.ALLOWED_WHAT[node.module]} (from {node.module} import *)")
            elif (allowed is not None and alias.name not in allowed) \
                    or alias.name in names.DENIED.get(node.module, ()):
                self.flag(node, f"{names.ALLOWED_WHAT[node.module]} ({node.module}.{alias.name})")
            elif alias.name in names.ATTRIBUTES:
                self.flag(node, f"{names.ATTRIBUTES[alias.name]} ({node.module}.{alias.name})")
            else:
                self.imported(node, f"{node.module}.{alias.name}")

    def imported(self, node: ast.AST, module: str) -> None:
        found = _module_reach(module)
        if found:
            self.flag(node, f"{found} (import {module})")
            return
        top, _, rest = module.partition(".")
        first = rest.split(".")[0]
        if rest and ((top in names.ALLOWED and first not in names.ALLOWED[top])
                     or first in names.DENIED.get(top, ())):
            self.flag(node, f"{names.ALLOWED_WHAT[top]} (import {module})")

    # -- names, attributes, calls ----------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in names.BY_STRING:
            self.handled.add(id(func))
            named = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(named, ast.Constant) and isinstance(named.value, str)):
                self.flag(node, f"{names.BY_NAME} ({func.id} with a name that is not written out)")
            elif named.value in names.ATTRIBUTES or named.value in names.BUILTINS:
                self.flag(node, f"{names.ATTRIBUTES.get(named.value, names.BY_NAME)} "
                                f"({func.id}(..., {named.value!r}))")
            else:
                self.handled.add(id(named))  # a plain attribute name, as ctx.needs_input_grad
        for keyword in node.keywords:
            if keyword.arg == "allow_pickle":
                self.flag(node, f"{names.DYNAMIC} (allow_pickle)")
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load) or id(node) in self.handled:
            return
        if node.id in names.BUILTINS:
            self.flag(node, f"{names.BUILTINS[node.id]} ({node.id})")
        elif node.id in names.BY_STRING:
            self.flag(node, f"{names.BY_NAME} ({node.id} passed on as a value)")
        elif node.id in self.aliases:
            module = self.aliases[node.id]
            self.flag(node, f"{names.ALLOWED_WHAT[module]} (the module {module} passed on as a value)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = node.value
        if isinstance(base, ast.Name) and base.id in self.aliases:
            self.handled.add(id(base))
            module = self.aliases[base.id]
            allowed, denied = names.ALLOWED.get(module), names.DENIED.get(module, ())
            if (allowed is not None and node.attr not in allowed) or node.attr in denied:
                self.flag(node, f"{names.ALLOWED_WHAT[module]} ({module}.{node.attr})")
        if node.attr in names.C_ALLOWED and isinstance(base, ast.Attribute) and base.attr == "_C":
            self.handled.add(id(base))
        if node.attr in names.ATTRIBUTES and id(node) not in self.handled:
            self.flag(node, f"{names.ATTRIBUTES[node.attr]} ({_dotted(node) or '.' + node.attr})")
        elif node.attr == "load" and _dotted(base) in ("torch", "torch.jit"):
            self.flag(node, f"{names.DYNAMIC} ({_dotted(node)}: it unpickles)")
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:
            if attr in names.ATTRIBUTES:
                self.flag(node, f"{names.ATTRIBUTES[attr]} (a match pattern reading {attr})")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.handled or not isinstance(node.value, (str, bytes)):
            return
        text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
        found = names.STRING_WORDS.search(text)
        if found:
            self.flag(node, f"{names.BY_NAME} ({found[0]!r} in a string)")
