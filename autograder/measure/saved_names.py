"""The names a Function's code gives its saved tensors, read from its source and never run: what forward
(or setup_context) passes to ctx.save_for_backward, and the names backward unpacks ctx.saved_tensors
into. The judge compares the two to tell a backward that unpacks them in another order than they were
saved (judge/saved_order.py), a mistake no number shows as such."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from types import FunctionType
from typing import Any

_PARSED: dict[int, tuple[Any, ast.AST | None]] = {}  # a function's tree, for the few reads of one measurement
_FILES: dict[str, tuple[list[str], dict]] = {}  # a file's (or cell's) lines and its defs, parsed once


def _tree(function: Any) -> ast.AST | None:
    """The parsed source of a function (backward's is read twice for a problem: unpacked and guarded
    names): parsed once, and kept with the function, so that its id cannot name another one later."""
    seen = _PARSED.get(id(function)) if type(function) is FunctionType else None
    if seen is not None and seen[0] is function:
        return seen[1]
    try:  # a notebook's cells and a worker's are in linecache, which getsource reads
        tree = _def_in_file(inspect.unwrap(function)) \
            or ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, ValueError):
        tree = None
    if type(function) is FunctionType:
        if len(_PARSED) > 256:  # a notebook redefining its Functions for hours
            _PARSED.clear()
        _PARSED[id(function)] = (function, tree)
    return tree


def _def_in_file(function: Any) -> ast.AST | None:
    """The function's `def` in the tree of the whole file or cell that holds it, found by its first line
    (its first decorator's) and name; None where it is not there as such. inspect.getsource finds a
    function's end by tokenizing in Python, about 0.5 ms a function, most of a worker's reading of names
    (it reads eight for four problems); a cell is parsed once, in C, for all its functions."""
    if type(function) is not FunctionType:
        return None
    code = function.__code__
    lines = linecache.getlines(code.co_filename, function.__globals__)
    if not lines:
        return None
    seen = _FILES.get(code.co_filename)
    if seen is None or seen[0] is not lines:  # linecache keeps one list per file while it is unchanged
        try:
            tree: ast.AST | None = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            tree = None
        defs: dict[tuple[int, str], ast.AST] = {}
        statements = [tree] if tree is not None else []
        while statements:  # statements only: a def is one, and expressions are most of a tree's nodes
            node = statements.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                defs.setdefault((first, node.name), node)
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                statements.extend(getattr(node, field, ()))
        if len(_FILES) > 64:
            _FILES.clear()
        seen = _FILES[code.co_filename] = (lines, defs)
    return seen[1].get((code.co_firstlineno, code.co_name))


def _names(nodes: list[ast.expr]) -> tuple[str, ...] | None:
    """Each node's name ("" for an expression such as x.exp()); None where a *star makes positions unknown."""
    if any(isinstance(n, ast.Starred) for n in nodes):
        return None
    return tuple(n.id if isinstance(n, ast.Name) else "" for n in nodes)


def _only(found: set[tuple[str, ...] | None]) -> list[str] | None:
    """The one list of names every such line of the code gives, or None when they differ (branches)."""
    return list(next(iter(found))) if len(found) == 1 and None not in found else None


def saved_names(cls: Any, base: Any) -> list[str] | None:
    """The arguments of ctx.save_for_backward(...) in cls's forward and its own setup_context."""
    found: set[tuple[str, ...] | None] = set()
    for method in ("forward", "setup_context"):
        function = getattr(cls, method, None)
        tree = _tree(function) if function is not getattr(base, method, None) else None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "save_for_backward" and not node.keywords:
                found.add(_names(node.args))
    return _only(found)


def unpacked_names(cls: Any) -> list[str] | None:
    """The names of `a, b = ctx.saved_tensors` in cls's backward."""
    tree = _tree(getattr(cls, "backward", None))
    found: set[tuple[str, ...] | None] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and isinstance(node.value, ast.Attribute) and node.value.attr == "saved_tensors":
            found.add(_names(node.targets[0].elts))
    return _only(found)


def guarded_names(cls: Any) -> list[str] | None:
    """What backward computes under each `if ctx.needs_input_grad[i]:`, as "i:name" (grad_weight assigned
    under needs_input_grad[2] gives "2:grad_weight"); None when backward tests no flag."""
    tree = _tree(getattr(cls, "backward", None))
    found: list[str] = []
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.If):
            continue
        flags = {n.slice.value for n in ast.walk(node.test) if isinstance(n, ast.Subscript)
                 and isinstance(n.value, ast.Attribute) and n.value.attr == "needs_input_grad"
                 and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, int)}
        if len(flags) != 1:
            continue
        (flag,) = flags
        found += [f"{flag}:{t.id}" for statement in node.body if isinstance(statement, ast.Assign)
                  for t in statement.targets if isinstance(t, ast.Name)]
    return found or None
