"""What a batch says on the terminal while it grades and when it is done, at any size of class.

While grading: on a terminal, a progress bar with the count, the time spent and the time left (rich);
written to a file or a pipe, a line every STEP_SHARE of the class or every EVERY_SECONDS, whichever
comes first, then one at the end (a log has no carriage returns). Nothing with --quiet.

When done: a table of every submission for a class of up to TABLE_ROWS; beyond, a summary instead (the
time, wall and per submission, the scores, and the submissions to look at: those that lost points by
count, those not graded or out of time by name), the class's own files holding the rest.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from pathlib import Path

from autograder.report.plain import shown

TABLE_ROWS = 60  # a class this small gets a row per submission at the end
EVERY_SECONDS = 30.0  # a line at least this often in a log, while something is graded
STEP_SHARE = 0.1  # and one every tenth of the class
NAMED = 40  # ids named in a line of the summary; the rest are counted ("and 12 more")


def duration(seconds: float) -> str:
    """"42 s", "6 min 5 s", "2 h 3 min"."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class Progress:
    """Counts the submissions graded of `total`: a bar on a terminal, periodic lines otherwise."""

    def __init__(self, total: int, enabled: bool = True, stream=None, clock=time.monotonic):
        self.total, self.done, self.clock = total, 0, clock
        self.stream = stream or sys.stderr
        self.start = self.last = clock()
        self.shown = 0
        self.bar = None
        self.enabled = enabled and total > 0
        if self.enabled and _is_terminal(self.stream):
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as Bar

            # No refresh thread: the grader forks workers in some modes, and a fork copies no thread.
            self.bar = Bar(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                           TextColumn("spent,"), TimeRemainingColumn(), TextColumn("left"),
                           auto_refresh=False,
                           console=Console(file=self.stream), transient=False)
            self.task = self.bar.add_task("grading", total=total)
            self.bar.start()
        self.step = max(1, math.ceil(total * STEP_SHARE))

    def update(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done)
            self.bar.refresh()
            return
        now = self.clock()
        if self.done == self.total or self.done - self.shown >= self.step or now - self.last >= EVERY_SECONDS:
            self.line(now)

    def line(self, now: float) -> None:
        """"graded 120 of 1200 (10%) in 45 s, 0.38 s each; about 6 min 50 s left"."""
        spent = now - self.start
        each = spent / self.done if self.done else 0.0
        left = f"; about {duration(each * (self.total - self.done))} left" if self.done < self.total else ""
        print(f"autograder: graded {self.done} of {self.total} ({100 * self.done // self.total}%) in "
              f"{duration(spent)}, "
              f"{each:.2f} s each{left}", file=self.stream, flush=True)
        self.shown, self.last = self.done, now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_summary(graded, out: Path, wall: float | None = None) -> None:
    """The end of a batch on stdout: a table of every submission (TABLE_ROWS at most), else a summary."""
    if len(graded) <= TABLE_ROWS:
        _table(graded, out)
    else:
        print(summary(graded, out, wall))
    print(f"grades: {out / 'grades.csv'}" + (" (→ the grade with grading.toml applied, its score)" if any(
        g.standing is not None and g.standing.score != g.score for g in graded) else ""))
    if graded.report is not None:
        print(f"class report: {graded.report} (which students hit which cause: "
              f"{graded.report.parent / 'causes.csv'})")


def _named(ids: list[str]) -> str:
    more = f" and {len(ids) - NAMED} more" if len(ids) > NAMED else ""
    return ", ".join(shown(i) for i in ids[:NAMED]) + more


def summary(graded, out: Path, wall: float | None = None) -> str:
    """The summary of a large class: times, scores, and which submissions to look at."""
    now = [g for g in graded if not g.skipped]
    lines = [(f"{len(graded)} submission(s) in {shown(str(out))}: {len(now)} graded in this run, "
              f"{len(graded) - len(now)} already graded.")]
    if now:
        worker = sum(g.seconds for g in now)
        timing = f"wall {duration(wall)}, {wall / len(now):.2f} s per submission; " if wall else ""
        lines.append(f"Time: {timing}{worker / len(now):.2f} s per submission in its worker "
                     f"(the slowest {max(g.seconds for g in now):.1f} s).")
    scores = [g.standing.score if g.standing is not None else g.score for g in graded]
    top = graded[0].max_score if graded else 0
    counts = Counter("full" if s >= top else "zero" if s <= 0 else "partial" for s in scores)
    if graded:
        lines.append(f"Scores: mean {sum(scores) / len(scores):.1f} of {top:g}; {counts['full']} with full "
                     f"marks, {counts['partial']} with part of the points, {counts['zero']} with none.")
    unreadable = [u.split(" (", 1)[0] for u in graded.unreadable]
    timed_out = [g.submission for g in graded if g.timed_out]
    zero = [g.submission for g, s in zip(graded, scores, strict=True)
            if s <= 0 < top and g.submission not in unreadable]
    for what, ids in (("Could not be read, score 0", unreadable), ("Ran out of time", timed_out),
                      ("Scored 0", zero), ("NOT graded (the grader's fault; run again)", graded.not_graded)):
        if ids:
            lines.append(f"{what} ({len(ids)}): {_named(ids)}.")
    lines.append("Every submission's score is in grades.csv, and the causes of failure in report.html.")
    return "\n".join(lines)


def _table(graded, out: Path) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    title = f"Graded {len(graded)} submission(s); feedback under {out}/<id>/feedback.html"
    table = Table(title=Text(shown(title)))
    for column in ("submission", "score", "graded", "feedback"):
        table.add_column(column)
    for g in graded:
        time_ = ("already graded" if g.skipped else f"{g.seconds:.2f} s ({g.reason})" if g.reason
                 else f"{g.seconds:.2f} s")
        # Text, not markup: an id such as "[blink]" or "[link=mailto:...]" is shown as it is
        changed = g.standing is not None and g.standing.score != g.score
        after = f" → {g.standing.score:g}" if changed else ""
        table.add_row(Text(shown(g.submission)), f"{g.score:g}/{g.max_score:g}{after}", time_,
                      Text(shown(g.feedback)))
    Console(stderr=False).print(table)
