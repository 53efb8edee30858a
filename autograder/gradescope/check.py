"""setup.sh's last step, `python -m autograder.gradescope check`: is the image able to grade?"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder import config
from autograder.gradescope.settings import Settings, prepare


def untouched_notebook(assignment) -> list[str]:
    """The cells of a notebook as students get it: every graded name defined, every forward raising."""
    lines = ["import torch", ""]
    for problem in assignment.problems:
        for name in (problem.lookup, *problem.also_functions):
            if problem.kind == "callable" and name == problem.lookup:
                lines += [f"def {name}(*args, **kwargs):", "    raise NotImplementedError()", ""]
            else:
                lines += [f"class {name}(torch.autograd.Function):", "    @staticmethod",
                          "    def forward(ctx, *args):", "        raise NotImplementedError()", ""]
    return ["\n".join(lines)]


def check(root: Path) -> int:
    """The settings load, the assignment is validated (a Function computing each reference passes every
    check, a wrong one fails: validate.py), packages import, Graphviz draws, and a worker grades an
    untouched notebook 0 (a known wrong answer, through the very pipeline that grades students). Exit
    status 1, with the cause, when anything is wrong: the image is not built."""
    from autograder.judge.checks import max_score
    from autograder.judge.validate import InvalidAssignment
    from autograder.report.png import graph_png

    try:
        settings, assignment = prepare(root)
    except (InvalidAssignment, LookupError, ValueError, OSError) as error:
        print(f"autograder: NOT ready to grade: {error}", file=sys.stderr)
        return 1
    import graphviz  # noqa: F401
    import matplotlib.pyplot  # noqa: F401 - builds matplotlib's font cache into the image, once
    import torch
    import torchviz  # noqa: F401

    png = graph_png({"nodes": [["n0", "x", "leaf"], ["n1", "ExpBackward0", "op"]], "edges": [["n0", "n1"]]})
    assert png.startswith(b"\x89PNG"), "Graphviz did not draw a PNG"
    wrong = _grade_untouched(assignment, settings)
    if wrong:
        print(f"autograder: NOT ready to grade: {wrong}", file=sys.stderr)
        return 1
    print(f"autograder: ready to grade {assignment.name} ({len(assignment.problems)} problems, "
          f"{max_score(assignment):g} points) with torch {torch.__version__}, "
          f"output {settings.output_format}: "
          f"an answer computing each reference passes every check, a wrong one fails, and a worker graded an "
          f"untouched notebook 0/{max_score(assignment):g}")
    return 0


def _grade_untouched(assignment, settings: Settings) -> str:
    """Grades an untouched notebook in a worker; what went wrong, or ""."""
    from autograder.intake.loader import Submission
    from autograder.pipeline import Pipeline

    untouched = Submission("untouched", None, untouched_notebook(assignment))
    with Pipeline(assignment, settings.limits(), 1, settings.seed,
                  preload=config.GRADESCOPE_PRELOAD) as pipeline:
        (_, outcome), = pipeline.measure([untouched])
        missing = [p.name for p in assignment.problems if p.name not in outcome.data]
        if missing:
            return (f"a worker did not measure {', '.join(missing)} in an untouched notebook "
                    f"({next(iter(outcome.failures.values()), 'no reason given')}).")
        if pipeline.judge(untouched, outcome).score:
            return "an untouched notebook scored above 0."
    return ""
