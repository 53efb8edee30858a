"""The fingerprint of what decides an assignment's grades.

`fingerprint()` is a hash of the assignment's full definition as the grader uses it: each problem's
cases as the seed makes them, the reference's answers on them (outputs, Jacobians, its graph), the
checks, points, tolerances, hints, known mistakes and what is hidden, and the assignment's lesson and
preloaded modules. Results are keyed on it (keys.py), so changing a reference, a case, a point or an
extra file grades the class again, and renaming a variable does not. Code that enters it as code (a
term's or a mistake's function) enters as its syntax tree (`normalised`), as extra files do in the key:
a comment or a new layout changes no result, so it grades nobody again.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import io
import json
import re
import textwrap
import tokenize
from typing import Any

from autograder.course.problems import Problem, TensorSpec
from autograder.judge.checks import checks_of, points_of


def _plain(value: Any) -> Any:
    if isinstance(value, TensorSpec):
        return {"tensor": list(value.shape), "low": value.low, "high": value.high, "avoid": list(value.avoid),
                "margin": value.margin, "dtype": value.dtype}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if callable(value):  # its code: the same from one run to the next, and different when it changes
        try:
            return normalised(inspect.getsource(value))
        except (OSError, TypeError):
            return getattr(value, "__qualname__", type(value).__name__)
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))  # never a memory address: it changes every run


def definition(problem: Problem, seed: int) -> dict:
    """What decides a problem's verdicts, as plain data."""
    from autograder.judge.reference import encoded_cases, reference_data

    return {"name": problem.name, "lookup": problem.lookup, "kind": problem.kind,
            "checks": checks_of(problem),
            "points": {c: points_of(problem, c) for c in checks_of(problem)}, "hidden": problem.hidden,
            "hidden_checks": sorted(problem.hidden_checks), "double_backward": problem.double_backward,
            "extra_checks": list(problem.extra_checks), "also_functions": list(problem.also_functions),
            "tolerance": problem.rtol_atol, "gradcheck_tolerance": problem.gradcheck_rtol_atol,
            "hints": {c: problem.hints[c] for c in sorted(problem.hints)},
            "asks": {k: _plain(getattr(problem, k, None))
                     for k in ("saves", "skips_unneeded", "companion", "all_outputs", "elementwise",
                               "derivative", "terms", "mistakes", "kinks")},
            "cases": [_plain(c.args) for c in problem.cases],
            "kwargs": [_plain(dict(c.kwargs)) for c in problem.cases],
            "inputs": encoded_cases(problem, seed), "reference": reference_data(problem, seed)}


def fingerprint(assignment, seed: int = 0) -> str:
    """sha256 of the assignment's full definition at this seed (see the module's docstring)."""
    data = {"assignment": assignment.name, "lesson": assignment.lesson, "preload": list(assignment.preload),
            "problems": [definition(p, seed) for p in assignment.problems]}
    text = json.dumps(data, sort_keys=True, default=repr, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def normalised(source: str) -> str:
    """Python source as what it does, so that a comment, a blank line or another layout of the same code
    gives the same text: its syntax tree; a fragment that is not whole statements (the line of a lambda
    inside a call) as its tokens without comments and line breaks."""
    try:
        return ast.dump(ast.parse(textwrap.dedent(source)))
    except SyntaxError:
        pass
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER)
    kept = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type not in skipped:
                kept.append(token.string)
    except (tokenize.TokenError, SyntaxError):
        pass  # a call left open at the end of the fragment: the tokens read until then
    return " ".join(kept)
