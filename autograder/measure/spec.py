"""A problem as a grading worker (or the notebook's check()) knows it: how to find and call the Function
and what to measure.

Built by `spec_of` (autograder/judge/checks.py) from a problem and its checks, it is the part of a problem
that crosses into a worker, as plain JSON (`to_dict`, `from_dict`): never the reference, the points or
whether it is hidden.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# The parts a problem is measured in, in this order (probe.measure); a check names the one it needs
# (Check.part), and its own measurement, when it has one, runs right after that part.
PARTS = ("forward", "backward", "second", "torch", "extra")


@dataclass(frozen=True)
class Spec:
    """Enough to measure, nothing to compare with. `own`: the checks that measure something of their own,
    as (check, the part it follows, the module of autograder/measure/ and the function that measures)."""

    name: str
    entry: str = ""
    kind: str = "function"
    double_backward: bool = False
    extra_checks: tuple[str, ...] = ()
    also_functions: tuple[str, ...] = ()
    companion: str = ""
    all_outputs: str = ""
    checks: tuple[str, ...] = ()
    own: tuple[tuple[str, str, str, str], ...] = ()

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Spec:
        return cls(str(data["name"]), str(data.get("entry", "")), str(data.get("kind", "function")),
                   bool(data.get("double_backward")), tuple(data.get("extra_checks", ())),
                   tuple(data.get("also_functions", ())), str(data.get("companion", "")),
                   str(data.get("all_outputs", "")), tuple(str(c) for c in data.get("checks", ())),
                   tuple((str(a), str(b), str(c), str(d)) for a, b, c, d in data.get("own", ())))

    @property
    def lookup(self) -> str:
        return self.entry or self.name

    def call(self, obj: Any, args: list[Any], kwargs: dict | None = None) -> Any:
        return obj.apply(*args, **(kwargs or {})) if self.kind == "function" else obj(*args, **(kwargs or {}))

    def measurements(self) -> dict[str, list[tuple[str, Callable]]]:
        """The checks that measure something of their own, by the part they follow, each with its
        function (only ever one of autograder/measure/)."""
        found: dict[str, list[tuple[str, Callable]]] = {}
        for check, part, module, function in self.own:
            if not module.startswith("autograder.measure."):
                raise ValueError(f"the measurement of {check!r} is not in autograder/measure/: {module}")
            if part not in PARTS:
                raise ValueError(f"the measurement of {check!r} follows {part!r}, which is not a part "
                                 f"measured: one of {', '.join(PARTS)}")
            found.setdefault(part, []).append((check, getattr(importlib.import_module(module), function)))
        return found
