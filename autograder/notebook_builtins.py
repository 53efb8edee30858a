"""What an IPython kernel gives a notebook's cells that plain Python lacks, as harmless stand-ins, so that
a lesson's own cells run in a grading worker as they run in Jupyter: the builtins `display` (shows
nothing: there is no notebook to show it in) and `get_ipython` (a shell whose every method does nothing).

Imported by the workers' clean parent (config.PRELOAD) before its snapshot, so every worker has them
and puts them back after each call; a name that already exists (in Jupyter itself) is left alone.
"""

from __future__ import annotations

import builtins


def display(*objects, **options) -> None:
    """IPython's display(): in a grading worker, nothing to show the objects in."""


class Shell:
    """A stand-in for IPython's shell: every method (run_line_magic, system, ...) does nothing."""

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None

    def __repr__(self) -> str:
        return "<a stand-in for IPython's shell: the notebook runs in the autograder>"


_SHELL = Shell()


def get_ipython() -> Shell:
    return _SHELL


for _name, _value in (("display", display), ("get_ipython", get_ipython)):
    if not hasattr(builtins, _name):
        setattr(builtins, _name, _value)
