"""Kinks an exercise states (Problem.kinks, ReLU at 0): where a tensor input sits exactly on one, the
derivative does not exist, so a gradient there is judged entry by entry against the values the exercise
allows, not against the reference's own convention, and finite differences there are left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from autograder.judge.untrusted import float64

if TYPE_CHECKING:
    from autograder.course.problems import Kink
    from autograder.judge.judging import CaseView, Judging


@dataclass
class OnKinks:
    """The output entries (elementwise: the input entries) that sit on a kink, with the range allowed."""

    mask: torch.Tensor
    low: torch.Tensor
    high: torch.Tensor
    kinks: dict[int, tuple[str, Kink]]  # entry -> (the input on the kink, the kink)


def on_kinks(view: Judging, case: CaseView) -> OnKinks | None:
    problem, rows = view.problem, case.rows
    if not problem.kinks or not problem.elementwise:
        return None
    mask = torch.zeros(rows, dtype=torch.bool)
    low, high = torch.zeros(rows, dtype=torch.float64), torch.zeros(rows, dtype=torch.float64)
    kinks: dict[int, tuple[str, Kink]] = {}
    for name, x in zip(case.tensor_names, case.inputs):
        flat = x.reshape(-1)
        if flat.numel() != rows:
            continue
        for kink in problem.kinks:
            new = (flat == kink.at) & ~mask
            low[new], high[new] = kink.low, kink.high
            kinks.update({int(i): (name, kink) for i in new.nonzero().reshape(-1).tolist()})
            mask |= new
    return OnKinks(mask, low, high, kinks) if bool(mask.any()) else None


def settle_kinks(view: Judging, case: CaseView, vjps: list[list[list[float]]],
                 right: list[list[list[float]]]) -> tuple[list[list[list[float]]], str | None]:
    """The vector-Jacobian products with each entry on a kink whose derivative the exercise allows set to
    the reference's (so that the comparison that follows judges the other entries only), and the cause
    when the only wrong entries are on kinks, outside what the exercise allows (NaN included)."""
    found = on_kinks(view, case)
    if found is None:
        return vjps, None
    d, settled, outside = case.directions, [], None
    away_right = True
    for mine, ref, v in zip(vjps, right, (d.v, d.v2)):
        v = float64(v)
        row = []
        for k, (s, r) in enumerate(zip(mine, ref)):
            s, r = float64(s), float64(r)
            if s.numel() != found.mask.numel():
                row.append(s.tolist())
                continue
            slope = s / v  # the projections' grad_output has no zero entry
            tol = 1e-7 * (1 + found.high.abs())
            allowed = (slope >= found.low - tol) & (slope <= found.high + tol) & found.mask
            bad = found.mask & ~allowed
            if bool(bad.any()) and outside is None:
                outside = (k, bad, slope)
            away = ~found.mask
            away_right = away_right and bool(torch.isclose(s[away], r[away], rtol=1e-7, atol=1e-10).all())
            row.append(torch.where(allowed, r, s).tolist())
        settled.append(row)
    if outside is None or not away_right:
        return settled, None
    k, bad, slope = outside
    first = int(bad.nonzero()[0])
    name, kink = found.kinks[first]
    values = sorted({f"{float(x):.6g}" for x in slope[bad].tolist()})
    gradient = case.tensor_names[k]
    allowed = kink.allowed or f"any value from {kink.low:g} to {kink.high:g}"
    return settled, (f"The gradient with respect to {gradient} is wrong only where {name} is exactly "
                     f"{kink.at:g} ({int(bad.sum())} of the {bad.numel()} entries), {view.lookup}'s kink: "
                     f"there the derivative (gradient / {view.grad_output}) is {', '.join(values[:3])}, and "
                     f"the exercise allows {allowed}. The derivative does not exist at the kink, so "
                     f"backward must choose a value there on purpose (no division by the input, no NaN).")


def without_kinks(view: Judging, case: CaseView, vjps: list[list[list[float]]],
                  fd: list[float]) -> tuple[list[list[list[float]]], list[float]]:
    """The products and finite differences of forward with the entries on a kink set to 0: a finite
    difference across a kink (ReLU at 0 gives 1/2) says nothing about backward, which is judged there
    against what the exercise allows (settle_kinks)."""
    found = on_kinks(view, case)
    if found is None:
        return vjps, fd
    def away(values: list[float]) -> list[float]:
        return torch.where(found.mask, 0.0, float64(values)).tolist() if len(values) == found.mask.numel() \
            else values

    return [[away(g) for g in mine] for mine in vjps], away(fd)


def without_kink_entries(view: Judging, case: CaseView, jacobians: list[torch.Tensor]) -> list[torch.Tensor]:
    """Whole Jacobians (rows: output entries; columns: an input's) with the entries on a kink set to 0."""
    found = on_kinks(view, case)
    if found is None:
        return jacobians
    rows = found.mask[:, None]
    return [torch.where(rows | (found.mask[None, :] if j.shape[1] == found.mask.numel() else False), 0.0, j)
            for j in jacobians]
