"""The run-time packages the grader needs (config.RUNTIME), checked by every command before it starts:
an install with `pip install --no-deps` has none of them, and `grade` would otherwise fail mid-way on the
first one it imports (and torch warns on every command without NumPy). And the system: `grade` runs on
Linux only."""

from __future__ import annotations

import shlex
import sys
from importlib.util import find_spec

from autograder import config


def missing_packages() -> list[str]:
    """The run-time packages this Python cannot import, found without importing any."""
    return [name for name, module in config.RUNTIME.items()
            if (sys.platform == "linux" or name not in config.LINUX_ONLY) and find_spec(module) is None]


def missing_packages_said() -> str:
    """What is missing and the pip install that gets it, in a paragraph; "" when nothing is."""
    missing = missing_packages()
    if not missing:
        return ""
    python = shlex.quote(sys.executable)
    return (f"This Python ({sys.executable}) lacks packages the autograder needs: {', '.join(missing)} (an "
            f"install with --no-deps leaves them out). Install them with `{python} -m pip install "
            f"{' '.join(missing)}`, or install the course with its dependencies, `{python} -m pip install "
            f"-e .` in its folder (PyTorch already there is kept). Nothing was done.")


def not_on_linux_said(command: str) -> str:
    """Why `command` cannot run on this system, in a paragraph; "" where it can (`grade` alone needs
    Linux's kernel: it runs student code)."""
    if command != "grade" or sys.platform.startswith("linux"):
        return ""
    system = {"darwin": "macOS", "win32": "Windows"}.get(sys.platform, sys.platform)
    return (f"`grade` runs each submission in a container made by Linux's kernel (namespaces, seccomp, "
            f"Landlock), so it runs on Linux only, and this system is {system}. Grade on a Linux "
            f"machine or virtual machine (WSL 2 on Windows), or on Gradescope (`gradescope` builds its "
            f"archive here too). Nothing was graded.")
