"""A student's standing: the results as graded (results.json, never changed), then the instructor's
adjustments and the late penalty of grading.toml applied on top. grade and export compute it the same
way, so grades.csv, the pages, report.html and the gradebook agree.

Adjusted problem scores stay within 0 and the problem's points, the total within 0 and the
assignment's; an adjustment cut by those bounds shows what it asked and what it gave. The score is
then graded + adjustments - late penalty, exactly.

The time a submission was handed in comes from [late.submitted] first, else from what the layout kept
(Gradescope's `created_at`, nbgrader's timestamp). Canvas's file names carry only a LATE flag: a late
submission with no time costs nothing and says so, rather than a guessed penalty.
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo
from dataclasses import asdict, dataclass, field

from autograder.results import read_tests, subtotals
from autograder.term.rules import UNITS, Accept, Adjustment, Late, Rules, on_calendar

# the identity fields (intake/layouts.py) a student may be named by in grading.toml, after the id
NAMED_BY = ("name", "email", "sid", "canvas_user")
UNREADABLE = "which the grader cannot read as a time"  # a layout's time: needs one from the instructor
CANVAS_LATE = ("Canvas marks this submission late but not when it was handed in, so no penalty is computed "
               "(the instructor can give the time)")


@dataclass
class Applied:
    line: int
    problem: str  # "" for the total
    points: float  # asked
    applied: float  # given, within the bounds
    reason: str


@dataclass
class Standing:
    graded: float  # the autograder's score (results.json)
    max_score: float
    problems: dict[str, float]  # each problem's score, adjusted
    adjustments: list[Applied] = field(default_factory=list)
    late: str = ""  # what is known of the time ("" without a late policy)
    penalty: float = 0.0  # points the late policy took
    score: float = 0.0  # graded + adjustment - penalty
    needs_time: bool = False  # marked late (Canvas), or a time unread: no penalty until one is given
    flagged: str = ""  # it reaches into the grader (flags.py): "withheld", or "accepted" by [[accept]]

    @property
    def adjustment(self) -> float:
        return sum(a.applied for a in self.adjustments)

    def to_dict(self) -> dict:
        return {**asdict(self), "adjustment": self.adjustment}

    def lines(self) -> list[str]:
        """What the student's page says: each adjustment with its reason, and the late penalty."""
        out = []
        for a in self.adjustments:
            cut = f" ({a.points:+g} asked; the bounds allow {a.applied:+g})" if a.applied != a.points else ""
            out.append(f"{a.problem or 'Total'}: {a.applied:+g} point(s){cut}: {a.reason}")
        if self.late:
            out.append(f"Late work: {self.late}" + (f": -{self.penalty:g} point(s)." if self.penalty
                                                    else "."))
        return out


def _identity(result: dict) -> dict:
    extra = result.get("extra_data") or {}
    identity = extra.get("identity") if isinstance(extra, dict) else None
    return identity if isinstance(identity, dict) else {}


def _names(sid: str, identity: dict) -> set[str]:
    people = [identity] + [p for p in identity.get("submitters") or [] if isinstance(p, dict)]
    names = {sid.casefold()}
    for person in people:
        names |= {str(person[k]).strip().casefold() for k in NAMED_BY if person.get(k)}
    return names


def resolve(rules: Rules, rows: list[tuple[str, dict]], student: str, table: str, key) -> str:
    """The submission id a grading.toml entry names: the id itself, else a name, email, student id or
    Canvas user id that one submission carries; else a RulesError naming the line. An id is no stronger
    than the rest: Gradescope's ids are the names students chose, and one may choose another's email."""
    ids = [sid for sid, _ in rows]
    hits = [sid for sid, result in rows if student.strip().casefold() in _names(sid, _identity(result))]
    if len(hits) == 1:
        return hits[0]
    shown = ", ".join(ids[:8]) + (" ..." if len(ids) > 8 else "")
    if hits:
        raise rules.error(table, key, f"{student!r} names {len(hits)} submissions ({', '.join(hits)}) as an "
                                      f"id, a name, an email, a student id or a Canvas user id: name the one "
                                      f"you mean by what only it carries (its email or student id, else its "
                                      f"id, the first column of grades.csv).")
    raise rules.error(table, key, f"no graded submission is {student!r}. Name a student by the id in the "
                                  f"first column of grades.csv, or by a name, email, student id or Canvas "
                                  f"user id the submission carries; the ids are {shown}.")


def submission_time(text) -> dt.datetime | None:
    """A layout's time (Gradescope's "2026-03-02 08:00:00.123 -0500", nbgrader's "... UTC"), aware, or
    None when it cannot be read as one (or lies where no time zone can show it: the metadata is the
    students' data)."""
    text = str(text).strip()
    head, _, zone_name = text.rpartition(" ")
    for candidate, zone in ((text, None), (head, zone_name)):
        try:
            value = dt.datetime.fromisoformat(candidate)
        except ValueError:
            continue
        try:
            value = value if value.tzinfo is not None else \
                value.replace(tzinfo=zoneinfo.ZoneInfo(zone)) if zone else None
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            return None
        return value if value is not None and on_calendar(value) else None
    return None


def by_submission(rules: Rules, rows, table: str, entries: dict) -> dict:
    """A [late.extensions] or [late.submitted] table keyed by the submission each line names."""
    return {resolve(rules, rows, student, f"late.{table}", student): value
            for student, value in entries.items()}


def late_penalty(late: Late, when: dt.datetime | None, extension, identity: dict,
                 max_score: float) -> tuple[str, float]:
    """(what the page says of the time, the points the rule takes): when, the time grading.toml gives
    (else the identity's), extension, the student's due time or days added (or None)."""
    source = "given in grading.toml" if when else ""
    if when is None and identity.get("submitted"):
        when = submission_time(identity["submitted"])
        if when is None:
            unread = f"handed in at {identity['submitted']!r}, {UNREADABLE}"
            return unread + ", so no penalty is computed", 0.0
    due = late.due if extension is None else extension if isinstance(extension, dt.datetime) \
        else late.due + dt.timedelta(days=extension)
    extended = " (extended)" if due != late.due else ""
    if when is None:
        if identity.get("late"):
            return CANVAS_LATE, 0.0
        if "late" in identity:
            return "on time (by Canvas)", 0.0
        return "the time this was handed in is not known, so no penalty is computed", 0.0
    local = when.astimezone(late.zone)
    handed = f"handed in {local:%Y-%m-%d %H:%M %Z}" + (f" ({source})" if source else "")
    overdue = when - due
    if overdue <= dt.timedelta(0):
        return f"{handed}, on time (due {due.astimezone(late.zone):%Y-%m-%d %H:%M %Z}{extended})", 0.0
    if overdue <= late.grace:
        return f"{handed}, within the grace period after the due time{extended}", 0.0
    units = math.ceil(overdue / UNITS[late.per])
    penalty = units * late.penalty.points(max_score)
    if late.cap is not None:
        penalty = min(penalty, late.cap.points(max_score))
    cap = f", at most {late.cap}" if late.cap else ""
    return (f"{handed}, {_duration(overdue)} after the due time{extended}: {units} {late.per}(s) started, "
            f"{late.penalty} each{cap}"), penalty


def _duration(delta: dt.timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    return (f"{days} d " if days else "") + f"{rest // 60} h {rest % 60:02d} min"


def per_problem(tests: list, problems: list[str], what: str = "score") -> dict[str, float]:
    """Each problem's score in a results.json's tests (results.read_tests), as graded (what="max_score":
    its points)."""
    return {p: float(v) for p, v in subtotals(tests, problems, what).items()}


def _withheld(result: dict) -> dict[str, float] | None:
    """The points a flagged result's measurements earned on the problems it may have touched (flags.py),
    withheld from its score; None when it is not flagged."""
    extra = result.get("extra_data")
    flagged = extra.get("flagged") if isinstance(extra, dict) else None
    if not isinstance(flagged, dict):
        return None
    withheld = flagged.get("withheld") if isinstance(flagged.get("withheld"), dict) else {}
    return {str(p): float(v) for p, v in withheld.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def _accept(standing: Standing, accept: Accept, withheld: dict[str, float], maxima: dict[str, float]) -> None:
    """A flagged submission the instructor reviewed and accepts: the points withheld count again."""
    standing.flagged = "accepted"
    for problem, points in withheld.items():
        if problem not in standing.problems:
            continue
        before = standing.problems[problem]
        standing.problems[problem] = min(max(before + points, 0.0), maxima[problem])
        given = round(standing.problems[problem] - before, 9)
        reason = f"your instructor reviewed the flag and accepts it: {accept.reason}"
        standing.adjustments.append(Applied(accept.line, problem, points, given, reason))


def standings(rules: Rules | None, rows: list[tuple[str, dict]], problems: list[str],
              max_score: float) -> dict[str, Standing]:
    """Every submission's standing (rows: (id, results.json)); a RulesError names the first line of
    grading.toml that names no submission or no problem."""
    out, tests = {}, {sid: read_tests(result) for sid, result in rows}
    for sid, result in rows:
        out[sid] = Standing(float(result["score"]), max_score, per_problem(tests[sid], problems),
                            score=float(result["score"]),
                            flagged="withheld" if _withheld(result) is not None else "")
    if rules is None:
        return out
    accepted = {resolve(rules, rows, a.student, "accept", (i, "student")): a
                for i, a in enumerate(rules.accepts)}
    adjustments: dict[str, list[Adjustment]] = {}
    for i, a in enumerate(rules.adjustments):
        if a.problem and a.problem not in problems:
            known = ", ".join(problems)
            raise rules.error("adjustment", (i, "problem"),
                              f"{a.problem!r} is not a problem of this assignment: write one of {known}, or "
                              f"\"total\".")
        adjustments.setdefault(resolve(rules, rows, a.student, "adjustment", (i, "student")), []).append(a)
    late = rules.late
    if late is not None:
        extensions = by_submission(rules, rows, "extensions", late.extensions)
        submitted = by_submission(rules, rows, "submitted", late.submitted)
    for sid, result in rows:
        standing, maxima = out[sid], per_problem(tests[sid], problems, "max_score")
        if sid in accepted and standing.flagged:
            _accept(standing, accepted[sid], _withheld(result) or {}, maxima)
        for a in adjustments.get(sid, []):
            if a.problem:
                before = standing.problems[a.problem]
                standing.problems[a.problem] = min(max(before + a.points, 0.0), maxima[a.problem])
                given = standing.problems[a.problem] - before
            else:
                total = sum(standing.problems.values()) + sum(x.applied for x in standing.adjustments
                                                              if not x.problem)
                given = min(max(total + a.points, 0.0), max_score) - total
            standing.adjustments.append(Applied(a.line, a.problem, a.points, round(given, 9), a.reason))
        adjusted = standing.graded + standing.adjustment
        if late is not None:
            standing.late, penalty = late_penalty(late, submitted.get(sid), extensions.get(sid),
                                                  _identity(result), max_score)
            standing.needs_time = standing.late == CANVAS_LATE or UNREADABLE in standing.late
            standing.penalty = min(penalty, adjusted)
        standing.score = round(adjusted - standing.penalty, 9)
    return out


def describe_rules(rules: Rules, standings: dict[str, Standing]) -> str:
    """One line for the instructor: what grading.toml changed."""
    adjusted = sum(1 for s in standings.values() if s.adjustments and s.flagged != "accepted")
    parts = [f"{rules.path}: {len(rules.adjustments)} adjustment(s) on {adjusted} submission(s)"]
    if rules.accepts:
        accepted = sum(1 for s in standings.values() if s.flagged == "accepted")
        parts.append(f"{len(rules.accepts)} [[accept]] entr{'y' if len(rules.accepts) == 1 else 'ies'}: "
                     f"{accepted} flagged submission(s) accepted")
    if rules.late is not None:
        penalised = sum(1 for s in standings.values() if s.penalty)
        flagged = [sid for sid, s in standings.items() if s.needs_time]
        parts.append(f"late policy ({rules.late.describe()}): {penalised} submission(s) lose points"
                     + (f"; {len(flagged)} marked late by Canvas with no time, or with a time the grader "
                        f"cannot read, so no penalty until you give their times under [late.submitted]: "
                        f"{', '.join(flagged)}" if flagged else ""))
    return "; ".join(parts) + "."
