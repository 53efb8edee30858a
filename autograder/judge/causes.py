"""The cause of a wrong answer, in one sentence, in the learner's own names.

`diagnose.py` says how two matrices differ (a sign, a factor, a transpose, which columns); this module
knows what the numbers are (a gradient, forward's output, the gradient backward was given, the inputs)
and so can name the mistake behind them: backward ignores grad_output, a mask is inverted, the input is
used where the output belongs, a factor or a term is missing, second derivatives are swapped or scaled,
an error raised by PyTorch on a pattern it cannot tell the learner about.
Everything here runs in the trusted process, on float64 tensors rebuilt from plain data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from autograder.judge.diagnose import RTOL, close, difference_cause, swap_cause
from autograder.judge.patterns import mean_for_sum, off_by_one, pass_or_block, row_factor, row_offset
from autograder.judge.regions import derivative_bracket as _bracket
from autograder.judge.regions import ignored_gradient, lacks_grad_output, region_cause, smooth_at_zero
from autograder.judge.saved_order import companion_order, own_order
from autograder.judge.untrusted import float64
from autograder.measure.calls import grad as vjp
from autograder.measure.encoding import decode_args, differentiable

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView, Judging


# -- values that are not finite -----------------------------------------------------------------------

def not_finite(what: str, values: torch.Tensor, case: CaseView, derivative: str = "") -> str | None:
    """Where a result is inf or NaN, told by the input values there (an elementwise function), and why
    when an input is large: exp overflows in float64 above about 709."""
    values = values.reshape(-1)
    bad = ~torch.isfinite(values)
    if not bool(bad.any()):
        return None
    kinds = " and ".join(sorted({"NaN" if v != v else "inf" for v in values[bad].tolist()}))  # noqa: PLR0124
    inputs = case.inputs
    where, large = "", [x for x in inputs if x.numel() and float(x.abs().max()) > 700]
    if len(inputs) == 1 and inputs[0].numel() == values.numel():
        at = inputs[0].reshape(-1)[bad]
        where = f" where {case.tensor_names[0]} is {', '.join(f'{x:g}' for x in at.tolist()[:4])}"
        large = [at] if float(at.abs().max()) > 700 else []
    zero = _zero_inputs(case, values.numel(), bad)
    if zero and bool((bad <= zero[1]).all()):
        x = zero[0]
        example = "|uv| / u" if len(inputs) > 1 else f"output / {x}, or {x} / {x}.abs() as a sign"
        said = (f"{what} contains NaN or infinity ({kinds} where {zero[0]} is 0): a division by an input "
                f"that is 0 there (as {example}) gives that. Write the derivative without dividing by an "
                f"input" + (f": the derivative is {derivative}." if derivative else "."))
        return said
    said = f"{what} contains NaN or infinity ({kinds}{where})"
    if large:
        said += (": exp overflows to inf in float64 once its argument passes about 709, and inf / inf or "
                 "inf - inf gives NaN. Rewrite the formula so that it never exponentiates a large positive "
                 "number (subtract the largest value first, or use an identity such as "
                 "log(1 + exp(x)) = x + log(1 + exp(-x)))")
    elif kinds == "inf" and not any(x.numel() and float(x.abs().max()) > 700 for x in inputs):
        shapes = " and ".join(f"{n} of shape {tuple(x.shape)}" for n, x in zip(case.tensor_names, inputs))
        said += (f": with no large input, an inf comes from a division by zero (or the log of 0). With "
                 f"{shapes}, is a count or a difference you divide by 0 here (a size minus 1 that is 0)?")
    return said if said.endswith("?") else said + "."


def _zero_inputs(case: CaseView, size: int,
                 at: torch.Tensor | None = None) -> tuple[str, torch.Tensor] | None:
    """Where an input of an elementwise function is exactly 0 (a kink of |uv|, ReLU...): the names of the
    inputs that are 0 at some entry of `at` (anywhere, without it), and the mask of their zeros."""
    flat = [(n, x.reshape(-1)) for n, x in zip(case.tensor_names, case.inputs) if x.numel() == size]
    zeros = [(n, x == 0) for n, x in flat if bool(((x == 0) & (True if at is None else at)).any())]
    covering = [(n, z) for n, z in zeros if at is not None and bool((at <= z).all())]
    zeros = covering[:1] or zeros  # one input that is 0 wherever it goes wrong is the one to name
    if not zeros:
        return None
    mask = torch.zeros(size, dtype=torch.bool)
    for _, z in zeros:
        mask |= z
    return " or ".join(n for n, _ in zeros), mask


def _at_kinks(view: Judging, case: CaseView, k: int, ds: torch.Tensor, dr: torch.Tensor,
              what: str) -> str | None:
    """A derivative wrong only where an input is exactly 0, where the exercise states the value (what
    sign gives, 0): a comparison (>= 0, > 0) picks one side there."""
    wrong = ~torch.isclose(ds, dr, rtol=RTOL, atol=1e-10)
    zero = _zero_inputs(case, ds.numel(), wrong)
    if zero is None or not bool(wrong.any()) or not bool((wrong <= zero[1]).all()):
        return None
    said = smooth_at_zero(view, case, k, wrong, zero[0], what, dr)
    if said:
        return said
    value = "0" if bool((dr[wrong] == 0).all()) else "the reference's value"
    return (f"{what} is wrong only where {zero[0]} is exactly 0 ({int(wrong.sum())} of the {ds.numel()} "
            f"entries), where the derivative does not exist and the exercise asks for {value}, what sign "
            f"gives at 0. A comparison such as >= 0 or > 0 picks one side there: build the sign with "
            f"torch.sign, which is 0 at 0{_bracket(view)}.")


# -- first derivatives --------------------------------------------------------------------------------

def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return close(a, b, RTOL, 1e-10)


def gradient_cause(view: Judging, case: CaseView, mine: list[list[float]], right: list[list[float]],
                   mine2: list[list[float]], right2: list[list[float]],
                   jacobians: tuple[list[torch.Tensor], list[torch.Tensor]] | None = None) -> tuple[str, int]:
    """Why backward's vector-Jacobian products differ from the reference's, and the tensor input it
    is about: vᵀJ for one random grad_output v (and v2, a second one); the whole Jacobians, where they
    were measured, show a structure the products cannot (rows flipped, for instance)."""
    names, shapes, g = case.tensor_names, case.shapes, view.grad_output
    s, r = [float64(x) for x in mine], [float64(x) for x in right]
    swapped = swap_cause([x.reshape(1, -1) for x in s], [x.reshape(1, -1) for x in r], names)
    if swapped:
        return swapped, 0
    s2, r2 = [float64(x) for x in mine2], [float64(x) for x in right2]
    k = next((k for k in range(len(s)) if not _close(s[k], r[k])), 0)
    said = own_order(view)
    if said:
        return said, k
    said = not_finite(f"The gradient with respect to {names[k]}", s[k], case, view.problem.derivative)
    if said:
        return said, k
    # (a gradient of zeros is the same for every grad_output too, but its cause is elsewhere: a path cut)
    if _close(s[k], s2[k]) and not _close(r[k], r2[k]) and bool(s[k].abs().sum() > 0):
        every = len(s) > 1 and all(_close(a, b) for a, b in zip(s, s2))
        which = "" if len(s) == 1 or every else f"for {names[k]} "
        return (f"backward returns the same gradient {which}whatever {g} it is given: it never uses {g}. By "
                f"the chain rule, the gradient with respect to {names[k]} is {g} carried back through "
                f"forward ({g} times the derivative): multiply by {g}."), k
    what = f"The gradient with respect to {names[k]}"
    try:
        said = _known_mistake(view, case, s[k], k)
    except (RuntimeError, TypeError, ValueError, IndexError):  # a cause is a bonus: never fail the judging
        said = None
    if said:
        return f"{what} is what backward gives when {said}", k
    if view.problem.elementwise:
        try:
            said = _elementwise_cause(view, case, k, s[k], r[k], what)
        # a cause is a bonus: never fail the judging
        except (RuntimeError, TypeError, ValueError, IndexError):
            said = None
        if said:
            return said, k
    said = None
    if jacobians is not None and not view.problem.elementwise:
        said = difference_cause(jacobians[0][k], jacobians[1][k], shapes[k], names[k], what)
    said = said or difference_cause(s[k].reshape(1, -1), r[k].reshape(1, -1), shapes[k], names[k], what)
    if said and "times the right one: a constant factor" in said:
        said += mean_for_sum(case, s[k], r[k])
    if said and ("right in the others" in said or " of the entries of " in said):
        said += pass_or_block(case, s[k], r[k], names[k], g) + off_by_one(case, said)
    if said and "differs from the right one everywhere" in said:
        said += row_factor(case, s[k], r[k], k) or row_offset(s[k], r[k], tuple(shapes[k]), "gradient")
    if said and "differs from the right one everywhere" in said and view.problem.derivative:
        said += f" The derivative of {view.lookup} is {view.problem.derivative}."
    return said or f"{what} differs from the right one.", k


def _known_mistake(view: Judging, case: CaseView, mine: torch.Tensor, k: int) -> str | None:
    """The cause of a wrong gradient that is one of the problem's known mistakes (Mistake.backward: a
    function whose autograd gradient is that mistake's), for the grad_output the learner's was given."""
    wrong = [m for m in view.problem.mistakes if m.backward is not None]
    if not wrong:
        return None
    decoded = decode_args(case.encoded)
    args = [decoded[i].clone().requires_grad_() if differentiable(a) else decoded[i]
            for i, a in enumerate(case.encoded)]
    tensors = [a for a, e in zip(args, case.encoded) if differentiable(e)]
    v = float64(case.directions.v).reshape(case.out_shape)
    for mistake in wrong:
        with torch.enable_grad():
            # torch.autograd.grad's numbers through the measurements' engine path: grad itself first
            # imports torch's symbolic shapes and sympy (0.5 s) to check a given v's shape
            grads = vjp(mistake.backward(*args, **case.kwargs), tensors, v, allow_unused=True)
        # an input the mistake's function does not reach gets a zero gradient, as the learner's did
        theirs = torch.zeros_like(tensors[k]) if grads[k] is None else grads[k]
        if _close(mine, theirs.reshape(-1)):
            return mistake.text
    return None


def _derivative_text(view: Judging) -> str:
    return f": the derivative is {view.problem.derivative}" if view.problem.derivative else ""


def _elementwise_cause(view: Judging, case: CaseView, k: int, s: torch.Tensor, r: torch.Tensor,
                       what: str) -> str | None:
    """Causes read from the local derivative, gradient / grad_output entry by entry (the projections'
    grad_output has no zero entry)."""
    v = float64(case.directions.v)
    if v.shape != s.shape:
        return None
    ds, dr = s / v, r / v
    name, g = case.tensor_names[k], view.grad_output
    tiny = 1e-12 + 1e-9 * float(dr.abs().max())
    zs, zr = ds.abs() <= tiny, dr.abs() <= tiny
    if bool((ds.abs().max() == 0) and (dr.abs().max() > 0)):
        return None  # zero everywhere: diagnose says it in its own words
    said = _at_kinks(view, case, k, ds, dr, what)
    if said:
        return said
    if bool(zr.any()) and bool((~zr).any()) and bool((zs != zr).all()):
        x = case.inputs[k].reshape(-1)
        signed = any(bool((zr == m).all()) for m in (x < 0, x <= 0, x > 0, x >= 0))
        ints = [n for n, e in zip(case.names, case.encoded) if isinstance(e, int) and n.isidentifier()]
        example = (f"{name} < 0 where {name} > 0 is meant" if signed or not ints else
                   f"a slice [:, {ints[0]}:] where [:, :{ints[0]}] is meant")
        return (f"{what} flows exactly where it should be zero and is zero where it should flow: the "
                f"condition that chooses the entries is inverted (for example {example}).")
    norm = float((dr * dr).sum())
    if norm > 0:
        factor = float((ds * dr).sum()) / norm
        if abs(factor - 1) > 1e-3 and _close(ds, factor * dr):
            return None  # a constant factor or the sign: diagnose says it
    inputs = case.inputs
    y = float64(case.ref["output"]["values"])
    terms = [(t.text, t.value(*inputs).reshape(-1).to(torch.float64)) for t in view.problem.terms]
    if terms and all(value.shape == ds.shape for _, value in terms):
        total = sum(value for _, value in terms)
        for text, value in terms:
            if _close(ds, total - 2 * value):
                return f"{what} has the term {text} with the wrong sign{_derivative_text(view)}."
            if len(terms) > 1 and _close(ds, total - value):
                return f"{what} is missing the term {text}{_derivative_text(view)}."
    if _close(ds * ds, dr) and not _close(ds, dr):
        return f"{what} is the square root of the right one: a square (** 2) is missing{_bracket(view)}."
    if _close(ds, dr * dr) and not _close(ds, dr):
        return f"{what} is the square of the right one: a ** 2 too many{_bracket(view)}."
    if len(inputs) == 1:
        x = inputs[0].clone().requires_grad_()
        with torch.enable_grad():
            decoded = decode_args(case.encoded)  # tensors of integers as they are
            args = [-x if differentiable(a) else decoded[k] for k, a in enumerate(case.encoded)]
            (mirrored,) = torch.autograd.grad(view.problem.reference(*args, **case.kwargs).sum(), x)
        mirrored = -mirrored.reshape(-1)  # the derivative at -x: d/dx f(-x) = -f'(-x)
        if _close(ds, mirrored) and not _close(dr, mirrored):
            return (f"{what} is the derivative at -{name} instead of at {name}: a sign is missing inside "
                    f"it (for example sigmoid(-x) where sigmoid(x) is meant){_bracket(view)}.")
        said = _derivative_elsewhere(view, case, ds, dr, v, y, what)
        if said:
            return said
    flat = [(n, x.reshape(-1)) for n, x in zip(case.tensor_names, inputs)]
    factors = []
    for n, x in flat:
        factors += [(n, x), (f"{n}.abs()", x.abs()), (f"{n}.sign()", x.sign())]
    for i, (a, xa) in enumerate(flat):
        for b, xb in flat[i + 1:]:
            factors.append((f"({a} * {b}).sign()", (xa * xb).sign()))
    factors.append(("forward's output", y))
    for text, f in factors:
        if f.shape != ds.shape or _close(f, torch.ones_like(f)):
            continue
        if _close(ds * f, dr):
            return f"{what} lacks a factor {text}: the right gradient is yours times {text}{_bracket(view)}."
        if _close(ds, dr * f):
            return f"{what} has an extra factor {text}{_bracket(view)}."
    said = region_cause(view, case, k, ds, dr, what)
    if said:
        return said
    candidates = [(f"{n}, the input", x) for n, x in flat]
    candidates.append(("forward's output", y))
    candidates.append(("1 (it returns grad_output unchanged)", torch.ones_like(dr)))
    for text, value in candidates:
        if value.shape == ds.shape and _close(ds, value) and not _close(dr, value):
            return (f"{what} is {g} times {text}, which is not the derivative here{_derivative_text(view)}. "
                    f"Multiply {g} by the derivative.")
    return None


def derivative_at(view: Judging, case: CaseView, point: torch.Tensor) -> torch.Tensor | None:
    """The reference's derivative, entry by entry, at other values of its one tensor input."""
    x = point.reshape(case.inputs[0].shape).clone().requires_grad_()
    decoded = decode_args(case.encoded)
    args = [x if differentiable(a) else decoded[k] for k, a in enumerate(case.encoded)]
    with torch.enable_grad():
        (d,) = torch.autograd.grad(view.problem.reference(*args, **case.kwargs).sum(), x)
    return d.reshape(-1) if bool(torch.isfinite(d).all()) else None


def _derivative_elsewhere(view: Judging, case: CaseView, ds: torch.Tensor, dr: torch.Tensor, v: torch.Tensor,
                          y: torch.Tensor, what: str) -> str | None:
    """The derivative taken at the wrong values: at forward's output (saved where the input belongs), at
    grad_output (a mask or formula built from it), or the right formula with the input and grad_output
    exchanged (a call given its arguments in the wrong order)."""
    name, g, x = case.tensor_names[0], view.grad_output, case.inputs[0].reshape(-1)
    if y.shape != ds.shape or v.shape != ds.shape:
        return None
    at_y, at_v = derivative_at(view, case, y), derivative_at(view, case, v)
    if at_y is not None and _close(ds, at_y) and not _close(dr, at_y):
        return (f"{what} is the derivative taken at forward's output instead of at {name}: backward uses "
                f"the output where {name} belongs (is the output what was saved?). Save {name} itself, or "
                f"write the derivative in terms of the output{_bracket(view)}.")
    if at_v is not None and _close(ds, at_v) and not _close(dr, at_v):
        return (f"{what} is the derivative taken at {g} instead of at {name}: backward builds it (a mask, "
                f"a condition) from {g} where {name}, the saved input, belongs{_bracket(view)}.")
    if at_v is not None and _close(ds * v, at_v * x) and not _close(dr * v, at_v * x):
        companion = view.problem.companion
        call = (f"{companion}.apply must get them in the order of {companion}.forward's arguments"
                if companion else "pass them in the order the function takes them")
        return (f"{what} is the right formula with {name} and {g} exchanged: a call receives its "
                f"arguments in the wrong order; {call}.")
    return None


# -- second derivatives -------------------------------------------------------------------------------

def second_cause(view: Judging, case: CaseView, analytical: torch.Tensor, numerical: torch.Tensor,
                 rtol: float, atol: float) -> tuple[str, int] | None:
    """How autograd's second derivatives through backward differ from finite differences of backward,
    block by block: the columns of one input, or of grad_output. Returns the sentence and the block."""
    sizes = case.sizes + [case.rows]
    names = case.tensor_names + [view.grad_output]
    blocks, start = [], 0
    for size in sizes:
        blocks.append((start, start + size))
        start += size
    if analytical.shape[1] != start:
        return None

    def part(m: torch.Tensor, j: int) -> torch.Tensor:
        return m[:, blocks[j][0]:blocks[j][1]]

    wrong = [j for j in range(len(blocks)) if not close(part(analytical, j), part(numerical, j), rtol, atol)]
    if not wrong:
        return None
    companion = view.problem.companion
    source = f"{companion}.backward" if companion else "backward"
    for a in wrong:
        for b in wrong:
            if a < b and part(analytical, a).shape == part(analytical, b).shape \
                    and close(part(analytical, a), part(numerical, b), rtol, atol) \
                    and close(part(analytical, b), part(numerical, a), rtol, atol):
                order = f"{companion}.forward's inputs" if companion else "forward's inputs"
                return (f"The second derivatives with respect to {names[a]} and {names[b]} are swapped: "
                        f"{source} must return its gradients in the order of {order}."), a
    j = wrong[0]
    mine, right = part(analytical, j), part(numerical, j)
    said = companion_order(view) or ignored_gradient(mine, right, names[j], source) \
        or lacks_grad_output(view, case, mine, right, j, source)
    if said:
        return said, j
    about = f"The second derivative with respect to {names[j]} (how backward's result changes with {names[j]}"
    about += f", given by {source}'s gradient for it)" if companion else ")"
    said = difference_cause(part(analytical, j), part(numerical, j), (sizes[j],), names[j], about,
                   rtol=rtol, atol=atol)
    if said:
        said = said.replace("the right one", "finite differences of backward")
        said = said.replace(" (as the 2 in d(x²)/dx = 2x)", "")
    return said or f"{about} differs from finite differences of backward.", j
