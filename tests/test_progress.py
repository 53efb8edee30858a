"""What a batch says on the terminal (term/progress.py): periodic lines in a log, a summary instead of a
row per submission for a large class; tested with a clock of its own (no timing)."""

from __future__ import annotations

import io
from pathlib import Path

from autograder.report.files import Graded
from autograder.term.progress import EVERY_SECONDS, TABLE_ROWS, Progress, duration, print_summary, summary


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_in_a_log_a_line_every_tenth_of_the_class_or_every_few_seconds_then_one_at_the_end():
    clock, log = Clock(), io.StringIO()
    progress = Progress(1200, stream=log, clock=clock)
    assert progress.bar is None  # not a terminal: no carriage returns
    for i in range(1200):
        clock.now += 0.025
        progress.update()
        if i == 10:
            clock.now += EVERY_SECONDS  # a slow submission: a line at once, whatever the count
    lines = log.getvalue().splitlines()
    assert len(lines) == 11
    assert lines[0].startswith("autograder: graded 12 of 1200 (1%) in 30 s, 2.5")
    assert lines[0].endswith("s each; about 50 min 0 s left")  # 1188 more at 30.3 / 12 s each
    assert lines[1].startswith("autograder: graded 132 of 1200 (11%)")  # then every 120 (a tenth)
    assert lines[-1] == "autograder: graded 1200 of 1200 (100%) in 1 min 0 s, 0.05 s each"


def test_quiet_says_nothing():
    log = io.StringIO()
    progress = Progress(5, enabled=False, stream=log)
    for _ in range(5):
        progress.update()
    progress.close()
    assert log.getvalue() == ""


def test_durations_read_as_a_person_says_them():
    assert [duration(s) for s in (4.4, 65, 3725)] == ["4 s", "1 min 5 s", "1 h 2 min"]


class Batch(list):
    def __init__(self, graded, unreadable=(), not_graded=()):
        super().__init__(graded)
        self.unreadable, self.not_graded, self.report = list(unreadable), list(not_graded), None


def big_class(n: int) -> Batch:
    graded = []
    for i in range(n):
        sid = f"s{i:04d}"
        score = 0 if i % 10 in (3, 4) else 50 if i % 2 else 31
        graded.append(Graded(sid, score, 50, seconds=0.25, skipped=i < 100, reason="" if i < 100 else "new",
                             timed_out=["Exp"] if i % 10 == 4 else []))
    return Batch(graded, unreadable=[f"s{i:04d} (class/s{i:04d}.ipynb: not JSON)" for i in range(3, n, 10)])


def test_a_large_class_gets_a_summary_naming_what_to_look_at(capsys):
    batch = big_class(1200)
    print_summary(batch, Path("graded"), wall=300.0)
    out = capsys.readouterr().out
    assert len(out.splitlines()) < 12, out  # not a row per submission
    assert "1200 submission(s) in graded: 1100 graded in this run, 100 already graded." in out
    assert "Time: wall 5 min 0 s, 0.27 s per submission; 0.25 s per submission in its worker" in out
    assert "Could not be read, score 0 (120): s0003, s0013," in out and "and 80 more." in out
    assert "Ran out of time (120): s0004, s0014" in out
    assert "Scored 0 (120): s0004," in out  # out of time and 0; the unreadable are listed once, above
    assert "mean 32.4 of 50; 480 with full marks, 480 with part of the points, 240 with none." in out
    assert "grades: graded/grades.csv" in out


def test_a_small_class_keeps_its_row_per_submission(capsys):
    batch = big_class(TABLE_ROWS)
    print_summary(batch, Path("graded"), wall=10.0)
    out = capsys.readouterr().out
    assert all(f"s{i:04d}" in out for i in range(TABLE_ROWS))
    assert "Time: wall" not in out
    assert summary(batch, Path("graded"), 10.0).count("\n") < 10
