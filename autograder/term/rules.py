"""Reads `grading.toml`, the instructor's file beside the results (docs/instructors.md has an example):

    [late]                    due (a TOML date-time, with an offset or in `timezone`), per ("day" or
                              "hour": each one started after the due time costs `penalty`), penalty and
                              cap (points, or "10%" of the assignment's points), grace_minutes
    [late.extensions]         student = a due date-time of their own, or a number of days added
    [late.submitted]          student = when they handed in, where the files do not say
    [[adjustment]]            student, problem (a problem's name or "total"), points, reason
    [[accept]]                student, reason: a flagged submission (it reaches into the grader) reviewed
                              and accepted; the points it was measured to earn count (standing.py)

Every mistake is a RulesError: one paragraph naming the file and the line, and what to write instead.
Whether a student or a problem exists is asked later, against the graded class (standing.py), which
names the line through `Rules.line`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

FILE = "grading.toml"
UNITS = {"day": dt.timedelta(days=1), "hour": dt.timedelta(hours=1)}
LATE_KEYS = {"due", "timezone", "per", "penalty", "cap", "grace_minutes", "extensions", "submitted"}
ADJUSTMENT_KEYS = {"student", "problem", "points", "reason"}
ACCEPT_KEYS = {"student", "reason"}
LISTS = ("adjustment", "accept")  # the [[...]] entries
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")
_KEY = re.compile(r"""^\s*("([^"]*)"|'([^']*)'|[A-Za-z0-9_.@+-]+)\s*=""")
# The times every zone can show: the calendar's first and last day in some zone are outside it
# (OverflowError), and nothing is handed in there.
_EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC) + dt.timedelta(days=2)
_LATEST = dt.datetime.max.replace(tzinfo=dt.UTC) - dt.timedelta(days=2)


def on_calendar(value: dt.datetime) -> bool:
    """An aware time that every time zone can show (see _EARLIEST)."""
    return _EARLIEST <= value <= _LATEST


def _number(value) -> bool:
    """A finite int or float (TOML's nan and inf are no points, minutes or days)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class RulesError(ValueError):
    """A mistake in grading.toml: one paragraph naming the line."""


@dataclass(frozen=True)
class Amount:
    """Points, or a percentage of the assignment's points."""

    value: float
    percent: bool

    def points(self, max_score: float) -> float:
        return self.value * max_score / 100 if self.percent else self.value

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else f"{self.value:g} point(s)"


@dataclass
class Late:
    due: dt.datetime  # aware
    zone: dt.tzinfo
    per: str = "day"
    penalty: Amount = Amount(0, False)
    cap: Amount | None = None
    grace: dt.timedelta = dt.timedelta(0)
    extensions: dict[str, dt.datetime | float] = field(default_factory=dict)  # student key -> due or days
    submitted: dict[str, dt.datetime] = field(default_factory=dict)  # student key -> when

    def describe(self) -> str:
        cap = f", at most {self.cap}" if self.cap else ""
        grace = f", {self.grace.total_seconds() / 60:g} minutes' grace" if self.grace else ""
        return f"due {self.due:%Y-%m-%d %H:%M %Z}, {self.penalty} per {self.per} started{cap}{grace}"


@dataclass
class Adjustment:
    line: int
    student: str
    problem: str  # "" for the total
    points: float
    reason: str


@dataclass
class Accept:
    line: int
    student: str
    reason: str


@dataclass
class Rules:
    path: Path
    text: str = ""  # as read: grades.csv.sha256 records what was applied
    late: Late | None = None
    adjustments: list[Adjustment] = field(default_factory=list)
    accepts: list[Accept] = field(default_factory=list)
    lines: dict[tuple, int] = field(default_factory=dict)  # (table, key) or ("adjustment", n) -> line

    def where(self, table: str, key: str | int | tuple | None = None) -> str:
        """"grading.toml, line 12": the line of key in table ((n, "problem"): the n-th adjustment's)."""
        line = (self.lines.get((table, *key)) or self.lines.get((table, key[0])) if isinstance(key, tuple)
                else self.lines.get((table, key))) or self.lines.get((table, None))
        return f"{self.path}, line {line}" if line else str(self.path)

    def error(self, table: str, key, message: str) -> RulesError:
        return RulesError(f"{self.where(table, key)}: {message} Fix {self.path.name} (docs/instructors.md, "
                          f"\"Adjustments and late work\", shows each entry) and run the command again.")


def read_rules(folder: Path) -> Rules | None:
    """The rules in folder/grading.toml, or None when there is no such file."""
    path = folder / FILE
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise RulesError(f"Cannot read {path} ({getattr(error, 'strerror', None) or error}): save it as "
                         f"UTF-8 text and run the command again.") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RulesError(f"{path} is not valid TOML: {error}. Fix that line (docs/instructors.md, "
                         f"\"Adjustments and late work\", shows each entry) and run the command "
                         f"again.") from None
    rules = Rules(path, text, lines=_line_numbers(text))
    for key in data:
        if key not in ("late", "limits", *LISTS):  # [limits]: autograder/settings.py reads it
            raise rules.error(key, None, f"{key!r} is not something {FILE} holds: it has a [late] table, "
                                         f"[[adjustment]] and [[accept]] entries, and a [limits] table.")
    if "late" in data:
        rules.late = _late(rules, data["late"])
    adjustments = data.get("adjustment", [])
    if not isinstance(adjustments, list):
        raise rules.error("adjustment", None, "each adjustment is a table of its own, headed [[adjustment]] "
                                              "(two brackets).")
    rules.adjustments = [_adjustment(rules, i, a) for i, a in enumerate(adjustments)]
    accepts = data.get("accept", [])
    if not isinstance(accepts, list):
        raise rules.error("accept", None, "each acceptance is a table of its own, headed [[accept]] (two "
                                          "brackets).")
    rules.accepts = [_accept(rules, i, a) for i, a in enumerate(accepts)]
    return rules


def _line_numbers(text: str) -> dict[tuple, int]:
    """Where each table, [[adjustment]] and key starts (tomllib keeps no lines; its own errors name
    theirs)."""
    lines: dict[tuple, int] = {}
    table, counts = "", dict.fromkeys(LISTS, 0)
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            table = header[2].replace('"', "").replace(" ", "")
            if header[1] == "[[" and table in LISTS:
                counts[table] += 1
                table = (table, counts[table] - 1)
                lines[table] = number
            else:
                lines.setdefault((table, None), number)
            continue
        key = _KEY.match(line)
        if key:
            name = key[2] if key[2] is not None else key[3] if key[3] is not None else key[1]
            lines.setdefault((table, name) if isinstance(table, str) else (*table, name), number)
    return lines


def _amount(rules: Rules, key: str, value, table: str = "late") -> Amount:
    if not (_number(value) or isinstance(value, str)):
        raise rules.error(table, key, f"{key} is a number of points (5) or a percentage of the assignment's "
                                      f"points (\"10%\"), not {value!r}.")
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*", value)
        if not match:
            raise rules.error(table, key, f"{key} = {value!r}: write a percentage as \"10%\", or points as a "
                                          f"plain number (5).")
        return Amount(float(match[1]), True)
    if value < 0:
        raise rules.error(table, key, f"{key} cannot be negative ({value}).")
    return Amount(float(value), False)


def _zone(rules: Rules, name) -> dt.tzinfo:
    try:
        return zoneinfo.ZoneInfo(str(name))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise rules.error("late", "timezone", f"timezone = {name!r} is not a time zone the grader knows: use "
                                              f"an IANA name such as \"Europe/Zurich\", "
                                              f"\"America/New_York\" or \"UTC\".") from None


def _time(rules: Rules, table: str, key: str, value, zone: dt.tzinfo | None) -> dt.datetime:
    """A TOML date-time made aware: its own offset, else the [late] timezone (a date alone: its end)."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time(23, 59, 59))
    if not isinstance(value, dt.datetime):
        raise rules.error(table, key, f"{key} = {value!r} is not a date-time: write it unquoted, as "
                                      f"2026-03-01T23:59:00 (in the [late] timezone) or "
                                      f"2026-03-01T23:59:00-05:00.")
    if value.tzinfo is None:
        if zone is None:
            raise rules.error(table, key, f"{key} = {value.isoformat()} says no time zone: add "
                                          f"timezone = \"Europe/Zurich\" (your zone) to [late], or an "
                                          f"offset (2026-03-01T23:59:00+01:00).")
        value = value.replace(tzinfo=zone)
    if not on_calendar(value):
        raise rules.error(table, key, f"{key} = {value.isoformat()} is at the very edge of the calendar: "
                                      f"write the date-time you mean (2026-03-01T23:59:00).")
    return value


def _late(rules: Rules, late) -> Late:
    if not isinstance(late, dict):
        raise rules.error("late", None, "[late] is a table: due, timezone, per, penalty, cap, grace_minutes.")
    for key in late:
        if key not in LATE_KEYS:
            raise rules.error("late", key, f"[late] has no setting {key!r}; it takes "
                                           f"{', '.join(sorted(LATE_KEYS))}.")
    if "due" not in late:
        raise rules.error("late", None, "[late] needs due = the due date-time (2026-03-01T23:59:00).")
    zone = _zone(rules, late["timezone"]) if "timezone" in late else None
    due = _time(rules, "late", "due", late["due"], zone)
    zone = zone or due.tzinfo  # the other times of the file: in the due time's zone unless they say
    per = late.get("per", "day")
    if per not in UNITS:
        raise rules.error("late", "per", f"per = {per!r}: write \"day\" or \"hour\" (a penalty for each one "
                                         f"started after the due time).")
    grace = late.get("grace_minutes", 0)
    if not _number(grace) or grace < 0:
        raise rules.error("late", "grace_minutes", f"grace_minutes is a number of minutes, 0 or more, not "
                                                   f"{grace!r}.")
    result = Late(due, zone, per, _amount(rules, "penalty", late.get("penalty", 0)),
                  _amount(rules, "cap", late["cap"]) if "cap" in late else None, dt.timedelta(minutes=grace))
    for table, target in (("extensions", result.extensions), ("submitted", result.submitted)):
        entries = late.get(table, {})
        if not isinstance(entries, dict):
            raise rules.error("late", table, f"{table} is a table: [late.{table}], then student = ... lines.")
        for student, value in entries.items():
            if table == "extensions" and isinstance(value, (int, float)) and not isinstance(value, bool):
                if not (_number(value) and 0 <= value < 3660):
                    raise rules.error(f"late.{table}", student, f"{student} = {value:g}: an extension is a "
                                                                f"number of days, 0 or more (and fewer than "
                                                                f"ten years').")
                target[student] = float(value)
            else:
                target[student] = _time(rules, f"late.{table}", student, value, zone)
    return result


def _adjustment(rules: Rules, index: int, entry) -> Adjustment:
    where = ("adjustment", index)
    line = rules.lines.get(where, 0)
    if not isinstance(entry, dict):
        raise rules.error(*where, "an [[adjustment]] is a table of student, problem, points, reason.")
    unknown = set(entry) - ADJUSTMENT_KEYS
    if unknown:
        raise rules.error(*where, f"an [[adjustment]] has no {', '.join(sorted(unknown))}; it takes student, "
                                  f"problem (a problem's name or \"total\"), points and reason.")
    missing = [k for k in ("student", "points", "reason") if k not in entry]
    if missing:
        raise rules.error(*where, f"this [[adjustment]] lacks {', '.join(missing)}: every adjustment says "
                                  f"whose grade, how many points (negative to take some away) and why "
                                  f"(the student reads the reason).")
    points = entry["points"]
    if not _number(points):
        raise rules.error(*where, f"points = {points!r}: write a number, such as 2 or -1.5.")
    problem = str(entry.get("problem", "total")).strip()
    return Adjustment(line, str(entry["student"]).strip(), "" if problem.casefold() == "total" else problem,
                      float(points), str(entry["reason"]).strip())


def _accept(rules: Rules, index: int, entry) -> Accept:
    where = ("accept", index)
    if not isinstance(entry, dict):
        raise rules.error(*where, "an [[accept]] is a table of student and reason.")
    unknown = set(entry) - ACCEPT_KEYS
    if unknown:
        raise rules.error(*where, f"an [[accept]] has no {', '.join(sorted(unknown))}; it takes student and "
                                  f"reason.")
    missing = [k for k in ("student", "reason") if not str(entry.get(k, "")).strip()]
    if missing:
        raise rules.error(*where, f"this [[accept]] lacks {', '.join(missing)}: it says whose flagged "
                                  f"submission you reviewed and accept, and why (the student reads it).")
    return Accept(rules.lines.get(where, 0), str(entry["student"]).strip(), str(entry["reason"]).strip())
