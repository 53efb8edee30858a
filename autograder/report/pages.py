"""Results as HTML, through the Jinja2 templates, and as plain text.

One renderer serves the inline check() and the batch grader's feedback pages; the pictures in them are
drawn by svg.py from the figure model (figures.py), deterministically (fixed SVG ids, no dates) so that
notebook outputs reproduce.

Everything a worker sent (messages, tracebacks, printed output, graph labels, numbers) is untrusted:
the templates autoescape every value, and the only markup passed through unescaped (`|safe`) is what
the package builds, the report fragment and the pictures, in which every text is escaped by svg.py
(heat maps) or by Graphviz from a label graphs.py made plain text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import quote

from autograder.report.svg import figure_svgs

if TYPE_CHECKING:
    from autograder.judge.verdicts import CheckResult


def feedback_href(submission: str) -> str:
    """A student's feedback page, relative to the class report beside the students' folders."""
    return quote(str(submission), safe="") + "/feedback.html"


@lru_cache(maxsize=1)
def templates():
    """The Jinja2 environment of every page (templates/), escaping every value by default."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("autograder.report", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True))
    env.globals["figure_svgs"] = figure_svgs
    env.filters["page"] = feedback_href
    return env


def html_report(results: list[CheckResult], title: str = "", show_hidden: bool = True) -> str:
    """The pass/fail table with diagnoses and pictures, as an HTML fragment."""
    shown = [r for r in results if show_hidden or not r.hidden]
    return templates().get_template("report.html.j2").render(results=shown, title=title)


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
                  output: str, show_hidden: bool = False) -> str:
    """One self-contained page for a student: table, diagnoses, pictures, cell errors, printed output.
    Hidden problems and checks are left out (they are in results.json and grades.csv for instructors)."""
    shown = [r for r in results if show_hidden or not r.hidden]
    return templates().get_template("feedback.html.j2").render(
        submission=submission, assignment=assignment, results=shown, cells=cells, output=output,
        score=sum(r.score for r in shown), max_score=sum(r.max_score for r in shown),
        report=html_report(shown))
