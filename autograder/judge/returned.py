"""What backward returns told against what forward takes: values in another order than forward's inputs,
one number where a gradient belongs (a sum over every entry, @ between vectors), a matrix product that
fits once transposed, and a tensor that requires grad changed in place. errors.py tries these with its own
causes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from autograder.measure.encoding import differentiable

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView, Judging
    from autograder.measure.contract import StudentError


def out_of_order(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    """backward returned the right values in another order than forward takes its inputs ((None, grad)
    for forward(ctx, input, n)): autograd then blames a position, the order is the cause."""
    if not re.search(r"gradient different than None at position|invalid gradient at index", message):
        return None
    returned, encoded = case.measured.backward_returns or [], case.encoded
    if len(returned) != len(encoded):
        return None
    want = [("Tensor", list(a["shape"])) if isinstance(a, dict) and differentiable(a) else ("None", None)
            for a in encoded]
    got = [(v.kind, list(v.shape) if v.kind == "Tensor" and v.shape is not None else None) for v in returned]
    if got == want or sorted(map(repr, got)) != sorted(map(repr, want)):
        return None
    names = case.names[:len(encoded)]
    k = next(k for k, (a, b) in enumerate(zip(got, want)) if a != b)
    there = "None" if got[k][0] == "None" else f"a tensor of shape {got[k][1]}"
    order = ", ".join(f"grad_{n}" if w[0] == "Tensor" else "None" for n, w in zip(names, want))
    return (f"backward returns its values in another order than forward takes its inputs "
            f"({', '.join(names)}): it returned {there} in {names[k]}'s place. Return one value per input, "
            f"in forward's order: return {order}.")


def reduced_to_one(view: Judging, case: CaseView, name: str, want: list[int]) -> str:
    """What makes one number of a gradient: a reduction over every entry, or @ between two vectors."""
    g, out = view.grad_output, list(case.out_shape)
    if want == out:
        return (f"@ between two vectors (as torch.dot) adds their products up into one number, as .sum() "
                f"without a dim does. The gradient is {g} times the derivative entry by entry: multiply "
                f"with *.")
    lead = len(out) - len(want)
    if lead > 0 and out[lead:] == want:
        dims = "0" if lead == 1 else f"dim={tuple(range(lead))}"
        return (f"a .sum() (or .mean()) without a dim adds up every entry. Sum {g} only over the "
                f"dimensions {name} does not have: {g}.sum({dims}).")
    return (f"a .sum() or .mean() without a dim, or @ between two vectors, gives one number: reduce only "
            f"the dimensions {name} does not have, and multiply entry by entry with *.")


def leaf_in_place(message: str, kind: str, error: StudentError, view: Judging,
                   case: CaseView) -> str | None:
    """A tensor that requires grad changed in place (grad_output.mul_(...) in a backward differentiated
    again, where grad_output requires grad)."""
    if "leaf Variable that requires grad is being used in an in-place operation" not in message:
        return None
    code = error.frames[-1].code.strip() if error.frames else ""
    changed = re.search(r"\b(\w+)(?:\[[^\]]*\])?\.\w+_\(|\b(\w+)\[[^\]]*\]\s*=[^=]|\b(\w+)\s*[-+*/]=", code)
    who = next((n for n in (changed.groups() if changed else ()) if n), None)
    g, where = view.grad_output, error.raised_in or "backward"
    where = "backward" if "backward" in where else where
    what = f"{who} in place ({code})" if who else "a tensor in place"
    why = (f" When backward is differentiated again (create_graph=True, as gradgradcheck does), {g} requires "
           f"grad, and autograd forbids changing such a tensor in place." if "backward" in where else "")
    method = re.search(r"\b(\w+)\.(\w+)_\(([^()]*)\)", code)
    fix = (f"{method[1]}.{method[2]}({method[3]}), without the trailing _, makes one" if method else
           f"write {who or 'it'} = {who or 'it'} * ..., not *= or [...] =")
    return f"{where} changes {what}, a tensor that requires grad.{why} Compute a new tensor: {fix}."


def fitting_product(view: Judging, case: CaseView, first: tuple[int, int],
                     second: tuple[int, int]) -> str | None:
    """The product of the two operands, each transposed or not, in either order, that fits and has the
    shape of an input's gradient, in the learner's names (grad_output.t() @ input), fewest changes first."""
    names = {tuple(s): n for n, s in zip(case.tensor_names, case.shapes) if len(s) == 2}
    out = tuple(case.out_shape)
    if len(out) == 2:
        names.setdefault(out, view.grad_output)

    def text(shape: tuple[int, int]) -> str | None:
        if shape in names:
            return names[shape]
        return f"{names[shape[::-1]]}.t()" if shape[::-1] in names else None

    found = []
    for ta in (0, 1):
        for tb in (0, 1):
            a, b = (first[::-1] if ta else first), (second[::-1] if tb else second)
            for swap, (x, y) in enumerate(((a, b), (b, a))):
                if x[1] == y[0] and (x[0], y[1]) in names and text(x) and text(y):
                    said = f"{text(x)} @ {text(y)}, shaped like {names[(x[0], y[1])]}"
                    found.append((ta + tb + swap, said))
    return min(found)[1] if found else None


def correlation_mode(view: Judging, case: CaseView, got: list[int], want: list[int]) -> str | None:
    """A 2-D correlation in 'valid' mode where 'full' belongs, or the reverse: a 'full' result has the sizes
    a + b - 1 of its two arrays, a 'valid' one a - b + 1."""
    shapes = [tuple(s) for s in case.shapes if len(s) == 2] + [tuple(case.out_shape)]
    if len(got) != 2 or len(want) != 2:
        return None
    fits = "only the positions where the second array fits inside the first (sizes a - b + 1)"
    overlaps = "every overlap (sizes a + b - 1)"
    for a in shapes:
        for b in shapes:
            full = [x + y - 1 for x, y in zip(a, b)]
            valid = [x - y + 1 for x, y in zip(a, b)]
            if got == valid and want == full:
                return f"mode='valid' where mode='full' is meant: 'valid' keeps {fits}, 'full' {overlaps}."
            if got == full and want == valid:
                return f"mode='full' where mode='valid' is meant: 'full' keeps {overlaps}, 'valid' {fits}."
    return None


def jvp_count(message: str, kind: str, error: StudentError, view: Judging, case: CaseView) -> str | None:
    """A jvp returning a tangent per input, or a None for a number: forward mode wants one per output."""
    match = re.search(r"jvp returned an invalid number of forward gradients \(expected (\d+) but got (\d+)\)",
                      message)
    if not match:
        return None
    return (f"jvp returned {match[2]} values where forward has {match[1]} output(s): jvp returns the tangent "
            f"of each output of forward (the input's tangent times the derivative), one per output, with no "
            f"None for an input. Return that tangent alone.")
