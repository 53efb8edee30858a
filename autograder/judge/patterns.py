"""Shapes of a wrong gradient's difference from the right one that name a cause where the difference
is in a pattern: a constant factor 1/n (a mean where a sum belongs), a mask that lets grad_output through
where the right gradient is 0 or blocks it where the gradient is grad_output itself."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import torch

from autograder.judge.diagnose import RTOL
from autograder.judge.untrusted import float64

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView


def pass_or_block(case: CaseView, mine: torch.Tensor, right: torch.Tensor, name: str, g: str) -> str:
    """Where every wrong entry is grad_output let through where the right gradient is 0, or 0 where it is
    grad_output itself, for an output shaped like the input (a mask, as in KillHead or ReLU): which."""
    v = float64(case.directions.v)
    if v.shape != mine.shape or tuple(case.out_shape) != tuple(case.shapes[0]):
        return ""
    wrong = ~torch.isclose(mine, right, rtol=RTOL, atol=1e-10)
    mine, right, v = mine[wrong], right[wrong], v[wrong]
    zero = torch.zeros_like(v)
    passes = torch.isclose(mine, v, rtol=RTOL, atol=1e-10) & torch.isclose(right, zero, atol=1e-10)
    blocks = torch.isclose(mine, zero, atol=1e-10) & torch.isclose(right, v, rtol=RTOL, atol=1e-10)
    if not bool((passes | blocks).all()):
        return ""
    if bool(passes.all()):
        said = (f"backward passes {g} through where those entries of forward's output do not depend on "
                f"{name} (forward sets them), so their gradient is 0")
    elif bool(blocks.all()):
        said = (f"backward gives 0 where forward passes {name} through unchanged, so the gradient there is "
                f"{g} itself")
    else:
        said = (f"backward passes {g} through where forward's output does not depend on {name}, and gives "
                f"0 where forward passes {name} through")
    return f" There {said}: zero exactly the entries forward zeroes, no more and no fewer."


def mean_for_sum(case: CaseView, mine: torch.Tensor, right: torch.Tensor) -> str:
    """A factor of 1/n with n a size of an input's dimension: a mean taken where a sum belongs."""
    factor = float((mine * right).sum()) / max(float((right * right).sum()), 1e-300)
    for name, shape in zip(case.tensor_names, case.shapes):
        for d, n in enumerate(shape):
            if n > 1 and abs(factor * n - 1) < 1e-6:
                return (f" The factor is 1/{n}, one over the size of dimension {d} of {name}: is there a "
                        f".mean() where the derivative has a .sum()?")
    return ""


def off_by_one(case: CaseView, said: str) -> str:
    """Wrong columns next to a bound given by an integer argument (n): a slice's bound off by one."""
    found = re.search(r"in columns? (\d+)(?: to (\d+))?((?:, \d+)*) of", said)
    ints = [(n, e) for n, e in zip(case.names, case.encoded) if type(e) is int and n.isidentifier() and e > 0]
    if not found or not ints:
        return ""
    cols = set(range(int(found[1]), int(found[2] or found[1]) + 1))
    cols |= {int(c) for c in re.findall(r"\d+", found[3])}
    name, n = ints[0]
    if cols <= {n - 1, n}:
        return (f" That is where {name} = {n} puts the bound: is a slice's bound off by one "
                f"([:, :{name} - 1] or [:, :{name} + 1] where [:, :{name}] is meant)?")
    if cols == {0, n}:
        return (f" The columns set apart are shifted by one: is a slice 1:{name} + 1 where 0:{name} (or "
                f":{name}) is meant?")
    return ""


def row_factor(case: CaseView, mine: torch.Tensor, right: torch.Tensor, k: int) -> str:
    """A factor the same along the last dimension within each row but different from row to row: a
    per-row quantity (a sum, a norm, a standard deviation or its inverse) missing, extra or wrong."""
    shape = tuple(case.shapes[k])
    if len(shape) < 2 or shape[-1] < 2 or mine.numel() != right.numel():
        return ""
    m, r = mine.reshape(-1, shape[-1]), right.reshape(-1, shape[-1])
    if bool((m.abs() < 1e-12).any()) or bool((r.abs() < 1e-12).any()):
        return ""
    ratio = r / m
    each = ratio[:, :1]
    if not torch.allclose(ratio, each.expand_as(ratio), rtol=RTOL, atol=0) \
            or torch.allclose(each, each[:1].expand_as(each), rtol=1e-3, atol=0):
        return ""
    named = _row_quantity(case, k, each[:, 0])
    if named:
        return named
    shown = ", ".join(f"{float(f):.4g}" for f in each[:3, 0])
    return (f" The right gradient is yours times a factor that is the same all along each row (the last "
            f"dimension) but changes from row to row ({shown}...): a per-row quantity (a sum, a norm, a "
            f"standard deviation or one over it) is missing, extra or the wrong one.")


def _row_quantity(case: CaseView, k: int, factor: torch.Tensor) -> str | None:
    """The per-row factor named, when it is a statistic of the input's rows or of forward's output."""
    name = case.tensor_names[k]
    x = case.inputs[k].reshape(-1, case.shapes[k][-1]).to(torch.float64)
    std = x.std(-1, unbiased=False)
    found = [(1 / std, f"one over the standard deviation of its row of {name}",
              "a factor rstd, 1 / sqrt(var + eps), is missing"),
             (std, f"the standard deviation of its row of {name}", "a factor rstd is there once too often")]
    y = float64(case.ref["output"]["values"])
    if y.numel() == factor.numel():
        found += [(y / y.exp(), "output / exp(output) (output: forward's, of its row)",
                   ("backward divides by the output (the log of the sum) where the sum of the exponentials, "
                   "exp(output), belongs")),
                  (y.exp(), "exp(output), the sum of the exponentials", "that division is missing")]
    for value, what, cause in found:
        if value.shape == factor.shape and torch.allclose(factor, value, rtol=1e-3, atol=0):
            return f" The right gradient is yours times {what}, entry by entry: {cause}."
    return None


def row_offset(mine: torch.Tensor, right: torch.Tensor, shape: tuple[int, ...], what: str) -> str:
    """A difference the same for every entry that shares an index in one dimension (each row of a matrix,
    each channel of a batch of images) and changing from one index to the next: a term computed per row
    or per channel (a mean, subtracted) missing, extra or with the wrong sign."""
    if len(shape) < 2 or mine.numel() != right.numel():
        return ""
    diff = (right - mine).reshape(shape)
    scale = 1e-10 + RTOL * float(right.abs().max())
    for d in range(len(shape)):
        per = diff.movedim(d, 0).reshape(shape[d], -1)
        each = per[:, :1]
        if per.shape[1] < 2 or float((per - each).abs().max()) > scale \
                or float((each - each[:1]).abs().max()) <= 1e3 * scale:
            continue
        rows = len(shape) == 2 and d == 0
        where = "all along each row" if rows else \
            f"for every entry that shares its index in dimension {d}" + (" (each channel)" if d == 1 else "")
        per_what = "row" if rows else ("channel" if d == 1 else f"index of dimension {d}")
        return (f" The right {what} is yours plus an amount that is the same {where} and changes from one "
                f"to the next: a term computed per {per_what} (such as a mean, subtracted) is missing, "
                f"extra, or has the wrong sign.")
    return ""
