"""Timing the two tools, and the report the benchmark prints."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tools.bench import ROOT


def log(message: str = "") -> None:
    print(message, flush=True)


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} cores)"


def warm_caches(bench_python: Path) -> None:
    """Both tools' torch read once from disk, so neither run pays for the other's cold page cache."""
    for python in (ROOT / ".venv" / "bin" / "python", bench_python):
        subprocess.run([str(python), "-c", "import torch"], check=True)


@dataclass
class Run:
    """One tool's run over the class: wall and CPU seconds, and the seconds between finished submissions."""

    wall: float
    cpu: float
    per: list[float]


def timed(run, *args) -> Run:
    """run's (wall, per-submission) times, with the CPU seconds (user + system) of the processes it
    started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, per = run(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Run(wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), per)


def intervals(start: float, files: list[Path]) -> list[float]:
    """Seconds between one submission's last file and the next one's (the first from the start): the
    time each submission took for nbgrader, which grades one at a time; for our parallel workers, how
    often a submission was finished."""
    stamps = sorted(f.stat().st_mtime for f in files)
    return [b - a for a, b in zip([start, *stamps[:-1]], stamps)]


def spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    q = statistics.quantiles(values, n=10, method="inclusive") if len(values) > 1 else values * 9
    return f"median {statistics.median(values):.2f} s, p90 {q[8]:.2f} s, max {max(values):.2f} s"


Verdicts = dict[tuple[str, str], bool]  # (student, problem) -> passed


@dataclass
class Costs:
    """Our fixed cost (a `grade` run of one empty submission: wall, CPU seconds) and the CPU seconds of one
    submission in the sandbox, {"right": ..., "wrong": ...} (tools/bench/costs.py)."""

    wall: float
    cpu: float
    per: dict[str, float]


def report(students, problems: list[str], nbgrader: Run, ours: tuple[Run, Run], workers: int,
           theirs: Verdicts, mine: Verdicts, again: Verdicts, kept: Path | None, sample: int | None = None,
           costs: Costs | None = None) -> None:
    """The times of both tools, and where their verdicts (and the class's design) differ; the last line
    is `speedup vs nbgrader: <ratio>x, verdicts identical: yes|no`. sample: how many of the students
    (the first) nbgrader graded (all by default); the ratio is then per submission."""
    n = len(students)
    m = sample or n
    (first, second) = ours
    our_wall, our_cpu = (first.wall + second.wall) / 2, (first.cpu + second.cpu) / 2
    pairs = [(s.id, p) for s in students for p in problems]
    compared = [(s.id, p) for s in students[:m] for p in problems]
    by_id = {s.id: s for s in students}
    differ = [(sid, p) for sid, p in compared if mine.get((sid, p)) != theirs.get((sid, p))]
    unexpected = [(sid, p) for sid, p in pairs if mine.get((sid, p)) != by_id[sid].expected(p)]
    unstable = [pair for pair in pairs if mine.get(pair) != again.get(pair)]
    identical = not differ and not unstable and len(theirs) == len(compared)
    ratio = (nbgrader.wall / m) / (our_wall / n)

    log("")
    log(f"nbgrader autograde: {nbgrader.wall:8.2f} s wall, {nbgrader.cpu:7.2f} s CPU for {m} notebooks = "
        f"{nbgrader.wall / m:.3f} s per submission; one submission after another: {spread(nbgrader.per)}")
    log(f"autograder grade:   {our_wall:8.2f} s wall, {our_cpu:7.2f} s CPU for {n} notebooks = "
        f"{our_wall / n:.3f} s per submission (mean of the runs before and after nbgrader: "
        f"{first.wall:.2f} s and {second.wall:.2f} s); {workers} workers, a submission "
        f"finished every: {spread(first.per + second.per)}")
    log(f"ratio: {ratio:.1f}x in wall time, {(nbgrader.cpu / m) / (our_cpu / n):.1f}x in CPU time"
        + (f" (per submission: nbgrader graded {m} of the {n})" if m < n else ""))
    if costs is not None:
        log(f"our fixed cost: {costs.wall:.2f} s wall, {costs.cpu:.2f} s CPU (a whole `grade` run of one "
            f"empty submission); CPU per submission in the sandbox: right {costs.per['right'] * 1e3:.0f} ms, "
            f"wrong {costs.per['wrong'] * 1e3:.0f} ms (examples/ alice.py and bob.py, medians); without the "
            f"fixed cost, {(our_wall - costs.wall) / n:.3f} s wall per submission here: "
            f"{(nbgrader.wall / m) / max((our_wall - costs.wall) / n, 1e-9):.0f}x nbgrader's "
            f"{nbgrader.wall / m:.2f} s per notebook")
    passed = sum(mine.get(p, False) for p in pairs)
    log(f"verdicts: {len(pairs)} (student, problem) pairs, {passed} passed by the autograder, "
        f"{sum(theirs.get(p, False) for p in compared)} of {len(compared)} by nbgrader; the tools differ on "
        f"{len(differ)}; the autograder differs from the class's design on {len(unexpected)}")
    for sid, p in differ:
        log(f"  differ: {sid} {p}: autograder {'pass' if mine.get((sid, p)) else 'fail'}, nbgrader "
            f"{'pass' if theirs.get((sid, p)) else 'fail' if (sid, p) in theirs else 'missing'} "
            f"({by_id[sid].describe()})")
    for sid, p in unstable:
        log(f"  unstable: {sid} {p}: the autograder's two runs disagree")
    for sid, p in unexpected:
        log(f"  unexpected: {sid} {p}: autograder {'pass' if mine.get((sid, p)) else 'fail'}, designed to "
            f"{'pass' if by_id[sid].expected(p) else 'fail'} ({by_id[sid].describe()})")
    if kept:
        log(f"kept: {kept} (course/ is the nbgrader course; autograder-out/ and autograder-out-2/ our "
            f"results)")
    log(f"speedup vs nbgrader: {ratio:.1f}x, verdicts identical: "
        f"{'yes' if identical else 'no'}")
