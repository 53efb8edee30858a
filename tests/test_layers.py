"""Is the package layered as its folders say: every module importable, no import circle, the side of
the trust boundary where student code runs (autograder/measure/, a worker) never loading the grader's
code, and no module over 400 lines?

The import graph is read from each module's source (ast): `import autograder...` and `from autograder...
import ...`, at module level, inside functions (a function's import runs when it is called) and under
`if TYPE_CHECKING:` (it never runs, but a module that names another's types for its annotations depends
on it all the same) alike; a module's own `__getattr__` reaching back is an import inside a function.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autograder"
MAX_LINES = 400
# Where student code runs: what these import decides what a grading worker holds.
WORKER_SIDE = ("autograder.measure", "autograder.sandbox.worker")
GRADER_ONLY = ("autograder.judge", "autograder.report", "autograder.intake", "autograder.batch",
               "autograder.keys", "autograder.cli", "autograder.gradescope")
# Definitions (problems, assignments) are data the judgement reads: they never load it.
DEFINITIONS, JUDGEMENT = "autograder.course", "autograder.judge"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its __init__.py)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`): imports for annotations only."""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") \
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, known: set[str], run_only: bool = False) -> tuple[set[str], set[str]]:
    """The package's modules `name` imports: (at module level when it runs, anywhere: inside functions
    and under `if TYPE_CHECKING:` too, unless run_only: what may load, not what annotations name).
    `from a.b import c` is the module a.b.c when there is one, else a.b."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    top, anywhere = set(), set()

    def visit(node: ast.AST, module_level: bool) -> None:
        if _type_checking_only(node):
            for child in node.body if not run_only else ():
                visit(child, False)  # never run, but depended on
            for child in node.orelse:
                visit(child, module_level)
            return
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for target in targets:
            found = owner(target) if target.split(".")[0] == "autograder" else None
            if found and found != name:
                anywhere.add(found)
                if module_level:
                    top.add(found)
        inside = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, module_level and not inside)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), True)
    return top, anywhere


def graph(files: dict[str, Path], run_only: bool = False) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module-level imports, all imports) of every module; run_only: without those for annotations."""
    known = set(files)
    top, anywhere = {}, {}
    for name, path in files.items():
        top[name], anywhere[name] = imports(name, path, known, run_only)
    return top, anywhere


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that import one another (Tarjan's strongly connected
    components), as a path that ends where it starts."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(set(group))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return [_circle(group, edges) for group in groups]


def _circle(group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths, seen = [[start]], set()
    while paths:
        path = paths.pop(0)
        for nxt in sorted(edges.get(path[-1], ()) & group):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                paths.append(path + [nxt])
    return sorted(group)


def loaded_by(start: str, top: dict[str, set[str]], anywhere: dict[str, set[str]]) -> dict[str, list[str]]:
    """Every module `start` may load, each with the chain of imports that leads there. A module's imports
    are all followed (any of its functions may run); a package only imported as the parent of a module
    runs its module level, not its functions (the lazy public names of autograder/__init__.py)."""
    chains, whole = {start: [start]}, {start}  # whole: imported by name, so all its imports count
    todo = [start]
    while todo:
        name = todo.pop()
        for nxt in sorted(anywhere.get(name, ()) if name in whole else top.get(name, ())):
            chains.setdefault(nxt, chains[name] + [nxt])
            if nxt not in whole:
                whole.add(nxt)
                todo.append(nxt)
        parent = name.rpartition(".")[0]
        while parent:
            if parent not in chains:
                chains[parent] = chains[name] + [parent]
                todo.append(parent)
            parent = parent.rpartition(".")[0]
    return chains


def test_every_module_imports_in_a_fresh_interpreter():
    """Does each module of the package import in a fresh interpreter (the entry points __main__ left
    out: importing them runs them)?"""
    names = [n for n in module_files() if not n.endswith("__main__")]
    code = ("import importlib, sys, traceback\nfailed = []\n"
            f"for name in {names!r}:\n"
            "    try:\n        importlib.import_module(name)\n"
            "    except Exception:\n"
            "        failed.append(name + ': ' + traceback.format_exc(limit=-1).strip())\n"
            "print('\\n'.join(failed))\nsys.exit(1 if failed else 0)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_import_circle():
    """Does no module of the package import, directly or through others, a module that imports it back?"""
    _, anywhere = graph(module_files())
    found = cycles(anywhere)
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_worker_side_never_loads_the_grader():
    """Do autograder/measure/ and the worker leave the grader's own code (judging, reports, reading
    submissions, the batch, the command line, Gradescope) unloaded, directly or through other modules?"""
    files = module_files()
    top, anywhere = graph(files)
    starts = [n for n in files if any(n == s or n.startswith(s + ".") for s in WORKER_SIDE)]
    assert "autograder.sandbox.worker" in starts and "autograder.measure.probe" in starts

    def grader(name: str) -> bool:
        return any(name == g or name.startswith(g + ".") for g in GRADER_ONLY)

    wrong = set()
    for start in starts:
        for name, chain in loaded_by(start, top, anywhere).items():
            if grader(name) and not any(grader(m) for m in chain[:-1]):  # where the chain first crosses
                wrong.add(" -> ".join(chain))
    assert not wrong, "the worker's side loads the grader's code:\n" + "\n".join(sorted(wrong))


def _inside(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_definitions_never_import_the_judgement():
    """Does no module of autograder/course/ import autograder/judge/, at module level, inside a function
    or for type annotations, directly or through other modules of the package?"""
    files = module_files()
    _, anywhere = graph(files)
    wrong = set()
    for start in (n for n in files if _inside(n, DEFINITIONS)):
        chains = {start: [start]}
        todo = [start]
        while todo:
            name = todo.pop()
            for nxt in sorted(anywhere.get(name, ())):
                if nxt not in chains:
                    chains[nxt] = chains[name] + [nxt]
                    if _inside(nxt, JUDGEMENT):
                        wrong.add(" -> ".join(chains[nxt]))
                    else:
                        todo.append(nxt)
    assert not wrong, "definitions import the judgement:\n" + "\n".join(sorted(wrong))


def test_every_measuring_module_is_put_back_after_each_call():
    """Is every module of autograder/measure/ among those the worker's snapshot restores after each call
    into a submission (snapshot._HOT_MODULES), so that no measuring code a call patched is used next?"""
    from autograder.measure.snapshot import _HOT_MODULES

    measuring = [n for n in module_files() if n.startswith("autograder.measure.")]
    missing = [n for n in measuring if n not in _HOT_MODULES]
    assert measuring and not missing, f"not put back after each call: {missing}"


def test_no_module_is_over_400_lines():
    """Is every module of the package at most 400 lines long?"""
    long = {name: n for name, path in module_files().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: " + ", ".join(f"{k} ({v})" for k, v in sorted(long.items()))
