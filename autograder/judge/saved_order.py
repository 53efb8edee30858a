"""A backward that unpacks ctx.saved_tensors in another order than forward saved them (`saved_grad_out,
x = ctx.saved_tensors` after save_for_backward(x, grad_out)): the numbers then only show a gradient wrong
everywhere, the names show why (measure/saved_names.py reads them from the learner's code)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.judge.judging import CaseView, Judging
    from autograder.measure.contract import StudentError


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


def _fixed(saved: list[str], unpacked: list[str]) -> list[str]:
    """The learner's names put where forward saved the tensors they name; the others fill the rest in turn."""
    placed: list[str | None] = [n if n in unpacked else None for n in saved]
    rest = iter(n for n in unpacked if n not in saved)
    return [n if n is not None else next(rest, "_") for n in placed]


def unpack_order(saved: list[str] | None, unpacked: list[str] | None, owner: str) -> str | None:
    """The sentence for `owner` (CubeBackward, say) when a name backward unpacks is a name forward saved
    at another position; None when the order agrees or cannot be read."""
    if not saved or not unpacked or len(saved) != len(unpacked):
        return None
    named = [n for n in saved if n]
    if len(set(named)) < len(named):
        return None
    moved = [(i, n) for i, n in enumerate(unpacked) if n and n in saved and saved.index(n) != i]
    if not moved:
        return None
    i, name = moved[0]
    holds = f"the tensor saved as {saved[i]}" if saved[i] else f"the {_ordinal(i + 1)} tensor saved"
    shown = ", ".join(n or "..." for n in saved)
    return (f"{owner}.backward unpacks {', '.join(unpacked)} = ctx.saved_tensors, but {owner} saved them "
            f"with ctx.save_for_backward({shown}): its {name} is {holds}. ctx.saved_tensors gives the "
            f"tensors back in the order save_for_backward received them: write "
            f"{', '.join(_fixed(saved, unpacked))} = ctx.saved_tensors.")


def unpacked_out_of_order(message: str, kind: str, error: StudentError, view: Judging,
                          case: CaseView) -> str | None:
    """An error raised in a backward that unpacks its saved tensors out of order (a matmul of mismatched
    shapes, often): the order is the cause, whatever PyTorch says (errors.py tries this first)."""
    if kind == "NotImplementedError" or not any(f.name == "backward" for f in error.frames):
        return None
    if kind == "ValueError" and "values to unpack" in message and "saved_tensors" in error.frames[-1].code:
        for saved, unpacked, owner in (_own(view), _companion(view)):
            said = unpack_count(saved, unpacked, owner) if owner else None
            if said:
                return said
    return own_order(view) or companion_order(view)


def unpack_count(saved: list[str] | None, unpacked: list[str] | None, owner: str) -> str | None:
    """The sentence for a backward that unpacks more or fewer names than forward saved tensors."""
    if saved is None or not unpacked or len(saved) == len(unpacked):
        return None
    shown = ", ".join(n or "..." for n in saved)
    return (f"{owner}.backward unpacks {len(unpacked)} tensors ({', '.join(n or '_' for n in unpacked)} = "
            f"ctx.saved_tensors), but {owner} saved {len(saved)} with ctx.save_for_backward({shown}): "
            f"ctx.saved_tensors holds exactly what save_for_backward received. Pass save_for_backward every "
            f"tensor backward needs, in the order backward unpacks them.")


Names = tuple[list[str] | None, list[str] | None, str | None]  # saved, unpacked, and whose (None: none)


def _own(view: Judging) -> Names:
    """The graded backward's names: the Function's, or that of the Function whose every output is graded
    (Sinh for sinh)."""
    names = view.data.names
    owner = view.lookup if view.problem.kind == "function" else view.problem.all_outputs
    return names.saved, names.unpacked, owner


def _companion(view: Judging) -> Names:
    """The companion's backward's names (CubeBackward's), which gives the second derivatives."""
    names = view.data.names
    return names.companion_saved, names.companion_unpacked, view.problem.companion


def own_order(view: Judging) -> str | None:
    saved, unpacked, owner = _own(view)
    return unpack_order(saved, unpacked, owner) if owner else None


def companion_order(view: Judging) -> str | None:
    saved, unpacked, owner = _companion(view)
    return unpack_order(saved, unpacked, owner) if owner else None


def flag_of_another(view: Judging) -> str | None:
    """A gradient computed under the flag of another input (grad_weight under ctx.needs_input_grad[2],
    bias's flag), read from the learner's code: the flags follow forward's arguments, from 0."""
    inputs = view.names
    for entry in view.data.names.guarded or []:
        flag, _, name = entry.partition(":")
        if not flag.isdigit():
            continue
        of = next((n for n in inputs if name in (f"grad_{n}", f"{n}_grad", f"d{n}")), None)
        if of is None or inputs.index(of) == int(flag):
            continue
        wrong = f", {inputs[int(flag)]}'s flag" if int(flag) < len(inputs) else ", past forward's inputs"
        flags = ", ".join(f"[{i}] {n}" for i, n in enumerate(inputs))
        return (f"backward computes {name} under ctx.needs_input_grad[{flag}]{wrong}: {of}'s is "
                f"ctx.needs_input_grad[{inputs.index(of)}]. ctx.needs_input_grad has one flag per argument "
                f"of forward, in order, counted from 0 ({flags}).")
