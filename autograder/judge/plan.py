"""What to measure in full, decided in the grader: a failure's whole Jacobians are asked of the worker
only where a first measurement disagrees with the reference's vector-Jacobian products, which never
leave this process; then the untrusted explanation is merged into the measurement."""

from __future__ import annotations

from typing import Any

from autograder.judge.checks import spec_of
from autograder.judge.reference import encoded_once
from autograder.measure import projections
from autograder.measure.contract import CaseMeasurement, InFull, ProblemMeasurement
from autograder.measure.encoding import one_entry_each
from autograder.measure.probe import measure, measure_in_full


def plan_in_full(problem, data: dict, expected: list[dict] | None, seed: int = 0) -> dict | None:
    """Which cases to measure in full, from a first measurement and the reference's vector-Jacobian
    products (`expected`, from reference.expectations; None: every failure found, without them). Pure
    arithmetic on plain data: the grader runs it, so reference answers never reach a worker. The judge
    explains a check's first failure, so one case in full for each order is enough."""
    measured = ProblemMeasurement.from_plain(data)
    cases = measured.cases if measured is not None else None
    if cases is None:
        return None
    plan, measured_fully = [], [False, False]
    encoded = encoded_once(problem, seed)
    told_last = [i < len(encoded) and one_entry_each(encoded[i]) for i in range(len(cases))]
    for i, case in sorted(enumerate(cases), key=lambda ic: told_last[ic[0]]):  # as the judge tells them
        expect = None if expected is None or i >= len(expected) else expected[i]
        wanted = _worth_measuring_in_full(case, expect, seed, i)
        first, second = (want and not done for want, done in zip(wanted, measured_fully))
        if first or second:
            plan.append([i, first, second])
            measured_fully = [measured_fully[0] or first, measured_fully[1] or second]
    return {"cases": plan} if plan else None


def _worth_measuring_in_full(case: CaseMeasurement | None, expect: dict | None, seed: int,
                             index: int) -> tuple[bool, bool]:
    """Whether to measure this case's first and second derivatives in full: where the projections
    disagree (so the judge can say where and how), or with nothing to compare them with. This only
    chooses what to measure; the verdicts are the judge's, from the projections and whatever else
    comes back."""
    if case is None or case.vjp is None or case.output is None or case.output.values is None:
        return False, False
    d = projections.directions(seed, index, len(case.output.values), tuple(len(g) for g in case.vjp))
    first = expect is None or not projections.all_close([case.vjp, case.vjp2], expect["vjps"]) \
        or (case.fd is not None and case.vjp2 is not None
            and not projections.gradcheck_agrees([case.vjp, case.vjp2], case.fd, d))
    along = case.second.along() if case.second is not None else None
    second_worth = along is not None and len(along["hvp"]) > len(case.vjp) \
        and (expect is None or not projections.gradgradcheck_agrees(along, d))
    return first, second_worth


def with_measured_in_full(measured: dict, found: Any) -> dict:
    """The measurement with the failures measured in full merged in, as the worker would have sent them
    together (both untrusted: anything malformed is left out, and the judge works from the projections
    alone)."""
    data = dict(measured)
    data.setdefault("graph", None)
    extra = InFull.from_plain(found)
    if not isinstance(data.get("cases"), list):
        return data
    cases = [dict(c) if isinstance(c, dict) else c for c in data["cases"]]
    for i, merged in extra.cases.items():
        if i < len(cases) and isinstance(cases[i], dict):
            cases[i].update(merged)
    data["cases"] = cases
    if extra.graph is not None:
        data["graph"] = extra.graph
    return data


def probe(problem, namespace: dict, encoded_cases: list[list[Any]], seed: int = 0,
          expected: list[dict] | None = None) -> dict:
    """measure, plan and measure in full in one process: the inline check(), where the code measured is the
    notebook's own, and the instructor's own answers (validate.py)."""
    spec = spec_of(problem)
    data = measure(spec, namespace, encoded_cases, seed)
    plan = plan_in_full(problem, data, expected, seed)
    found = measure_in_full(spec, namespace, encoded_cases, seed, data, plan) if plan else None
    return with_measured_in_full(data, found)
