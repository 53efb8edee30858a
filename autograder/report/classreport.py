"""report.html: what the class got wrong, for the instructor, written with every batch from the very
results.json files the batch wrote (or kept), so that its counts are theirs.

One self-contained page (styles, pictures and its small script inline, links only to the students' own
feedback pages beside it): a table of the students (score, each problem's, links to their pages) that
sorts by any column with a click or the keyboard, the distribution of the total and of each problem's
score, how many passed each check, the causes found ranked by how many students hit them (each with
links to those students' pages), the pairs of near-identical submissions (similar.py) as a hint of
where to look, the submissions that could not be read or ran out of time, and those where a file was
left aside (a student's other notebooks) or a cell was skipped (it ended the worker or ran out of time).

A cause is a failed check's first sentence with the case and the numbers taken out ("The gradient with
respect to x has the wrong sign."), so that students with the same mistake on different entries are
counted together; the judge's sentences say where and how, so the causes are as specific as they are.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape

from autograder.judge.checks import max_score
from autograder.report.pages import templates
from autograder.results import read_tests, subtotals

NOT_LOADED = ("unreadable", "not graded")
_NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def cause_of(output: str) -> str:
    """The cause of a failed test: its first sentence, without the case it was found on and with the
    numbers replaced by #."""
    text = output.split("\n\n", 1)[0].strip()
    if text.startswith("For inputs ") and "): " in text:
        text = text.split("): ", 1)[1]
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return _NUMBER.sub("#", sentence)[:300]


@dataclass(frozen=True)
class Column:
    """A column of the students' table: its header, and its value for one student's row of
    summarize()["students"] (None where it has none). A column none of whose values is set is not shown."""

    header: str
    value: Callable[[dict], object]
    numeric: bool = True


def _extra(row: dict) -> dict:
    return row["extra"]


def _name(row: dict) -> str | None:
    """Who handed it in, where the layout says and it is not the id already."""
    identity = _extra(row).get("identity")
    name = str(identity.get("name") or "") if isinstance(identity, dict) else ""
    return name if name and name != row["id"] else None


PROBLEMS = "each problem's score"  # where COLUMNS takes a column per problem


def _standing(row: dict, key: str):
    """A value of the row's standing (grading.toml applied; rows carry one only when some grade changed),
    None (a blank) where it is 0."""
    standing = row.get("standing")
    return (standing[key] or None) if standing else None


# The students' table. A column that only some classes have (late work, adjustments) is one line here,
# shown only where a result holds its value.
COLUMNS = (
    Column("student", lambda row: row["id"], numeric=False),
    Column("name", _name, numeric=False),
    Column("score", lambda row: row["score"]),
    PROBLEMS,
    Column("adjusted", lambda row: _standing(row, "adjustment")),  # grading.toml's [[adjustment]]s
    Column("late penalty", lambda row: _standing(row, "penalty")),  # grading.toml's [late] policy
    Column("grade", lambda row: row["standing"]["score"] if row.get("standing") else None),  # after both
    Column("status", lambda row: None if row["status"] == "graded" else row["status"], numeric=False),
    Column("flagged", lambda row: _flagged(row), numeric=False),  # it reaches into the grader (flags.py)
)


def _flagged(row: dict) -> str | None:
    if not isinstance(_extra(row).get("flagged"), dict):
        return None
    return (_standing(row, "flagged") or "withheld") if row.get("standing") else "withheld"


def flagged_entry(sid: str, flagged: dict) -> dict:
    """A flagged submission as the report lists it: where it reaches (flags.Evidence, in the page's words),
    the problems it may have touched, the points withheld."""
    from autograder.flags import Evidence

    evidence = []
    for e in flagged.get("evidence") or []:
        if isinstance(e, dict):
            evidence.append(Evidence(str(e.get("where", "")), int(e.get("line") or 0), str(e.get("what", "")),
                                     str(e.get("text", "")), str(e.get("how", ""))).describe())
    withheld = flagged.get("withheld") if isinstance(flagged.get("withheld"), dict) else {}
    return {"id": sid, "evidence": evidence[:8], "more": max(0, len(evidence) - 8),
            "touched": [str(p) for p in flagged.get("touched") or []],
            "withheld": sum(v for v in withheld.values() if isinstance(v, (int, float)))}


def student_table(problems: list[str], students: list[dict]) -> tuple[list[Column], list[list]]:
    """The columns shown (COLUMNS, a column per problem at PROBLEMS) and each student's values, in the
    batch's order."""
    columns = [c for column in COLUMNS for c in ([Column(p, lambda row, p=p: row["problems"][p])
                                                  for p in problems] if column == PROBLEMS else [column])]
    columns = [c for c in columns if any(c.value(row) is not None for row in students)]
    return columns, [[c.value(row) for c in columns] for row in students]


@dataclass
class Cause:
    problem: str  # "" for a cause of the whole submission (WHOLE)
    text: str
    checks: list[str] = field(default_factory=list)
    students: list[str] = field(default_factory=list)
    hidden: bool = False
    problems: list[str] = field(default_factory=list)  # the problems it stopped, for a WHOLE cause


# A check that waits for another (checks.Check.unmet) says so; it is a consequence, never a cause.
PREREQUISITE = "Not graded yet:"
WHOLE = "several problems"  # the problem column of a cause that stopped several problems of a submission


def _submission_causes(tests, problems: list[str]) -> dict[tuple[str, str], tuple[list[str], list[str]]]:
    """One submission's causes: (problem, text) -> (checks, problems). A text the submission hit on several
    problems (a crash, cells that did not run: the grader names the problem in it, "Grading KillHead
    stopped: the worker was killed by SIGSEGV") is one cause of the submission, keyed ("", text)."""
    by_text: dict[str, dict[str, list[str]]] = {}
    for test in tests:
        if test.passed or cause_of(test.output).startswith(PREREQUISITE):
            continue
        text = cause_of(test.output.replace(f" {test.problem} ", " ", 1) if test.output.startswith(
            f"Grading {test.problem} ") else test.output)
        by_text.setdefault(text, {}).setdefault(test.problem, []).append(test.check)
    causes = {}
    for text, where in by_text.items():
        if len(where) > 1:
            checks = list(dict.fromkeys(c for cs in where.values() for c in cs))
            causes[("", text)] = (checks, [p for p in problems if p in where] or list(where))
        else:
            (problem, checks), = where.items()
            causes[(problem, text)] = (checks, [problem])
    return causes


def summarize(problems: list[str], rows: list[tuple[str, dict]]) -> dict:
    """Every count of the report, from (id, results.json) rows: plain data (also embedded in the page)."""
    totals, per_problem = [], {p: Counter() for p in problems}
    checks: dict[str, dict] = {}
    causes: dict[tuple[str, str], Cause] = {}
    not_loaded, timed_out, not_isolated, chosen, students, flagged = [], [], [], [], [], []
    waiting = []  # submissions with a check not graded because one it needs failed
    for sid, result in rows:
        extra = result.get("extra_data") if isinstance(result.get("extra_data"), dict) else {}
        if extra.get("isolation", "container") != "container":
            not_isolated.append(sid)
        status = extra.get("status", "graded")
        if isinstance(extra.get("flagged"), dict):
            flagged.append(flagged_entry(sid, extra["flagged"]))
        if extra.get("not_graded") or extra.get("skipped_cells"):
            chosen.append({"id": sid, "file": str(extra.get("file", "")),
                           "not_graded": [str(n) for n in extra.get("not_graded") or []],
                           "skipped": [str(n) for n in extra.get("skipped_cells") or []]})
        totals.append(result["score"])
        tests = read_tests(result)
        scores = subtotals(tests, problems)
        hidden = set()
        for test in tests:
            entry = checks.setdefault(test.name, {"problem": test.problem, "check": test.check, "passed": 0,
                                                  "failed": 0, "hidden": test.hidden})
            entry["passed" if test.passed else "failed"] += 1
            if test.hidden:
                hidden.add((test.problem, test.check))
        if any(not t.passed and cause_of(t.output).startswith(PREREQUISITE) for t in tests):
            waiting.append(sid)
        mine = [] if status in NOT_LOADED else _submission_causes(tests, problems)
        for key in mine:
            (problem, text), (names, where) = key, mine[key]
            cause = causes.setdefault(key, Cause(problem, text, hidden=all(
                (p, c) in hidden for p in where for c in names)))
            cause.checks.extend(c for c in names if c not in cause.checks)
            cause.problems.extend(p for p in where if p not in cause.problems)
            cause.students.append(sid)
        for p in problems:
            per_problem[p][scores[p]] += 1
        students.append({"id": sid, "score": result["score"], "status": status, "extra": extra,
                         "problems": {p: scores[p] for p in problems}, "causes": list(mine)})
        if status in NOT_LOADED:
            not_loaded.append({"id": sid, "status": status, "why": str(extra.get("error", ""))})
        elif status == "timed out":
            timed_out.append({"id": sid, "what": list(extra.get("timed_out", []))})
    ranked = sorted(causes.values(), key=lambda c: (-len(c.students), problems.index(c.problem)
                                                     if c.problem in problems else -1, c.text))
    number = {(c.problem, c.text): i for i, c in enumerate(ranked)}
    for row in students:
        row["causes"] = sorted(number[key] for key in row["causes"])
    return {"submissions": len(rows), "totals": totals,
            "problems": {p: {f"{k:g}": v for k, v in sorted(per_problem[p].items())} for p in problems},
            "checks": checks, "not_loaded": not_loaded, "timed_out": timed_out, "not_isolated": not_isolated,
            "chosen": chosen, "students": students, "flagged": flagged, "waiting": waiting,
            "causes": [{"problem": c.problem or WHOLE, "cause": c.text, "checks": c.checks,
                        "students": c.students, "hidden": c.hidden, "problems": c.problems} for c in ranked]}


def causes_csv(data: dict) -> str:
    """causes.csv, beside report.html: a row per student and cause they hit (rank, problem, cause, checks),
    in the page's order of causes, for a spreadsheet or a mail merge to the students concerned."""
    import csv
    import io

    from autograder.report.csvsafe import cell

    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["student", "rank", "problem", "cause", "checks", "students with this cause"])
    for rank, c in enumerate(data["causes"], 1):
        for sid in c["students"]:
            writer.writerow([cell(sid), rank, cell(", ".join(c["problems"]) if c["problem"] == WHOLE
                                                   else c["problem"]),
                             cell(c["cause"]), cell(", ".join(c["checks"])), len(c["students"])])
    return text.getvalue()


def bars_svg(counts: dict[str, int], label: str, width: int = 420) -> str:
    """A bar chart of how many submissions got each score (a plain SVG: no script, no external file)."""
    if not counts:
        return ""
    keys = list(counts)
    top = max(counts.values()) or 1
    bar = max(8, min(48, (width - 40) // max(1, len(keys))))
    height, base = 150, 120
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{max(240, 40 + bar * len(keys))}" '
              f'height="{height}" '
              f'font-family="sans-serif" font-size="10" role="img" aria-label="{escape(label)}">')]
    for i, key in enumerate(keys):
        h = round(100 * counts[key] / top)
        x = 30 + i * bar
        parts.append(f'<rect x="{x}" y="{base - h}" width="{bar - 3}" height="{h}" fill="#4a78b5">'
                     f'<title>{escape(str(key))} points: {counts[key]}</title></rect>')
        parts.append(f'<text x="{x + (bar - 3) / 2}" y="{base - h - 3}" text-anchor="middle">'
                     f'{counts[key]}</text>')
        parts.append(f'<text x="{x + (bar - 3) / 2}" y="{base + 12}" text-anchor="middle">'
                     f'{escape(str(key))}</text>')
    parts.append(f'<text x="30" y="{base + 26}" fill="#555">{escape(label)}</text></svg>')
    return "".join(parts)


def _histogram(totals: list[float], max_score: float) -> dict[str, int]:
    """Totals in ten bins of the maximum (a few distinct scores: each its own bar)."""
    distinct = sorted(set(totals))
    if len(distinct) <= 12 or not max_score:
        return {f"{v:g}": totals.count(v) for v in distinct}
    bins = Counter(min(9, int(10 * t / max_score)) for t in totals)
    return {f"{max_score * b / 10:g}–{max_score * (b + 1) / 10:g}": bins.get(b, 0) for b in range(10)}


def class_report(assignment, rows: list[tuple[str, dict]], standings: dict | None = None,
                 codes: dict[str, list[str]] | None = None, starter: list[str] = (),
                 starter_name: str = "") -> str:
    """report.html alone (class_files)."""
    return class_files(assignment, rows, standings, codes, starter, starter_name)["report.html"]


def class_files(assignment, rows: list[tuple[str, dict]], standings: dict | None = None,
                codes: dict[str, list[str]] | None = None, starter: list[str] = (),
                starter_name: str = "") -> dict[str, str]:
    """report.html and causes.csv, for the assignment and its (id, results.json) rows, their standings
    (grading.toml applied, term/standing.py: data["standings"] by id); with codes (id -> the code cells
    graded), the near-identical pairs among them, the cells of the notebooks every student could start
    from (starter, named starter_name) left out."""
    from autograder.report import similar

    problems = [p.name for p in assignment.problems]
    data = summarize(problems, rows)
    data["standings"] = {sid: s.to_dict() for sid, s in (standings or {}).items()}
    if any(s.adjustments or s.penalty or s.flagged for s in (standings or {}).values()):
        for row in data["students"]:
            row["standing"] = data["standings"].get(row["id"])
    columns, table = student_table(problems, data["students"])
    failed = ""
    try:
        pairs = similar.near_identical(codes, starter) if codes else []
    except Exception as error:  # noqa: BLE001 - code the comparison cannot read costs its section only
        pairs, failed = [], type(error).__name__
    data["similar"] = [dataclasses.asdict(p) for p in pairs]
    total = max_score(assignment)
    maxima = {p.name: max_score(p) for p in assignment.problems}
    totals = data["totals"]
    charts = {p: bars_svg(counts, f"submissions per score in {p} (out of {maxima[p]:g})")
              for p, counts in data["problems"].items()}
    shown = {**data, "students": [{k: v for k, v in row.items() if k not in ("extra", "standing")}
                                  for row in data["students"]]}
    embedded = (json.dumps(shown, sort_keys=True).replace("<", "\\u003c").replace(">", "\\u003e")
                .replace("&", "\\u0026"))
    # what the table's filters read: each row's status, the problems it lost points on, its causes' ranks
    filters = [{"status": row["status"], "causes": " ".join(map(str, row["causes"])),
                "lost": "|".join(p for p in problems if row["problems"][p] < maxima[p])}
               for row in data["students"]]
    common = similar.common_count(len(codes or {}))
    page = templates().get_template("class_report.html.j2").render(
        assignment=assignment.name, max_score=total, data=data, maxima=maxima,
        mean=sum(totals) / len(totals) if totals else 0.0,
        full=sum(1 for t in totals if t >= total),
        total_chart=bars_svg(_histogram(totals, total),
                             f"submissions per total score (out of {total:g})"),
        charts=charts, embedded=embedded, columns=columns, table=table, filters=filters,
        statuses=sorted({f["status"] for f in filters}), problems=problems, folded=FOLDED, WHOLE=WHOLE,
        compared=0 if failed else len(codes or {}), failed=failed, pairs=pairs, groups=similar.groups(pairs),
        # code in more than `common` submissions is left out: shared by at least its whole part plus one
        starter=starter_name, similar=similar, common=math.floor(common),
        changed=[sid for sid, s in (standings or {}).items() if s.adjustments or s.penalty or s.needs_time])
    return {"report.html": page, "causes.csv": causes_csv(data)}


FOLDED = 20  # a list of more students than this (a cause's) is folded, and so is a table of more rows
