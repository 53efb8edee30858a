"""Turns a probe's raw numbers into verdicts and scores, against the reference.

This runs in the trusted process only: the reference is measured here with PyTorch's own operations
(reference.py), and every comparison is made here on tensors rebuilt from plain data.

Each check is one object of checks.py (its question, points, prerequisites and
judgement). `judge` runs a problem's checks in order on a `Judging` (judging.py), failing without points
a check whose prerequisite failed, a check whose measurement never finished (a hang costs that part only),
and a check a case cannot reach (forward raised: the cause is told once, under the check it belongs to,
and the others point there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder.course.problems import Problem
from autograder.judge.blocked import blocked as blocked_by
from autograder.judge.checks import BY_NAME, checks_of, points_of
from autograder.judge.findings import Figure, Finding, fail, torch_words
from autograder.judge.judging import Judging
from autograder.judge.reference import reference_data
from autograder.judge.source import SourceFacts, contradiction, failing_cause, unbound
from autograder.measure import projections
from autograder.measure.contract import ProblemMeasurement
from autograder.measure.spec import PARTS
from autograder.results import name_of


@dataclass
class CheckResult:
    problem: str
    check: str
    passed: bool
    max_score: float
    message: str = ""
    details: str = ""
    figures: list[Figure] = field(default_factory=list)
    hidden: bool = False

    @property
    def name(self) -> str:
        return name_of(self.problem, self.check)

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0


class Verdicts:
    """One result per check of a problem; a failure recorded for a check is the one shown."""

    def __init__(self, problem: Problem):
        self.problem = problem
        self.checks = checks_of(problem)
        self.failures: dict[str, tuple[str, str, list[Figure]]] = {}
        self.notes: dict[str, str] = {}

    def fail(self, check: str, message: str, details: str = "", figures: list[Figure] | None = None) -> None:
        if check in self.checks and check not in self.failures:
            self.failures[check] = (message, details, figures or [])

    def fail_all(self, message: str, details: str = "", checks: list[str] | None = None) -> None:
        """The same cause for several checks: the details (a traceback) go with the first one only."""
        for check in checks or self.checks:
            self.fail(check, message, details)
            details = ""

    def results(self, passed_details: dict[str, str] | None = None) -> list[CheckResult]:
        out = []
        hints = getattr(self.problem, "hints", None) or {}
        for check in self.checks:
            message, details, figures = self.failures.get(
                check, (self.notes.get(check, ""), (passed_details or {}).get(check, ""), []))
            if check in self.failures and hints.get(check):
                message = f"{message} {hints[check]}".strip()  # the instructor's own sentence
            out.append(CheckResult(self.problem.name, check, check not in self.failures,
                                   points_of(self.problem, check), message, details, figures,
                                   self.problem.hidden or check in self.problem.hidden_checks))
        return out


def judge(problem: Problem, data: Any, seed: int = 0, source: SourceFacts | None = None) -> list[CheckResult]:
    """Every check of the problem, from the probe's data of one submission: the plain data a worker sent,
    parsed here, once, into its types (measure/contract.py), unless it was parsed already. source: what
    the submission's source shows (source.py, read by the grader): a rule the worker says was kept but
    the source shows broken fails."""
    verdicts = Verdicts(problem)
    passed_details: dict[str, str] = {}
    try:
        measured = data if isinstance(data, ProblemMeasurement) else ProblemMeasurement.from_plain(data)
        if measured is None:
            raise TypeError(f"a {type(data).__name__}, not a mapping")
        with projections.tolerances(problem.rtol_atol, problem.gradcheck_rtol_atol):
            _judge(problem, measured, reference_data(problem, seed), seed, verdicts, passed_details, source)
    except (ValueError, TypeError, KeyError, IndexError, RuntimeError, AttributeError) as error:
        # Only measurements that are not what a Function can produce get here (the causes of malformed
        # results, a wrong shape or count, are told by the checks): no grader frame is shown.
        verdicts.fail_all(f"The measurements of {problem.lookup} came back malformed ({error}), so they "
                          f"are treated as wrong. A Function's mistakes are told by the checks; this one "
                          f"is not (please show it to your instructor, with your code).")
    return verdicts.results(passed_details)


def _gate(problem: Problem, data: ProblemMeasurement) -> str | None:
    """Why nothing of the problem can be judged: not defined, or not what the problem asks for."""
    name = problem.lookup
    if not data.defined:
        return (f"{name} is not defined in the submission: define it with exactly this name (names are "
                f"case-sensitive).")
    kind = data.kind
    if problem.kind == "function" and kind != "Function":
        write = (f"write `class {name}(torch.autograd.Function):` with forward(ctx, ...) and "
                 f"backward(ctx, grad_output) as staticmethods, and call it as {name}.apply(...).")
        if kind == "class":
            return f"{name} is a class, but not a subclass of torch.autograd.Function: {write}"
        if kind == "instance":
            return (f"{name} is an instance of a Function class ({name} = SomeFunction()), but a Function is "
                    f"used through its class: bind {name} to the class itself and call {name}.apply(...).")
        if kind == "callable":
            return (f"{name} is a function (or another callable: a torch.library custom operator, say), "
                    f"but the problem asks for a subclass of torch.autograd.Function: {write}")
        if kind == "Tensor":  # KillHead = KillHeadFunction.apply(x, 2): the result, not the Function
            return (f"{name} is a tensor, not a class: it holds a result, as {name} = SomeFunction.apply(x) "
                    f"would, where the problem asks for the Function itself: {write}")
        return f"{name} is an object of type {kind}, not a class: bind {name} to the Function class ({write})"
    if problem.kind != "function" and kind not in ("callable", "Function"):
        what = {"instance": "an instance of a Function class", "class": "a class"}.get(kind, f"a {kind}")
        return f"{name} is {what}, but the problem asks for a function: define it with def {name}(...)."
    return None


def _judge(problem: Problem, data: ProblemMeasurement, reference: dict, seed: int, verdicts: Verdicts,
           passed: dict[str, str], source: SourceFacts | None = None) -> None:
    gate = _gate(problem, data) or unbound(problem, source)
    if gate:
        verdicts.fail_all(gate)
        return
    if data.cases is None:
        verdicts.fail_all(f"No measurement of {problem.lookup} came back.")
        return
    if len(data.cases) != len(reference["cases"]):
        raise ValueError(f"{len(data.cases)} measured cases for {len(reference['cases'])}")
    view = Judging(problem, data, reference, seed)
    view.failed = verdicts.failures
    for check, said in (("gradcheck", view.says.gradcheck), ("gradgradcheck", view.says.gradgradcheck)):
        if said:
            passed[check] = torch_words(check, said)
    finished = PARTS if data.parts is None else data.parts
    shown: set[str] = set()  # tracebacks already shown: one per failure
    told: dict[str, str] = {}
    drawn: set[str] = set()  # graphs already shown under an earlier check
    for name in checks_of(problem):
        check = BY_NAME[name]
        unmet = [r for r in check.requires if r in verdicts.failures]
        if unmet:
            verdicts.fail(name, check.unmet(unmet))
            continue
        if check.part in PARTS and check.part not in finished:
            verdicts.fail(name, _unfinished(problem, data, check.part))
            continue
        found = (_blocked_finding(view, check, shown) if check.part in ("forward", "backward", "second")
                 else None)
        if found is None:
            view.judged = name
            found = check.judge(view)
        if (found is None or found.passed) and contradiction(name, problem, source):
            found = fail(contradiction(name, problem, source))
        if found is not None and not found.passed and failing_cause(name, source):
            found = fail(failing_cause(name, source), found.details, found.figures)
        if found is None:
            continue
        if found.passed:
            verdicts.notes[name] = found.message
            continue
        details = found.details
        figures = [f for f in found.figures if f.kind != "graphs" or repr(f.panels) not in drawn]
        drawn.update(repr(f.panels) for f in figures if f.kind == "graphs")  # one graph drawn once
        if details and details in told and "Traceback" in details:
            details = f"(The traceback is shown under {told[details]}.)"
        elif details:
            told.setdefault(details, name)
        verdicts.fail(name, found.message, details, figures)


def _blocked_finding(view: Judging, check, shown: set[str]) -> Finding | None:
    part = "backward" if check.part == "second" else check.part
    for case in view.cases:
        blocked = blocked_by(view, case, part)
        if blocked is None:
            continue
        if blocked.owner == check.name \
                or (blocked.owner not in checks_of(view.problem) and check.name == "forward"):
            details = blocked.details if blocked.details not in shown else ""
            shown.add(blocked.details)
            return fail(blocked.message, details)
        return fail(f"Not graded: {case.intro[0].lower() + case.intro[1:-2]}, {blocked.short} (see "
                    f"{blocked.owner}).")
    return None


def _unfinished(problem: Problem, data: ProblemMeasurement, part: str) -> str:
    said = {"forward": f"calling {problem.lookup}", "backward": "its backward",
            "second": "differentiating its backward (second derivatives)", "torch": "gradcheck",
            "extra": "the checks of this lesson's APIs"}[part]
    how = str(data.stopped or "in time")[:300]
    if how.startswith("within"):
        how = f"it did not finish {how} (an endless loop, or a wait that never ends)"
    return (f"Grading stopped while measuring {said}: {how}. The checks measured before it are graded as "
            f"usual.")
