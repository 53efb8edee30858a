"""The source of the cells a notebook's kernel has run, as the notebook stands now: IPython keeps every
run in `In`, so a cell edited and run again, or a Function defined again further down, appears twice.
The newest cell defining a name wins, as it does in the kernel; check() reads the rules there
(judge/source.py) as the batch grader reads them in the submitted notebook."""

from __future__ import annotations

import ast


def _defined(source: str) -> set[str] | None:
    """The names a cell binds at its top level (None: it does not parse, e.g. a %magic)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def cells_run(caller: dict, name: str) -> list[str]:
    """The cells of the kernel's history (IPython's `In`), newest definition of each name only, oldest
    first; [] outside IPython or where no cell defines name (it came from a module, or exec)."""
    history = caller.get("In")
    if not isinstance(history, list):
        return []
    kept, seen = [], set()
    for source in reversed([s for s in history if isinstance(s, str) and s.strip()]):
        names = _defined(source)
        if names is None or names & seen or source in kept:
            continue
        seen |= names
        kept.append(source)
    return kept[::-1] if name in seen else []
