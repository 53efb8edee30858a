"""The names a Function's code gives its saved tensors, read from its source and never run: what forward
(or setup_context) passes to ctx.save_for_backward, and the names backward unpacks ctx.saved_tensors
into. The judge compares the two to tell a backward that unpacks them in another order than they were
saved (judge/saved_order.py), a mistake no number shows as such."""

from __future__ import annotations

import ast
import inspect
import textwrap
from types import FunctionType
from typing import Any

_PARSED: dict[int, tuple[Any, ast.AST | None]] = {}  # a function's tree, for the few reads of one measurement


def _tree(function: Any) -> ast.AST | None:
    """The parsed source of a function (backward's is read twice for a problem: unpacked and guarded
    names): parsed once, and kept with the function, so that its id cannot name another one later."""
    seen = _PARSED.get(id(function)) if type(function) is FunctionType else None
    if seen is not None and seen[0] is function:
        return seen[1]
    try:  # a notebook's cells and a worker's are in linecache, which getsource reads
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError, ValueError):
        tree = None
    if type(function) is FunctionType:
        if len(_PARSED) > 256:  # a notebook redefining its Functions for hours
            _PARSED.clear()
        _PARSED[id(function)] = (function, tree)
    return tree


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
