"""The set-up cell every student notebook starts with (tools/make_student.py writes it): it does nothing
where the course's package imports, and otherwise installs it from the course's release. It imports
importlib and subprocess, which a submission's own code never needs (judge/reaching.py): the grader
knows the cell by its code, whatever release's address and wheel its strings name."""

from __future__ import annotations

import ast

SETUP = """\
# Set-up: installs the course's package where it is missing (Colab, Binder, JupyterHub, a new laptop).
import importlib.util, os, subprocess, sys

if importlib.util.find_spec("autograder") is None:
    package = os.environ.get("AUTOGRADER_PACKAGE", "{url}")
    print(f"Installing the course package from {{package}} ...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-color", package],
                         capture_output=True, text=True)
    if pip.returncode:  # what to do, not a traceback: Jupyter shows an error's _render_traceback_() alone

        class SetupFailed(Exception):
            def _render_traceback_(self):
                return str(self).splitlines()

        said = [f"  {{line}}" for line in pip.stderr.splitlines() if line.strip() and "Retrying" not in line]
        raise SetupFailed(
            f"The course package could not be installed (is this computer offline?) from\\n  {{package}}\\n"
            "Offline, install it from a wheel: get {wheel} (in a clone of the\\n"
            "course, `make dist` writes it into dist/; or ask your instructor), run\\n"
            "  %env AUTOGRADER_PACKAGE=/path/to/{wheel}\\n"
            "in a cell above this one, and run this cell again. Or, in a clone of the course, run\\n"
            f"  {{sys.executable}} -m pip install -e .\\n"
            "in a terminal, then restart the kernel. pip said:\\n" + "\\n".join(said[-4:]))
    importlib.invalidate_caches()
from autograder import warn_if_no_graphviz

warn_if_no_graphviz()  # says how to get Graphviz where its `dot` program is missing"""


def _shape(source: str) -> str | None:
    """The cell's code with the strings that name a release (its address, its wheel) left out."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and any(word in node.value for word in ("://", ".whl", "autograd_course", "autograd-course")):
            node.value = ""
    return ast.dump(tree)


_SETUP_SHAPE = _shape(SETUP.format(url="https://release", wheel="release.whl"))


def is_setup_cell(source: str) -> bool:
    """Whether a cell is the set-up cell, from any release of the course."""
    return "find_spec" in source and _shape(source) == _SETUP_SHAPE
