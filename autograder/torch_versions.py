"""The torch versions the course is tested with, and the one line said where another torch runs it.

`make test-torch` (tools/torch_matrix.py) tests OLDEST and NEWEST beside the pinned torch of
requirements.txt, and pyproject.toml's lower bound is OLDEST's release (tests/test_install.py keeps them
equal). NEWEST is the newest torch on the package index when it was last checked: on a newer release,
raise it once `make test-torch` passes.
"""

from __future__ import annotations

import re

OLDEST = "2.5.1"
NEWEST = "2.15.0"


def release(version: str) -> tuple[int, int]:
    """(major, minor) of a version such as '2.15.0+cpu' or '2.16.0.dev20261101'."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def tested_range() -> str:
    return f"{OLDEST.rsplit('.', 1)[0]} to {NEWEST.rsplit('.', 1)[0]}"


def outside_range(version: str) -> str:
    """One line when `version` lies outside the tested releases, "" when inside."""
    if release(OLDEST) <= release(version) <= release(NEWEST):
        return ""
    side = "older" if release(version) < release(OLDEST) else "newer"
    return (f"torch {version} is {side} than the releases this course is tested with ({tested_range()}): "
            f"check() and the grader should work, but a verdict that looks wrong may come from this torch.")


def said_once(protections: bool = True) -> list[str]:
    """What to tell about this process's torch, once: outside the tested range, and (for the grader's
    log) the protections it lacks (measure/captured.py's private names). Empty after the first call."""
    if _SAID:
        return []
    _SAID.append(True)
    import torch

    from autograder.measure.captured import UNAVAILABLE

    lines = [outside_range(torch.__version__)] if outside_range(torch.__version__) else []
    if protections:
        lines += [f"torch {torch.__version__} lacks what gives a protection of the grader: {what}"
                  for what in UNAVAILABLE]
    return lines


def tell(file, prefix: str = "autograder: ", protections: bool = True) -> None:
    """Prints said_once()'s lines to `file`."""
    for line in said_once(protections):
        print(prefix + line, file=file)


_SAID: list[bool] = []
