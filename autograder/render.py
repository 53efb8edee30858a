"""Draws results: heat maps and graphs as inline SVG, HTML through the Jinja2 templates, plain text.

One renderer serves the inline check() and the batch grader's feedback pages. Pictures are drawn
deterministically (fixed SVG ids, no dates) so that notebook outputs reproduce.
"""

from __future__ import annotations

import io
from functools import lru_cache

from autograder.graphs import Graph, svg
from autograder.judge import CheckResult, Figure


@lru_cache(maxsize=1)
def _templates():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("autograder", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True))
    env.globals["figure_svgs"] = figure_svgs
    return env


def heatmaps_svg(figure: Figure) -> str:
    import matplotlib

    import matplotlib.pyplot as plt
    import numpy as np

    panels = [(caption, np.asarray(matrix, dtype=float)) for caption, matrix in figure.panels]
    panels = [(c, m.reshape(1, -1) if m.ndim == 1 else m) for c, m in panels]
    scale = max(float(np.abs(m).max()) for _, m in panels) or 1.0
    with matplotlib.rc_context({"svg.hashsalt": "autograd-course", "svg.fonttype": "none", "font.size": 8}):
        fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 2.8), squeeze=False)
        for ax, (caption, m) in zip(axes[0], panels):
            image = ax.imshow(m, cmap="RdBu_r", vmin=-scale, vmax=scale, interpolation="nearest", aspect="auto")
            ax.set_title(caption)
            ax.set_xlabel("column")
            ax.set_ylabel("row")
        fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8)
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
        plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def figure_svgs(figure: Figure) -> list[tuple[str, str]]:
    """(caption, svg) pairs for one figure."""
    if figure.kind == "heatmaps":
        return [("", heatmaps_svg(figure))]
    return [(caption, svg(Graph.from_dict(data))) for caption, data in figure.panels if data]


def html_report(results: list[CheckResult], title: str = "", show_hidden: bool = True) -> str:
    """The pass/fail table with diagnoses and pictures, as an HTML fragment."""
    shown = [r for r in results if show_hidden or not r.hidden]
    return _templates().get_template("report.html.j2").render(results=shown, title=title)


def text_report(results: list[CheckResult], show_hidden: bool = True) -> str:
    lines = []
    for r in results:
        if r.hidden and not show_hidden:
            continue
        mark = "PASS" if r.passed else "FAIL"
        lines.append(f"{mark}  {r.name:<40} {r.score:g}/{r.max_score:g}")
        if r.message:
            lines.append(f"      {r.message}")
    total = sum(r.score for r in results if show_hidden or not r.hidden)
    best = sum(r.max_score for r in results if show_hidden or not r.hidden)
    lines.append(f"score {total:g}/{best:g}")
    return "\n".join(lines)


def feedback_page(submission: str, assignment: str, results: list[CheckResult], cells: list[dict],
                  output: str, show_hidden: bool = True) -> str:
    """One self-contained page for a student: table, diagnoses, pictures, cell errors, printed output."""
    shown = [r for r in results if show_hidden or not r.hidden]
    return _templates().get_template("feedback.html.j2").render(
        submission=submission, assignment=assignment, results=shown, cells=cells, output=output,
        score=sum(r.score for r in shown), max_score=sum(r.max_score for r in shown),
        report=html_report(shown))
