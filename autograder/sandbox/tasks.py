"""What the grader hands the sandbox and gets back: a Task (one submission's cells and the problems to
measure, each a Measure), and its Outcome (measurements, explanations, failures, printed output)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Measure:
    """One problem to measure in a submission. `spec` and `cases` go to the worker; `plan` stays here:
    given the worker's first measurement, it says which failures to measure in full (it may compare with
    the reference, which never enters a worker), or None."""

    name: str
    spec: dict
    cases: list
    hidden: bool = False
    plan: Callable[[dict], dict | None] | None = None
    seconds: float | None = None  # its CPU budget (budget.scaled); None: the limits' problem_seconds


@dataclass(frozen=True)
class Task:
    key: Any
    cells: list[str]
    problems: list[Measure]
    # helper modules: name in the worker's folder -> source
    modules: dict[str, str] = field(default_factory=dict)


@dataclass
class Outcome:
    """What came back from one submission's workers."""

    data: dict[str, dict] = field(default_factory=dict)  # problem name -> measurement
    explanations: dict[str, dict] = field(default_factory=dict)  # problem name -> failures measured in full
    failures: dict[str, str] = field(default_factory=dict)  # problem name -> why there is no data
    cell_errors: list[dict] = field(default_factory=list)
    output: str = ""
    seconds: float = 0.0
    # what ran out of time: "load" (the cells), problem names
    timed_out: list[str] = field(default_factory=list)
    # reaches into the grader its workers reported, and messages their loops never write (evidence.py)
    reaches: list[dict] = field(default_factory=list)


def failed(problems: list[Measure], previous: Outcome | None, reason: str) -> Outcome:
    """The outcome of a task whose worker could not be started: every problem fails with the reason."""
    outcome = previous or Outcome()
    for m in problems:
        outcome.failures.setdefault(m.name, reason)
    return outcome
