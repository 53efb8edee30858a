"""Gradescope's results.json for one upload: every test once, each problem from the file where it scored
best, rendered by feedback.py and laid out by report/files.py."""

from __future__ import annotations

from autograder.gradescope.feedback import Pictures, render_test, summary
from autograder.gradescope.settings import Settings
from autograder.report.files import Graded, gradescope_results
from autograder.report.png import draw_graphs
from autograder.results import subtotals

NOTHING_FOUND = "No notebook (.ipynb) or Python file (.py) was found in your submission."


def combine(assignment, files: list[Graded]) -> tuple[list, dict[str, str]]:
    """Every test once: each problem's checks from the file where that problem scored best (the first
    such file on a tie), and which file that was."""
    chosen, source = [], {}
    names = [p.name for p in assignment.problems]
    scores = [subtotals(f.results, names) for f in files]
    for name in names:
        best = max(range(len(files)), key=lambda i: scores[i][name])  # max keeps the first of equals
        chosen += [r for r in files[best].results if r.problem == name]
        source[name] = files[best].submission
    return chosen, source


def results_document(assignment, files: list[Graded], settings: Settings, seconds: float,
                     about: list[str] = (), isolation: str = "container") -> dict:
    """Gradescope's results.json for one submission (isolation: where its code ran, Server.isolation)."""
    from autograder.pipeline import failed_everywhere

    fmt = settings.output_format
    chosen, source = (combine(assignment, files) if files
                      else (failed_everywhere(assignment, NOTHING_FOUND), {}))
    pictures = Pictures(settings.picture_bytes)
    if fmt != "text":  # the text format has no pictures
        draw_graphs(chosen)  # all at once, within one deadline
    graphs_shown: set[str] = set()
    # Tests students may see are drawn first, so the picture budget goes to them before hidden ones.
    outputs = {i: render_test(chosen[i], fmt, pictures, graphs_shown)
               for i in sorted(range(len(chosen)), key=lambda i: chosen[i].hidden)}
    extra = {"assignment": assignment.name, "seed": settings.seed, "isolation": isolation,
             "files": [{"file": f.submission, "sha256": f.sha256, "score": f.score} for f in files]}
    flagged = {f.submission: f.flag.to_dict() for f in files if f.flag is not None}
    if flagged:  # it reaches into the grader (flags.py): no grading.toml here, so a regrade by hand
        extra["flagged"] = flagged
    return gradescope_results(chosen, [outputs[i] for i in range(len(chosen))],
                              [p.name for p in assignment.problems],
                              summary(assignment, files, chosen, source, fmt, pictures.skipped, about), fmt,
                              settings.visibility, settings.hidden_visibility, seconds, extra)
