"""What runs of a notebook's code cell: what Jupyter runs. Each cell goes through IPython's own input
transformer (IPython.core.inputtransformer2, as in the kernel), and what would reach outside Python
does nothing instead:

- line magics (`%matplotlib inline`, `%load_ext ...`, `%pip ...`), shell escapes (`!ls`, `x = !ls`,
  which gives []) and help (`obj?`) are replaced by a no-op in place, so the rest of the cell and its
  line numbers stay as Jupyter has them; `%time stmt` runs its statement, as in Jupyter; `%timeit` does
  not (its loop would only cost grading time, and its assignments do not persist in Jupyter either);
- a cell magic whose body Jupyter runs in the notebook itself runs its body: `%%time`, `%%capture` (the
  output is not captured, and its variable, `%%capture out`, is not set) and `%%prun`; every other cell
  magic leaves an empty cell: `%%bash`, `%%script`, `%%html`, `%%javascript`, `%%latex`, `%%timeit`
  and `%%writefile` / `%%file` (the file is not written: put the code in the notebook itself, or hand
  the module in beside it);
- a cell IPython's transformer cannot handle is run as written (a SyntaxError in that cell, as in
  Jupyter).

IPython's transformer reads a cell once (about a second per MB), and again for every magic it replaces,
so a notebook of many magics in long cells could keep the grader busy for minutes: the characters it
reads for one submission are counted, and a submission that needs more than MAX_TRANSFORM_CHARS (a
lesson's notebook needs about 15,000) gets an error naming the cell.
"""

from __future__ import annotations

import ast
import re
from functools import cache

from autograder.intake.files import Unreadable

MAX_TRANSFORM_CHARS = 1_000_000  # characters IPython's transformer may read for one submission (~5 s)
RUN_BODY = ("time", "capture", "prun")  # cell magics whose body Jupyter runs in the notebook's namespace
_IPYTHON_SYNTAX = re.compile(r"[%!?]|^[ \t\f]*[,;/]", re.MULTILINE)  # what IPython's token transforms need


class Budget:
    """The characters IPython's transformer may still read for one submission."""

    def __init__(self, name: str, chars: int = MAX_TRANSFORM_CHARS):
        self.name, self.left = name, chars

    def spend(self, chars: int, cell: int) -> None:
        self.left -= chars
        if self.left < 0:
            raise Unreadable(f"{self.name}: cell {cell} takes the grader past its limit on the code it reads "
                             f"for one notebook ({MAX_TRANSFORM_CHARS:,} characters). IPython's transformer "
                             f"reads a cell once, and again for each piece of IPython syntax it replaces "
                             f"(magics, ! commands, ?): keep code cells short and such syntax rare, and "
                             f"resubmit.")


@cache
def _manager():
    """One for every cell: its transforms keep no state between calls (making one costs a millisecond)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


def jupyter_code(source: str, budget: Budget | None = None, cell: int = 1) -> str:
    """The Python that runs for one code cell: IPython's transformation of it, with every call it makes
    into IPython (magics, shell escapes, help) replaced by a no-op, and cell magics run or skipped as
    the module docstring says. Raises Unreadable only when the budget runs out."""
    budget = budget or Budget("the notebook")
    manager = _manager()  # IPython missing is the grader's fault: said loudly, never silently skipped
    try:
        while True:  # cell magics, %%time inside %%capture included: each body is read again
            budget.spend(len(source), cell)
            if not source.endswith("\n"):
                source += "\n"
            lines = source.splitlines(keepends=True)
            for transform in manager.cleanup_transforms:
                lines = transform(lines)
            magic = _cell_magic(manager, lines)
            if magic is None:
                break
            name, line, body = magic
            # %%time with a statement on its line is a UsageError in Jupyter
            if name not in RUN_BODY or (name == "time" and line.strip()):
                return ""
            source = body
        if not _IPYTHON_SYNTAX.search(source):
            return "".join(lines)
        for _ in range(500):  # IPython's own TRANSFORM_LOOP_LIMIT
            budget.spend(sum(map(len, lines)), cell)
            changed, lines = manager.do_one_token_transform(lines)
            if not changed:
                break
        else:
            return source  # IPython gives up on this cell too
    except Unreadable:
        raise
    except Exception:  # noqa: BLE001 - IPython could not transform it: run it as written, as a SyntaxError will
        return source
    code = "".join(lines)
    if "get_ipython" not in code:
        return code
    budget.spend(len(code), cell)
    return without_ipython_calls(code)


def _cell_magic(manager, lines: list[str]) -> tuple[str, str, str] | None:
    """(name, line, body) when IPython reads the cell as a cell magic."""
    for transform in manager.line_transforms:
        out = transform(lines)
        if out != lines:
            call = ast.parse(out[0]).body[0].value  # get_ipython().run_cell_magic('name', 'line', 'body')
            name, line, body = (ast.literal_eval(arg) for arg in call.args)
            return name, line, body
    return None


def _ipython_call(node: ast.AST) -> str | None:
    """The method name of a call `get_ipython().<method>(...)`, else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "get_ipython"):
        return node.func.attr
    return None


def _replacement(node: ast.Call, method: str, statement: bool) -> str:
    if method == "getoutput":  # x = !ls: no output
        return "[]"
    args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
    if method == "run_line_magic" and len(args) == 2 and args[0] == "time" and args[1] and args[1].strip() \
            and "\n" not in args[1] and "\r" not in args[1]:
        return args[1].strip() if statement else f"({args[1].strip()})"  # %time runs what it times
    return "None"


def without_ipython_calls(code: str) -> str:
    """The code with each `get_ipython().<method>(...)` call (what IPython's transformer makes of magics,
    shell escapes and help) replaced in place by a no-op; code that does not parse is left as it is."""
    try:
        tree = ast.parse(code)
    except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError: the worker will say so
        return code
    statements = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    calls = sorted((((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset), node, method)
                    for node in ast.walk(tree) if (method := _ipython_call(node))), key=lambda c: c[0])
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", code)  # the line ends ast counts: \r\n, \n, \r
    chosen, end = [], (0, 0)
    for span, node, method in calls:
        if span[:2] >= end:  # outermost calls only
            chosen.append((span, _replacement(node, method, id(node) in statements)))
            end = span[2:]
    for plain in (False, True):
        result = _replaced(lines, chosen, plain)
        if plain or _parses(result):  # a %time statement that does not parse: plain no-ops instead
            return result
    return code


def _replaced(lines: list[str], chosen: list[tuple[tuple[int, int, int, int], str]], plain: bool) -> str:
    """The lines with each span (ast's lines, UTF-8 byte columns) replaced; with plain, by None."""
    out = list(lines)
    for (line, col, end_line, end_col), text in reversed(chosen):
        if plain or line != end_line:
            text = "None" if line == end_line else "(None" + "\n" * (end_line - line) + ")"
        first, last = out[line - 1].encode("utf-8"), out[end_line - 1].encode("utf-8")
        merged = first[:col].decode("utf-8") + text + last[end_col:].decode("utf-8")
        out[line - 1:end_line] = [merged] + [""] * (end_line - line)
    return "".join(out)


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError
        return False
    return True
