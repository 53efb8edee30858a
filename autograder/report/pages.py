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

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from autograder.report.svg import draw_graphs, figure_svgs

if TYPE_CHECKING:
    from autograder.flags import Flag
    from autograder.judge.verdicts import CheckResult
    from autograder.term.standing import Standing

# The page's part that grading.toml decides: rewritten in place by every run (update_standing), so that
# an adjustment reaches a page whose submission is not graded again.
_STANDING = re.compile(r'<section id="standing" data-hidden="(\d)">.*?</section>', re.DOTALL)


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


def checks_table_html(results: list[CheckResult], title: str = "", show_hidden: bool = True,
                group: bool = False) -> str:
    """The pass/fail table with diagnoses and pictures, as an HTML fragment. With group (a feedback
    page), a message shared by several checks is one cause, said once above the table with the checks it
    affects."""
    shown = [r for r in results if show_hidden or not r.hidden]
    causes, cause_of = grouped(shown) if group else ([], {})
    draw_graphs(shown)  # all at once, within one deadline
    return templates().get_template("checks_table.html.j2").render(
        results=shown, title=title, causes=causes, numbers=[cause_of.get(id(r)) for r in shown])


def grouped(results: list[CheckResult]) -> tuple[list[dict], dict[int, int]]:
    """The messages failed checks share ([{"text", "affects", "details"}], numbered from 1) and, for each
    result (by id) that shares one, its number."""
    by_text: dict[str, list[CheckResult]] = {}
    for r in results:
        if not r.passed and r.message:
            by_text.setdefault(r.message, []).append(r)
    causes, cause_of = [], {}
    for text, sharing in by_text.items():
        if len(sharing) < 2:
            continue
        causes.append({"text": text, "affects": _affects(sharing, results),
                       "details": sharing[0].details if all(r.details == sharing[0].details
                                                            and not r.figures for r in sharing) else ""})
        cause_of.update({id(r): len(causes) for r in sharing})
    return causes, cause_of


def _affects(sharing: list[CheckResult], results: list[CheckResult]) -> str:
    """"KillHead (all 8 checks), MyReLU: forward, backward"."""
    if len(sharing) == len(results):
        return f"every check ({len(results)})"
    parts = []
    for problem in dict.fromkeys(r.problem for r in sharing):
        mine = [r.check for r in sharing if r.problem == problem]
        total = sum(r.problem == problem for r in results)
        parts.append(f"{problem} (all {total} checks)" if len(mine) == total and total > 1
                     else f"{problem}: {', '.join(mine)}")
    return "; ".join(parts)


def passing_notes(results: list[CheckResult]) -> list[tuple[str, str]]:
    """(check, note) of the passing checks that carry a note (an observation that costs nothing)."""
    return [(r.check, r.message) for r in results if r.passed and r.message]


PASSING = "all checks of this notebook pass"  # check()'s title when every check it runs passes


def passing_text(problem: str, results: list[CheckResult], called: str) -> str:
    """check()'s verdict on a Function that passes every check: one line, and the notes; no row per check
    and no count, so that it reads the same when the grader gains a check. It promises no marks: the
    instructor may grade with hidden checks that the notebook never runs."""
    lines = [f"check({problem}): {PASSING}",
             *(f"  {check}: {note}" for check, note in passing_notes(results)),
             f"(check({called}, table=True) lists each check.)"]
    return "\n".join(lines)


def passing_html(problem: str, results: list[CheckResult], called: str) -> str:
    return templates().get_template("passing.html.j2").render(problem=problem, called=called, verdict=PASSING,
                                                              notes=passing_notes(results))


def text_report(results: list[CheckResult], show_hidden: bool = True, group: bool = False) -> str:
    """The table as text; with group, as checks_table_html groups it: a shared message said once first."""
    shown = [r for r in results if show_hidden or not r.hidden]
    causes, cause_of = grouped(shown) if group else ([], {})
    lines = [f"cause {n}: {c['text']} (affects {c['affects']})" for n, c in enumerate(causes, 1)]
    for r in shown:
        mark = "PASS" if r.passed else "FAIL"
        lines.append(f"{mark}  {r.name:<40} {r.score:g}/{r.max_score:g}")
        message = f"cause {cause_of[id(r)]}, above" if id(r) in cause_of else r.message
        if message:
            lines.append(f"      {message}")
    lines.append(f"score {sum(r.score for r in shown):g}/{sum(r.max_score for r in shown):g}")
    return "\n".join(lines)


def feedback_page(submission: str, assignment: str, results: list[CheckResult], cells: list[dict],
                  output: str, show_hidden: bool = False, about: list[str] = (),
                  flag: Flag | None = None) -> str:
    """One self-contained page for a student (titled `submission`: their name where the layout gives it):
    what was graded (`about`), why it is flagged (flags.py: the evidence, the problems withheld), table,
    diagnoses, pictures, cell errors, printed output. Hidden problems and checks are left out (they are in
    results.json and grades.csv for instructors); the score says so."""
    shown = [r for r in results if show_hidden or not r.hidden]
    hidden = sum(r.max_score for r in results if r not in shown)
    skipped = [c for c in cells if c.get("type") == "skipped"]
    visible = {r.problem for r in shown}
    withheld = [p for p in flag.touched if p in visible] if flag else []
    evidence = (flag.evidence if show_hidden else flag.shown()) if flag else []
    return templates().get_template("feedback.html.j2").render(
        flag=flag if evidence or withheld else None, evidence=evidence, withheld=withheld,
        hidden_withheld=bool(flag) and len(withheld) < len(flag.touched),
        submission=submission, assignment=assignment, results=shown, output=output, about=list(about),
        cells=[c for c in cells if c not in skipped], skipped=skipped, hidden=hidden,
        score=sum(r.score for r in shown), max_score=sum(r.max_score for r in shown),
        report=checks_table_html(shown, group=True), standing=standing_html(None, bool(hidden)))


def standing_html(standing: Standing | None, hidden: bool) -> str:
    """The page's section on adjustments and late work (empty without them); the grade after them only
    where the page shows every check (else it would tell the hidden checks' score)."""
    return templates().get_template("standing.html.j2").render(
        lines=standing.lines() if standing else [], hidden=hidden, standing=standing)


def update_standing(page: Path, standing: Standing) -> None:
    """Puts a standing into a feedback page written before (written again only when it changes)."""
    from autograder.report.files import write_atomic

    try:
        text = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    found = _STANDING.search(text)
    if found is None:
        return
    new = text[:found.start()] + standing_html(standing, found[1] == "1") + text[found.end():]
    if new != text:
        write_atomic(page, new)
