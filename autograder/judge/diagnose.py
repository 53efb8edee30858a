"""Says in one sentence how a student's numbers differ from the right ones.

Everything here runs in the trusted process on plain float64 tensors. A "matrix" is (rows, columns)
with columns indexing the entries of one tensor (an input for a Jacobian, the output for forward
values), so a mistake can be located in that tensor's rows and columns.
"""

from __future__ import annotations

import re

import torch

from autograder.measure.contract import StudentError

RTOL, ATOL = 1e-9, 1e-12  # against the reference: both in float64, so only rounding may differ


def close(a: torch.Tensor, b: torch.Tensor, rtol: float | None = None, atol: float | None = None) -> bool:
    if rtol is None or atol is None:
        from autograder.measure.projections import reference_tolerance

        rtol, atol = reference_tolerance()  # RTOL, ATOL unless a problem sets its own
    return a.shape == b.shape and bool(torch.isclose(a, b, rtol=rtol, atol=atol).all())


def float32_rounding(actual, expected) -> bool:
    """Whether a difference from the right values is float32's doing, as far as numbers can tell: every
    value is one float32 can hold (a result computed in float32, then converted), or the difference is
    within float32's rounding (about 6e-8 of the largest value, so 1e-6 leaves room for a sum of a few
    terms). A formula that is slightly off (eps outside a square root) differs by more, in float64."""
    a, e = _flat(actual), _flat(expected)
    if a.shape != e.shape or not a.numel() or not bool(torch.isfinite(a).all()):
        return False
    exact = bool((a.float().double() == a).all()) and not bool((e.float().double() == e).all())
    return exact or float((a - e).abs().max()) <= 1e-6 * float(e.abs().max())


def _flat(values) -> torch.Tensor:
    """Numbers, or lists of them of any lengths (one per input), as one float64 vector."""
    if isinstance(values, (list, tuple)) and values and isinstance(values[0], (list, tuple)):
        return torch.cat([_flat(v) for v in values]) if values else torch.zeros(0, dtype=torch.float64)
    return torch.as_tensor(values, dtype=torch.float64).reshape(-1)


def _columns_wrong(actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    return (~torch.isclose(actual, expected, rtol=rtol, atol=atol)).any(dim=0)


def _where(mask: torch.Tensor, shape: tuple[int, ...], name: str) -> str | None:
    """Where the wrong entries of a tensor of this shape are, when they form a pattern."""
    total, bad = mask.numel(), int(mask.sum())
    if bad == 0 or bad == total:
        return None
    if len(shape) == 2:
        grid = mask.reshape(shape)
        cols = [j for j in range(shape[1]) if grid[:, j].all()]
        rows = [i for i in range(shape[0]) if grid[i, :].all()]
        if cols and grid[:, cols].sum() == bad:
            return (f"in column{'s' if len(cols) > 1 else ''} {_ranges(cols)} of {name} and right in the "
                    f"others")
        if rows and grid[rows, :].sum() == bad:
            return f"in row{'s' if len(rows) > 1 else ''} {_ranges(rows)} of {name} and right in the others"
    first = [int(i) for i in torch.nonzero(mask.reshape(shape) if shape else mask)[0]] if shape else []
    at = f" (first at {name}[{', '.join(map(str, first))}])" if first else ""
    return f"at {bad} of the {total} entries of {name}{at}"


def _ranges(indices: list[int]) -> str:
    if len(indices) > 1 and indices == list(range(indices[0], indices[-1] + 1)):
        return f"{indices[0]} to {indices[-1]}"
    return ", ".join(map(str, indices))


def difference_cause(actual: torch.Tensor, expected: torch.Tensor, shape: tuple[int, ...], name: str,
                     what: str, rtol: float | None = None, atol: float | None = None) -> str | None:
    """None when actual matches expected (within the tolerance in force, by default); otherwise a sentence
    starting with `what`."""
    if rtol is None or atol is None:
        from autograder.measure.projections import reference_tolerance

        rtol, atol = reference_tolerance()
    if close(actual, expected, rtol, atol):
        return None
    if not torch.isfinite(actual).all():
        return f"{what} contains NaN or infinity."
    if actual.abs().max() == 0 and expected.abs().max() > 0:
        return (f"{what} is zero everywhere: the gradient never reaches {name} (backward returns zeros, "
                f"or forward used operations that cut the graph).")
    if actual.numel() == 1:  # one number: any two differ by a factor, which then says nothing
        return f"{what} is {float(actual.reshape(-1)[0]):.6g} where the right one is " \
               f"{float(expected.reshape(-1)[0]):.6g}."
    norm = float((expected * expected).sum())
    if norm > 0:
        k = float((actual * expected).sum()) / norm
        if abs(k - 1) > 1e-3 and close(actual, k * expected, rtol, atol):
            if abs(k + 1) < 1e-3:
                return f"{what} has the wrong sign: it is -1 times the right one."
            return (f"{what} is {k:.3g} times the right one: a constant factor is missing or extra "
                    f"(as the 2 in d(x²)/dx = 2x).")
    if len(shape) == 2 and shape[0] == shape[1] > 1:
        idx = torch.arange(shape[0] * shape[1]).reshape(shape).t().reshape(-1)
        if close(actual, expected[:, idx], rtol, atol):
            return f"{what} is transposed: it holds the entries of {name}.t() where {name}'s belong."
    if actual.dim() == 2 and actual.shape[0] > 1 and close(actual, expected.flip(0), rtol, atol):
        return (f"{what} is the right one for grad_output read in reverse order (its entries flipped): one "
                f"flip too many or too few, as when a convolution stands where a cross-correlation belongs.")
    if close(actual, expected, rtol=1e-3, atol=1e-5) and float32_rounding(actual, expected):
        return (f"{what} agrees with the right one to only about 4 to 7 digits: part of the computation "
                f"ran in float32 (torch.float32 tensors, .float(), or NumPy's float32) instead of float64.")
    located = _where(_columns_wrong(actual, expected, rtol, atol), shape, name)
    diff = (actual - expected).abs()
    worst = float(diff.max())
    if located:
        return f"{what} is wrong {located} (largest difference {worst:.3g})."
    return f"{what} differs from the right one everywhere (largest difference {worst:.3g})."


_ONLY_WHERE = re.compile(r"(?:is wrong (?:in|at) .+|differs from the right one everywhere) "
                         r"\(largest difference [^()]*\)\.$|differs from the right one\.$")


def only_where(message: str) -> bool:
    """Whether a message ends in difference_cause's sentence of where a result is wrong with nothing
    after it: a place, no cause (the check that says it has found none)."""
    return bool(_ONLY_WHERE.search(message.strip()))


def swap_cause(actual: list[torch.Tensor], expected: list[torch.Tensor], names: list[str]) -> str | None:
    """Gradients returned in the wrong order: the one for input a is the right one for input b."""
    for a in range(len(actual)):
        for b in range(a + 1, len(actual)):
            if close(actual[a], expected[b]) and close(actual[b], expected[a]) \
                    and not close(actual[a], expected[a]):
                return (f"The gradients of {names[a]} and {names[b]} are swapped: backward must return them "
                        f"in the order forward takes its inputs.")
    return None


# -- autograd's own error messages, told plainly ----------------------------------------------------

_ERRORS = [
    (r"returned an incorrect number of gradients \(expected (\d+), got (\d+)\)",
     lambda m: f"backward returned {m[2]} value(s) but forward takes {m[1]} input(s) (ctx excluded): return "
               f"one value per input, in order, with None for the inputs that are not tensors."),
    ((r"returned a gradient different than None at position (\d+), but the corresponding forward input was "
     r"not a Variable"),
     lambda m: f"backward returned a gradient for input {m[1]} of forward, which is not a tensor (a number "
               f"such as n): there is nothing to differentiate there, so return None in that position."),
    (r"modified by an inplace operation",
     lambda m: "a tensor saved for backward was changed in place after forward saved it, so autograd refuses "
               "to use it: clone before changing it (or change a copy), and never change inputs or "
               "grad_output in place."),
    ((r"returned an invalid gradient at index (\d+) - got \[([\d, ]*)\] but expected shape compatible "
     r"with \[([\d, ]*)\]"),
     lambda m: f"backward returned a gradient of shape [{m[2]}] for input {int(m[1]) + 1}, whose shape is "
               f"[{m[3]}]" + (": it looks transposed." if m[2].split(", ")[::-1] == m[3].split(", ") else
                              ": each gradient must have the shape of its input.")),
    (r"trying to differentiate twice a function that was marked with @once_differentiable",
     lambda m: "backward is marked @once_differentiable, so autograd cannot differentiate it again: remove "
               "the decorator and write backward with differentiable torch operations."),
    (r"element 0 of tensors does not require grad and does not have a grad_fn",
     lambda m: "the result has no autograd history: it was computed only from values autograd cannot trace "
               "back to the inputs (intermediate results of forward, whether kept on ctx or saved with "
               "save_for_backward; NumPy; .detach(); torch.no_grad())."),
    ((r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton "
     r"dimension (\d+)"),
     lambda m: f"two tensors combined in your code have shapes that do not broadcast (sizes {m[1]} and "
               f"{m[2]} in dimension {m[3]}). When forward reduces a dimension (a sum, a mean, a "
               f"log-sum-exp), grad_output has lost it: put it back with grad_output.unsqueeze(dim) before "
               f"combining it with a tensor shaped like the input."),
]


def raised_cause(error: StudentError) -> str:
    """A sentence for an exception raised by student code (calls.error_data, parsed)."""
    message, kind, where = (error.message, error.type or "Exception",
                            error.raised_in or "code")
    if kind == "NotImplementedError":
        return (f"{where} is not written yet: it raises NotImplementedError. Replace "
                f"`raise NotImplementedError()` with your code.")
    for pattern, sentence in _ERRORS:
        match = re.search(pattern, message)
        if match:
            return sentence(match)
    first_line = message.strip().splitlines()[0] if message.strip() else ""
    return f"{where} raised {kind}: {first_line[:300]}"
