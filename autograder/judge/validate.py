"""An assignment checked before anything is graded with it.

`validate()` runs when the grader loads an assignment (`gradescope` and the archive's setup.sh check
validate every problem; `list` and `grade` those an extra file or an installed package added or changed,
the package's own being validated by its tests), so that a mistake in an instructor's problem is a usage
error naming the problem and the cause, never a class of zeros:

- every field is of the kind docs/authoring.md describes (checks, points, tolerances, tensor specs,
  keyword arguments, hints);
- the reference runs on every case and returns a float64 tensor of finite values that depends, through
  autograd, on the differentiable inputs when gradients are asked for;
- its checks can be measured and tell right from wrong: a Function that computes the reference itself
  (forward runs it, backward differentiates it with autograd, twice if need be) is measured and judged
  as a student's would be, and must pass every check but the modern-PyTorch ones (forward mode, vmap,
  opcheck, which a generic Function cannot have); one whose gradient is twice the right one (or, when
  no gradient is asked, whose output is off) must fail.

A reference that fails gradcheck on its own is told where (kinks.py: at a kink, with the avoid= that
keeps the inputs away).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from functools import cache
from pathlib import Path
from typing import Any

import torch

from autograder.course.problems import DTYPES, Problem, TensorSpec
from autograder.judge.checks import BY_NAME, EXTRA, checks_of, points_of
from autograder.judge.reference_kinks import kinks
from autograder.measure import calls
from autograder.measure.encoding import decode_args, differentiable

GRADIENT_CHECKS = ("backward returns", "gradient", "gradcheck", "gradgradcheck")


class InvalidAssignment(ValueError):
    """A problem the grader cannot grade with: the message names the problem and the cause."""


PACKAGE = str(Path(__file__).resolve().parent.parent)


def _where(assignment, problem: Problem, origins: dict | None) -> str:
    """"Problem 'X' of A (from hidden.py, line 12)": the file that added it and the line it is written on
    (a problem of this package's own is named without)."""
    origin = (origins or {}).get((assignment.name, problem.name))
    file, line = problem.written_at or ("", 0)
    where = [f"from {origin}"] if origin else []
    if file and not str(Path(file).resolve()).startswith(PACKAGE):
        where.append(f"line {line}" if file == origin else f"written in {file}, line {line}")
    return f"Problem {problem.name!r} of {assignment.name}" + (f" ({', '.join(where)})" if where else "")


def validate(assignment, seed: int = 0, origins: dict | None = None, outside_only: bool = False) -> None:
    """Raises InvalidAssignment for the first problem the grader could not grade with. outside_only: the
    package's own problems are taken as they are (its tests validate every one of them: their self-test
    costs a `grade` run a third of a second before any worker starts); only those an extra file or an
    installed package added or changed (origins) are validated."""
    if not assignment.problems:
        raise InvalidAssignment(f"The assignment {assignment.name} has no problems.")
    names = [p.name for p in assignment.problems]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidAssignment(f"The assignment {assignment.name} has two problems called {twice[0]!r}.")
    for problem in assignment.problems:
        if outside_only and (assignment.name, problem.name) not in (origins or {}):
            continue
        where = _where(assignment, problem, origins)
        cause = _validated(problem, seed)
        if cause:
            raise InvalidAssignment(f"{where}: {cause}")


@cache
def _validated(problem: Problem, seed: int) -> str:
    return _structure(problem) or _reference(problem, seed) or _self_test(problem, seed)


# -- the fields ---------------------------------------------------------------------------------------

def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _tolerance(name: str, value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, (tuple, list)) or len(value) != 2 \
            or not all(_number(v) and v >= 0 for v in value):
        return f"{name} must be (rtol, atol), two numbers of at least 0, not {value!r}."
    return ""


def _structure(problem: Problem) -> str:
    """What is wrong with the problem's fields, in a sentence, or ""."""
    if problem.kind not in ("function", "callable"):
        return (f"kind must be \"function\" (a torch.autograd.Function) or \"callable\" (a function), not "
                f"{problem.kind!r}.")
    if not problem.lookup.isidentifier():
        return (f"the name looked up in a submission, {problem.lookup!r}, is not a Python name: give "
                f"entry=\"...\" (the class or function students define).")
    if not callable(problem.reference):
        return "its reference is not callable: give a function computing the right answer with torch."
    unknown = [c for c in (*problem.skip, *problem.points, *problem.hints) if c not in BY_NAME]
    if unknown:
        return f"there is no check {unknown[0]!r}; the checks are {', '.join(BY_NAME)}."
    unknown = [c for c in problem.extra_checks if c not in EXTRA]
    if unknown:
        return f"extra_checks may hold {', '.join(EXTRA)}, not {unknown[0]!r}."
    if not checks_of(problem):
        return "it asks no check: skip leaves none."
    wrong = [c for c in problem.hidden_checks if c not in checks_of(problem)]
    if wrong:
        return (f"hidden_checks names {wrong[0]!r}, which the problem does not ask; it asks "
                f"{', '.join(checks_of(problem))}.")
    for check in checks_of(problem):
        if not _number(points_of(problem, check)) or points_of(problem, check) < 0:
            return (f"the points of {check!r} must be a number of at least 0, not "
                    f"{points_of(problem, check)!r}.")
    for check, hint in problem.hints.items():
        if not isinstance(hint, str):
            return f"the hint for {check!r} must be a sentence (a str), not {type(hint).__name__}."
    said = (_tolerance("tolerance", problem.tolerance)
            or _tolerance("gradcheck_tolerance", problem.gradcheck_tolerance))
    if said:
        return said
    for name in problem.also_functions:
        if not str(name).isidentifier():
            return f"also_functions names {name!r}, which is not a Python name."
    if not problem.cases:
        return "it has no cases: give at least one Case((TensorSpec(...), ...))."
    for i, case in enumerate(problem.cases, 1):
        said = _case(case, problem)
        if said:
            return f"case {i} {case.describe() if hasattr(case, 'describe') else repr(case)}: {said}"
    return ""


def _case(case, problem: Problem) -> str:
    if not hasattr(case, "args") or not isinstance(case.args, tuple):
        return "a case must be Case((arguments...), {keyword: value}), not " + type(case).__name__ + "."
    for arg in case.args:
        if isinstance(arg, TensorSpec):
            said = _spec(arg)
            if said:
                return said
        elif isinstance(arg, torch.Tensor):
            return ("a tensor argument is given as TensorSpec(shape, ...), so that the grader draws it from "
                    "the seed.")
    for name, value in case.kwargs:
        if not name.isidentifier():
            return f"the keyword {name!r} is not a Python name."
        if isinstance(value, (TensorSpec, torch.Tensor)):
            return f"the keyword argument {name} is a tensor: pass tensors positionally (keyword arguments " \
                   f"are plain values such as dim=1)."
    if case.kwargs and problem.extra_checks:
        return "the checks forward mode, vmap and opcheck call the Function without keyword arguments."
    return ""


def _spec(spec: TensorSpec) -> str:
    if spec.dtype not in DTYPES:
        return f"dtype {spec.dtype!r} is not one of {', '.join(DTYPES)}."
    if not isinstance(spec.shape, tuple) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                                    for n in spec.shape):
        return f"the shape {spec.shape!r} must be a tuple of sizes (whole numbers of at least 0)."
    if not (_number(spec.low) and _number(spec.high)):
        return f"low and high must be numbers, not {spec.low!r} and {spec.high!r}."
    integer = spec.dtype != "bool" and not getattr(torch, spec.dtype).is_floating_point
    if (int(spec.low) >= int(spec.high)) if integer else spec.low >= spec.high:
        kind = "integers are drawn from low to high - 1" if integer else "values are drawn from [low, high)"
        return f"low ({spec.low}) must be below high ({spec.high}): {kind}."
    return ""


# -- the reference ----------------------------------------------------------------------------------

def _asks_gradients(problem: Problem) -> bool:
    return any(c in checks_of(problem) for c in GRADIENT_CHECKS)


def _reference(problem: Problem, seed: int) -> str:
    """Runs the reference on every case; what goes wrong, in a sentence, or ""."""
    from autograder.judge.reference import encoded_cases, expectations, reference_data

    try:
        cases = encoded_cases(problem, seed)
    except Exception as error:  # noqa: BLE001 - the instructor's problem, reported with its cause
        return f"its inputs could not be made ({type(error).__name__}: {error})."
    obj = _reference_object(problem)
    for i, encoded in enumerate(cases):
        label = f"case {i + 1} {problem.cases[i].describe()}"
        args = decode_args(encoded)
        try:
            out = calls.call(problem, obj, args)
        except Exception as error:  # noqa: BLE001
            return f"its reference raised {type(error).__name__}: {str(error)[:300]} on {label}."
        if not isinstance(out, torch.Tensor):
            return f"its reference returned a {type(out).__name__} on {label}, not a tensor."
        if out.dtype != torch.float64:
            return (f"its reference returned {out.dtype} on {label}; a student's right answer would then "
                    f"fail 'forward', which asks for float64 (compute in float64, e.g. x.double()).")
        if not bool(torch.isfinite(out.detach()).all()):
            return (f"its reference returned NaN or infinity on {label}: no answer could be judged right "
                    f"there.")
        if _asks_gradients(problem) and args.inputs and out.grad_fn is None:
            return (f"its reference's output on {label} does not depend, through autograd, on the float64 "
                    f"inputs: compute it with torch operations (no .detach(), NumPy or torch.no_grad()), or "
                    f"skip the gradient checks (skip=(\"backward returns\", \"gradient\", \"gradcheck\")).")
    if _asks_gradients(problem) and not any(differentiable(a) for c in cases for a in c):
        return ("it asks for gradients but no case has a float64 tensor input: add one, or skip the gradient "
                "checks.")
    try:
        reference_data(problem, seed)
        expectations(problem, seed)
    except Exception as error:  # noqa: BLE001
        return (f"its reference's derivatives could not be measured ({type(error).__name__}: "
                f"{str(error)[:300]}).")
    return ""


def _reference_object(problem: Problem):
    from types import SimpleNamespace

    return SimpleNamespace(apply=problem.reference) if problem.kind == "function" else problem.reference


# -- a right and a wrong answer ----------------------------------------------------------------------

_SAVED = object()  # where a tensor argument was saved for backward

def reference_function(problem: Problem, scale: float = 1.0, name: str = "") -> type:
    """A torch.autograd.Function computing the reference: forward runs it, backward differentiates it
    again with autograd (create_graph when asked, so second derivatives work), scaled by `scale` (2: a
    wrong answer). It takes the reference's own parameters, keyword arguments included."""
    reference = problem.reference

    def forward(ctx, *args, **kwargs):
        ctx.save_for_backward(*[a for a in args if isinstance(a, torch.Tensor)])
        ctx.plain = [_SAVED if isinstance(a, torch.Tensor) else a for a in args]
        ctx.kwargs = kwargs
        return reference(*args, **kwargs).detach()

    forward = _with_parameters_of(reference, forward)

    def backward(ctx, grad):
        saved = iter(ctx.saved_tensors)
        args = [next(saved) if a is _SAVED else a for a in ctx.plain]
        wanted = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
        create = torch.is_grad_enabled()
        with torch.enable_grad():
            out = reference(*args, **ctx.kwargs)
            found = torch.autograd.grad(out, [args[i] for i in wanted], grad, create_graph=create,
                                        allow_unused=True) if wanted else ()
        grads: list[Any] = [None] * len(args)
        for i, g in zip(wanted, found):
            grads[i] = (torch.zeros_like(args[i]) if g is None else g) * scale
        return tuple(grads)

    return type(name or problem.lookup, (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def _with_parameters_of(reference, forward):
    """forward(ctx, *args) with the reference's own parameters (autograd passes a keyword argument of
    Function.apply to forward by name, so forward must have it), when they are plain ones."""
    try:
        parameters = list(inspect.signature(reference).parameters.values())
    except (TypeError, ValueError):
        return forward
    if not parameters or any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters) \
            or not all(p.name.isidentifier() and p.name != "ctx" for p in parameters):
        return forward
    names = [p.name for p in parameters]
    namespace: dict[str, Any] = {"_impl": forward}
    exec(f"def forward(ctx, {', '.join(names)}):\n    return _impl(ctx, {', '.join(names)})\n", namespace)  # noqa: S102
    made = namespace["forward"]
    defaults = [p.default for p in parameters if p.default is not inspect.Parameter.empty]
    made.__defaults__ = tuple(defaults) or None
    return made


def answer(problem: Problem, scale: float = 1.0, forward_offset: float = 0.0) -> dict[str, Any]:
    """A submission's namespace that answers the problem with the reference (see reference_function)."""
    function = reference_function(problem, scale, problem.also_functions[0] if problem.kind == "callable"
                                  and problem.also_functions else problem.lookup)
    if forward_offset:
        plain_forward = function.forward

        def off(ctx, *args, **kwargs):
            return plain_forward(ctx, *args, **kwargs) * 2 + forward_offset

        function.forward = staticmethod(off)
    namespace: dict[str, Any] = {}
    for other in problem.also_functions:
        namespace[other] = type(other, (torch.autograd.Function,), {})
    if problem.kind == "callable":
        namespace[function.__name__] = function

        def call(*args, **kwargs):
            return function.apply(*args, **kwargs)

        namespace[problem.lookup] = call
    else:
        namespace[problem.lookup] = function
    return namespace


def grade_in_process(problem: Problem, namespace: dict, seed: int = 0) -> list:
    """The verdicts on a namespace measured here, as the inline check() measures (trusted code only)."""
    from autograder.judge.plan import probe
    from autograder.judge.reference import encoded_cases, expectations
    from autograder.judge.verdicts import judge

    data = probe(problem, namespace, encoded_cases(problem, seed), seed, expectations(problem, seed))
    return judge(problem, data, seed)


# The checks a Function built from the reference alone can pass: the numbers. What an exercise asks of the
# code itself (save_for_backward, a companion Function, needs_input_grad...) is not self-tested.
SELF_TESTED = ("is a Function", "forward", "inputs unchanged", "backward returns", "gradient",
               "needs_input_grad", "grad_output unchanged", "save_for_backward", "gradcheck", "gradgradcheck")


def _self_test(problem: Problem, seed: int) -> str:
    core = [c for c in checks_of(problem) if c in SELF_TESTED]
    if problem.extra_checks:  # not measured on a generic Function, which cannot have them
        problem = dataclasses.replace(problem, extra_checks=())
    try:
        right = grade_in_process(problem, answer(problem), seed)
    except Exception as error:  # noqa: BLE001
        return f"its checks could not be measured on the reference itself ({type(error).__name__}: {error})."
    failed = [r for r in right if r.check in core and not r.passed]
    if failed:
        r = failed[0]
        said = f"an answer that computes the reference itself fails its check {r.check!r}: {r.message[:400]}"
        if r.check in ("gradcheck", "gradgradcheck"):
            found = kinks(problem, seed, second=r.check == "gradgradcheck")
            if found:
                return f"{said} {found}"
        return (f"{said} The reference may not be deterministic or differentiable there (at a kink, such as "
                f"|x| at 0, keep the inputs away with TensorSpec(..., avoid=(0.0,))), or a tolerance is too "
                f"tight (tolerance=(rtol, atol), gradcheck_tolerance=...).")
    asked = [c for c in ("gradient", "gradcheck") if c in core]
    if asked:
        wrong, what = answer(problem, scale=2.0), "a gradient twice the right one"
    elif "forward" in core:
        wrong, what, asked = answer(problem, forward_offset=1.0), "an output that is off", ["forward"]
    else:
        return ""
    try:
        verdicts = grade_in_process(problem, wrong, seed)
    except Exception as error:  # noqa: BLE001
        return f"its checks could not be measured on a wrong answer ({type(error).__name__}: {error})."
    if all(r.passed for r in verdicts if r.check in asked):
        return (f"its checks ({', '.join(asked)}) pass {what}, so they cannot tell right from wrong: the "
                f"reference's derivative (or output) is zero on every case, or a tolerance is too loose.")
    return ""
