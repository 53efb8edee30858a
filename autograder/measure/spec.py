"""A problem as a grading worker knows it: how to find and call the Function and what to measure.

Built from `Problem.spec()` (autograder/course/problems.py), the part of a problem that crosses into a
worker: never the reference, the points or whether it is hidden.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Spec:
    """Enough to measure, nothing to compare with."""

    name: str
    entry: str = ""
    kind: str = "function"
    double_backward: bool = False
    extra_checks: tuple[str, ...] = ()
    also_functions: tuple[str, ...] = ()
    companion: str = ""
    all_outputs: str = ""
    checks: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict) -> Spec:
        return cls(str(data["name"]), str(data.get("entry", "")), str(data.get("kind", "function")),
                   bool(data.get("double_backward")), tuple(data.get("extra_checks", ())),
                   tuple(data.get("also_functions", ())), str(data.get("companion", "")),
                   str(data.get("all_outputs", "")), tuple(str(c) for c in data.get("checks", ())))

    @property
    def lookup(self) -> str:
        return self.entry or self.name

    def call(self, obj: Any, args: list[Any], kwargs: dict | None = None) -> Any:
        return obj.apply(*args, **(kwargs or {})) if self.kind == "function" else obj(*args, **(kwargs or {}))
