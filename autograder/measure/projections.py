"""Random projections: the cheap first question every gradient check asks.

A Jacobian J is compared through products with random unit vectors, as torch.autograd.gradcheck does
in its fast mode, instead of entry by entry: vᵀJ from one backward call against the reference's, and
vᵀJu from backward against finite differences of forward along u (two forward calls), where the full
matrices cost a call per entry. A wrong matrix agrees only for vectors of probability zero; the full
matrices are measured only to explain a failure.

Plain Python throughout, with a generator of its own: the probe (in a worker, beside student code that
may patch `random` or torch) uses it to decide what to measure in full, and the judge (in the grader)
draws the very same vectors to decide the verdicts.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

RTOL, ATOL = 1e-9, 1e-12  # against the reference: both in float64, so only rounding may differ
GRADCHECK_RTOL, GRADCHECK_ATOL = 1e-3, 1e-5  # torch.autograd.gradcheck's defaults
EPS = 1e-6  # finite-difference step, as in the slides' gradcheck call
_MASK = (1 << 64) - 1


class _Stream:
    """splitmix64: the same numbers from the same seed on every machine and in every process."""

    def __init__(self, seed: int):
        self.state = seed & _MASK

    def uniform(self) -> float:
        """A number in [-1, 1)."""
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) / float(1 << 52) - 1.0

    def unit(self, size: int) -> list[float]:
        """A vector of about unit length, of random signs, whose entries are at least half the largest
        (so that no entry of a Jacobian goes almost unseen) and odd multiples of 2⁻¹³: never zero, and
        exact in float32, so that a Function computing in float32 shows its own rounding, not ours."""
        values = [math.copysign(0.5 + 0.5 * abs(x), x) for x in (self.uniform() for _ in range(size))]
        # One entry (a scalar loss) is not normalised: a unit cotangent would be ±1, and a backward that
        # ignores grad_output would look right wherever it is +1 (and v, v2 could not tell it either).
        norm = (sum(x * x for x in values) ** 0.5 or 1.0) if size > 1 else 1.0
        return [(math.floor(x / norm * 4096) + 0.5) / 4096 for x in values]

    def units(self, sizes: tuple[int, ...]) -> list[list[float]]:
        """One unit vector over all the entries, split by tensor."""
        flat, out = self.unit(sum(sizes)), []
        for size in sizes:
            out.append(flat[:size])
            flat = flat[size:]
        return out


@dataclass(frozen=True)
class Directions:
    """The vectors one case is projected on. v, v2: cotangents of the output (backward is called twice on
    one graph, as retain_graph allows); u: a direction of the inputs (one list per tensor input) for finite
    differences of forward; for second derivatives, w: a cotangent of the gradients, then ux and uv:
    directions of the inputs and of v."""

    v: list[float]
    v2: list[float]
    u: list[list[float]]
    w: list[list[float]]
    ux: list[list[float]]
    uv: list[float]


@lru_cache(maxsize=1024)
def directions(seed: int, case: int, outputs: int, sizes: tuple[int, ...]) -> Directions:
    """The vectors of one case (the same for the same seed, case, output size and input sizes); shared,
    so not to be changed."""
    stream = _Stream(seed * 1_000_003 + case + 1)
    return Directions(v=stream.unit(outputs), v2=stream.unit(outputs), u=stream.units(sizes),
                      w=stream.units(sizes), ux=stream.units(sizes), uv=stream.unit(outputs))


def directions_of(case: dict, seed: int, index: int) -> Directions:
    """The directions a measured case was projected on (its output and its tensor inputs' sizes)."""
    return directions(seed, index, len(case["output"]["values"]), tuple(len(g) for g in case["vjp"]))


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def close(actual: float, expected: float, rtol: float, atol: float) -> bool:
    """As torch.isclose: equal (infinities included), or within atol + rtol * |expected|; NaN never."""
    return actual == expected or abs(actual - expected) <= atol + rtol * abs(expected)


# The tolerances in force: a problem may set its own (Problem.tolerance, .gradcheck_tolerance), which the
# judge puts in force while it judges that problem (`tolerances`).
_IN_FORCE: list[tuple[tuple[float, float], tuple[float, float]]] = [((RTOL, ATOL),
                                                                     (GRADCHECK_RTOL, GRADCHECK_ATOL))]


@contextmanager
def tolerances(reference: tuple[float, float], gradcheck: tuple[float, float]):
    """(rtol, atol) against the reference and against finite differences, while judging one problem."""
    _IN_FORCE.append((tuple(reference), tuple(gradcheck)))
    try:
        yield
    finally:
        _IN_FORCE.pop()


def reference_tolerance() -> tuple[float, float]:
    return _IN_FORCE[-1][0]


def gradcheck_tolerance() -> tuple[float, float]:
    return _IN_FORCE[-1][1]


def all_close(actual: list, expected: list, rtol: float | None = None, atol: float | None = None) -> bool:
    """Nested lists of numbers, equal in shape and close entry by entry (by default, within the
    tolerance in force against the reference)."""
    if rtol is None or atol is None:
        rtol, atol = reference_tolerance()
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(all_close(a, e, rtol, atol)
                                                    for a, e in zip(actual, expected))
    try:
        return close(float(actual), float(expected), rtol, atol)
    except (TypeError, ValueError):
        return False


def gradcheck_pairs(vjps: list[list[list[float]]], fd: list[float],
                    d: Directions) -> list[tuple[float, float]]:
    """vᵀJu and v2ᵀJu, each from backward (the vector-Jacobian products along u) and from finite
    differences of forward (fd = Ju, the change of the output along u): two questions for two forward
    calls, so that an error one of them happens to cancel out is caught by the other."""
    return [(sum(dot(g, u) for g, u in zip(vjp, d.u)), dot(v, fd)) for vjp, v in zip(vjps, (d.v, d.v2))]


def gradgradcheck_pairs(second: dict, d: Directions) -> list[tuple[str, float, float]]:
    """For the inputs and for v: wᵀHu through autograd of backward (hvp: the gradient of w·g with respect
    to the inputs, then v) and by finite differences of backward (fd_x, fd_v: how g moves along ux, uv)."""
    hvp, fd_x, fd_v = second["hvp"], second["fd_x"], second["fd_v"]
    inputs = len(d.ux)
    return [("the inputs", sum(dot(h, u) for h, u in zip(hvp[:inputs], d.ux)),
             sum(dot(w, f) for w, f in zip(d.w, fd_x))),
            ("grad_output", dot(hvp[inputs], d.uv), sum(dot(w, f) for w, f in zip(d.w, fd_v)))]


def gradcheck_agrees(vjps: list[list[list[float]]], fd: list[float], d: Directions) -> bool:
    return all(close(a, n, GRADCHECK_RTOL, GRADCHECK_ATOL) for a, n in gradcheck_pairs(vjps, fd, d))


def blind(second: dict, d: Directions) -> bool:
    """Autograd sees no second derivative with respect to the inputs where finite differences do: the
    backward computed with values autograd cannot see."""
    inputs = len(d.ux)
    return (all(x == 0 for h in second["hvp"][:inputs] for x in h)
            and any(abs(x) > GRADCHECK_ATOL for f in second["fd_x"] for x in f))


def gradgradcheck_agrees(second: dict, d: Directions) -> bool:
    return not blind(second, d) and all(close(a, n, GRADCHECK_RTOL, GRADCHECK_ATOL)
                                        for _, a, n in gradgradcheck_pairs(second, d))
