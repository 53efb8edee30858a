"""Plain data from a worker (or from the reference's own measurements) as float64 tensors and lists,
checked against the sizes they must have: anything malformed raises ValueError, and the judge then fails
the problem's checks instead of trusting it."""

from __future__ import annotations

from typing import Any

import torch


def float64(values: Any) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def matrices(jac: list, sizes: list[int], rows: int) -> list[torch.Tensor]:
    """Validated (rows x size) float64 matrices from untrusted nested lists."""
    out = []
    for block, size in zip(jac, sizes):
        m = float64(block) if rows and size else torch.zeros(rows, size, dtype=torch.float64)
        if m.shape != (rows, size):
            raise ValueError("malformed Jacobian")
        out.append(m)
    if len(out) != len(sizes):
        raise ValueError("malformed Jacobian")
    return out


def lists(values: Any, sizes: list[int]) -> list[list[float]]:
    """Untrusted lists of numbers, one per tensor input, checked against the inputs' sizes."""
    if not isinstance(values, list) or len(values) != len(sizes) \
            or any(not isinstance(v, list) or len(v) != n for v, n in zip(values, sizes)):
        raise ValueError("malformed vector-Jacobian product")
    return [[float(x) for x in v] for v in values]
