"""Where a reference fails gradcheck on its own inputs: the entries that lie at a kink (|x| at 0) or a
jump of it, found one by one, told to the instructor with their values and the avoid= that keeps the
inputs away (validate.py asks when the reference itself fails gradcheck or gradgradcheck)."""

from __future__ import annotations

import torch

from autograder.course.problems import Problem, TensorSpec

KINK_EPS = 1e-6  # torch.autograd.gradcheck's step
KINK_ENTRIES = 2000  # entries of one input probed one by one: a problem's cases are much smaller


def kinks(problem: Problem, seed: int, second: bool = False) -> str:
    """Where the reference's own derivative (its second, with `second`) disagrees with its finite
    differences, entry by entry: the inputs that lie at a kink (|x| at 0) or a jump of the reference, told
    with their values and the avoid= that keeps them away; "" when no entry disagrees."""
    from autograder.judge.reference import input_names

    names = input_names(problem)
    rtol, atol = problem.gradcheck_rtol_atol
    for index, case in enumerate(problem.cases):
        args, kwargs = problem.inputs(index, seed), problem.kwargs(index)
        for position, spec in enumerate(case.args):
            if not (isinstance(spec, TensorSpec) and spec.differentiable) \
                    or args[position].numel() > KINK_ENTRIES:
                continue
            try:
                values = _disagreeing(problem.reference, args, kwargs, position, second, rtol, atol)
            except Exception:  # noqa: BLE001 - the hint is a help; the failure is reported without it
                return ""
            if values:
                name = names[position] if position < len(names) else f"input {position + 1}"
                return _kink_advice(name, values, index + 1, spec)
    return ""


def _disagreeing(reference, args: list, kwargs: dict, position: int, second: bool, rtol: float,
                 atol: float) -> list[float]:
    """The values of args[position] at whose entries the derivative of the output along a fixed direction
    (of its gradient, with `second`) differs from its central finite difference, as gradcheck's."""
    def along(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.detach().requires_grad_(True)
        with torch.enable_grad():
            out = reference(*[x if i == position else a for i, a in enumerate(args)], **kwargs)
            value = (out * _direction(out)).sum()
            if second:
                (g,) = torch.autograd.grad(value, x, create_graph=True)
                value = (g * _direction(g).flip(0)).sum()
        return value, x

    x = args[position].detach()
    value, leaf = along(x)
    (analytical,) = torch.autograd.grad(value, leaf, allow_unused=True)
    analytical = (torch.zeros_like(x) if analytical is None else analytical).reshape(-1)
    found = []
    for j in range(x.numel()):
        step = torch.zeros(x.numel(), dtype=x.dtype)
        step[j] = KINK_EPS
        step = step.reshape(x.shape)
        above, below = along(x + step)[0].detach(), along(x - step)[0].detach()
        numerical = float(above - below) / (2 * KINK_EPS)
        if abs(numerical - float(analytical[j])) > atol + rtol * abs(float(analytical[j])):
            found.append(float(x.reshape(-1)[j]))
    return found


def _direction(t: torch.Tensor) -> torch.Tensor:
    """A fixed direction of t's shape with no zero entry, so that no entry's derivative goes unseen."""
    return torch.linspace(0.5, 1.5, t.numel(), dtype=t.dtype).reshape(t.shape)


def _kink_advice(name: str, values: list[float], case: int, spec: TensorSpec) -> str:
    shown = ", ".join(f"{v:.3g}" for v in values[:4]) + (", ..." if len(values) > 4 else "")
    near = sorted({round(v, 2) + 0.0 for v in values})  # + 0.0: -0.0 said as 0.0
    avoid = f"avoid=({', '.join(f'{p:g}' for p in near)},)" if len(near) <= 3 else "avoid=(...)"
    entries = f"{len(values)} entr{'y' if len(values) == 1 else 'ies'}"
    return (f"Its own derivative disagrees with its finite differences at {entries} of {name} in case "
            f"{case} ({name} = {shown}): a kink (as |x| or ReLU at 0) or a jump of the reference lies within "
            f"the finite differences' step of these values. Keep the inputs away from it: "
            f"TensorSpec({spec.shape!r}, ..., {avoid}) (margin=, the distance kept, is {spec.margin:g}).")
