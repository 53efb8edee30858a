"""What to measure in full, decided in the grader: a failure's whole Jacobians are asked of the worker
only where a first measurement disagrees with the reference's vector-Jacobian products, which never
leave this process; then the untrusted explanation is merged into the measurement."""

from __future__ import annotations

from typing import Any

from autograder.judge.checks import spec_of
from autograder.measure import projections
from autograder.measure.probe import measure, measure_in_full
from autograder.measure.projections import directions_of


def plan_in_full(problem, data: dict, expected: list[dict] | None, seed: int = 0) -> dict | None:
    """Which cases to measure in full, from a first measurement and the reference's vector-Jacobian
    products (`expected`, from reference.expectations; None: every failure found, without them). Pure
    arithmetic on plain data: the grader runs it, so reference answers never reach a worker. The judge
    explains a check's first failure, so one case in full for each order is enough."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        return None
    plan, measured_fully = [], [False, False]
    for i, case in sorted(enumerate(cases), key=lambda ic: _one_entry_each(ic[1])):  # as the judge tells them
        expect = None if expected is None or i >= len(expected) else expected[i]
        wanted = _worth_measuring_in_full(case, expect, seed, i)
        first, second = (want and not done for want, done in zip(wanted, measured_fully))
        if first or second:
            plan.append([i, first, second])
            measured_fully = [measured_fully[0] or first, measured_fully[1] or second]
    return {"cases": plan} if plan else None


def _one_entry_each(case: Any) -> bool:
    """A case whose tensors hold one entry each (shape ()): its failures are told last (judging.py)."""
    vjp = case.get("vjp") if isinstance(case, dict) else None
    return isinstance(vjp, list) and all(isinstance(v, list) and len(v) <= 1 for v in vjp)


def _worth_measuring_in_full(case: dict, expect: dict | None, seed: int, index: int) -> tuple[bool, bool]:
    """Whether to measure this case's first and second derivatives in full: where the projections
    disagree (so the judge can say where and how), or with nothing to compare them with. This only
    chooses what to measure; the verdicts are the judge's, from the projections and whatever else
    comes back."""
    if not isinstance(case, dict) or "vjp" not in case:
        return False, False
    d = directions_of(case, seed, index)
    first = expect is None or not projections.all_close([case["vjp"], case.get("vjp2")], expect.get("vjps")) \
        or ("fd" in case and not projections.gradcheck_agrees([case["vjp"], case["vjp2"]], case["fd"], d))
    second = case.get("second", {})
    second_worth = "hvp" in second and "fd_v" in second \
        and (expect is None or not projections.gradgradcheck_agrees(second, d))
    return first, second_worth


def with_measured_in_full(measured: dict, found: dict | None) -> dict:
    """The measurement with the failures measured in full merged in (both untrusted: anything malformed
    is left out, and the judge works from the projections alone)."""
    data = dict(measured)
    data.setdefault("graph", None)
    if not isinstance(found, dict) or not isinstance(data.get("cases"), list):
        return data
    cases = [dict(c) if isinstance(c, dict) else c for c in data["cases"]]
    for key, extra in (found.get("cases") or {}).items():
        if str(key).isdigit() and int(key) < len(cases) and isinstance(extra, dict) \
                and isinstance(cases[int(key)], dict):
            cases[int(key)].update({k: v for k, v in extra.items()
                                    if k in ("jacobian", "numerical", "second")})
    data["cases"] = cases
    if isinstance(found.get("graph"), dict):
        data["graph"] = found["graph"]
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
