"""Calling the learner's code, and its exceptions as plain data.

Every call into the submission goes through `call`, `grad` or `apply`, which put back whatever the call
patched in the grader (snapshot.guard) before anything else is measured; an exception the learner's
code raised becomes `error_data`: its type, message and the learner's own frames only.
"""

from __future__ import annotations

import contextlib
import traceback
from typing import Any

import torch

from autograder.measure.captured import T
from autograder.measure.encoding import as_plain, is_tensor
from autograder.measure.snapshot import guard

MAX_TEXT = 2000


def call(problem, obj, args: list[Any]) -> Any:
    """Calls the submission through torch's own Function.apply (a class cannot swap it for something
    else), then puts back whatever the call patched in the grader."""
    try:
        kwargs = getattr(args, "kwargs", None) or {}
        if problem.kind == "function" and T.isinstance(obj, type) and T.issubclass(obj, T.Function):
            return T.apply(obj, *args, **kwargs)
        return problem.call(obj, list(args), kwargs)
    finally:
        guard()


def grad(outputs, inputs, grad_outputs, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False):
    """torch.autograd.grad on plain views (no subclass can intercept the call); the submission's backward
    runs inside it, so whatever it patched is put back afterwards."""
    try:
        outputs = as_plain(outputs) if is_tensor(outputs) else outputs
        return _vjp(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)
    finally:
        guard()


def _vjp(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused):
    """What torch.autograd.grad computes. Where every tensor is a plain one and each vector has its
    output's shape (the calls above: the vectors are made from the outputs' shapes), straight from torch's
    engine, as grad itself ends: grad's shape check first imports torch's symbolic shapes and sympy (0.3
    to 0.7 s), which a notebook's first check() would wait for."""
    outs = (outputs,) if is_tensor(outputs) else tuple(outputs)
    ins = (inputs,) if is_tensor(inputs) else tuple(inputs)
    vectors = (grad_outputs,) if is_tensor(grad_outputs) else tuple(grad_outputs or ())
    if (T.run_backward is None or len(vectors) != len(outs)
            or not all(T.type(t) is T.Tensor for t in outs + ins + vectors)
            or any(o.shape != v.shape or o.is_complex() or v.is_complex() for o, v in zip(outs, vectors))):
        return T.grad(outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                      allow_unused=allow_unused)
    return T.run_backward(outs, vectors, create_graph if retain_graph is None else retain_graph, create_graph,
                          ins, allow_unused, accumulate_grad=False)


def torch_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
               allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad, for PyTorch's own gradcheck to call while its words are measured
    (backward.torch_checks): the same result, and the same errors, through _vjp where the call is one it
    covers (torch's first grad with a given vector imports sympy: 0.3 to 0.5 s of a first failing
    check(), and of every failing submission whose worker has not loaded it)."""
    if grad_outputs is None or not only_inputs or is_grads_batched or materialize_grads:
        given = {name: value for name, value, default in (("only_inputs", only_inputs, True),
                                                          ("is_grads_batched", is_grads_batched, False),
                                                          ("materialize_grads", materialize_grads, False))
                 if value != default}  # only what was asked: older torch has fewer of them
        return T.grad(outputs, inputs, grad_outputs, retain_graph=retain_graph, create_graph=create_graph,
                      allow_unused=allow_unused, **given)
    return _vjp(outputs, inputs, grad_outputs, retain_graph, create_graph, bool(allow_unused))


def apply(function, args: list[Any]) -> Any:
    """A Function of the submission other than the graded one, applied as `call` applies that one."""
    try:
        return T.apply(function, *args)
    finally:
        guard()


def _excluded_prefixes() -> tuple[str, ...]:
    """Where code that is not the learner's lives: torch, this package, Python's own library and the
    installed packages. A traceback shows only the frames outside them."""
    import os
    import sysconfig

    paths = {os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            paths.add(sysconfig.get_paths()[key])
    # each ending with the system's separator (a backslash on Windows): "torch" is not "torchviz"
    return tuple(sorted(os.path.join(p, "") for p in paths if p)) + ("<frozen ",)


_EXCLUDED = _excluded_prefixes()


def _shown_file(filename: str) -> str:
    """A frame's file as the learner knows it: a notebook cell rather than IPython's temporary file."""
    if "/ipykernel_" in filename or "\\ipykernel_" in filename or filename.startswith("<ipython-input"):
        return "<your notebook>"
    return filename


def student_frames(tb) -> list[dict]:
    """The frames of a traceback that run the learner's code, innermost last, as plain data."""
    frames = []
    for frame in traceback.extract_tb(tb):
        if frame.filename.startswith(_EXCLUDED):
            continue
        frames.append({"file": _shown_file(frame.filename), "line": frame.lineno or 0, "name": frame.name,
                       "code": (frame.line or "").strip()[:200]})
    return frames[-8:]


def error_data(error: BaseException, where: str) -> dict:
    """An exception of student code as plain data: its type, message and the learner's own frames (a
    traceback without torch's or the grader's frames and paths; empty when no frame is the learner's)."""
    frames = student_frames(error.__traceback__)
    message = str(error)[:MAX_TEXT]
    text = ""
    if frames:
        lines = ["Traceback (your code only, most recent call last):"]
        for f in frames:
            lines.append(f'  File "{f["file"]}", line {f["line"]}, in {f["name"]}')
            if f["code"]:
                lines.append(f"    {f['code']}")
        lines.append(f"{T.type(error).__name__}: {message}")
        text = "\n".join(lines)[-MAX_TEXT:]
    return {"type": T.type(error).__name__, "message": message, "raised_in": where, "traceback": text,
            "frames": frames}
