"""python -m tools.bench: the run (see tools/bench/__init__.py)."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import tools.bench
from tools.bench import ASSIGNMENT
from tools.bench.costs import fixed_cost, submission_cpu
from tools.bench.nbgrader_course import ensure_bench_venv, nbgrader_verdicts, run_nbgrader, write_course
from tools.bench.ours import our_verdicts, run_ours
from tools.bench.report import Costs, load_average, log, report, timed, warm_caches
from tools.bench.students import design_class


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench",
                                     description=tools.bench.__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="notebooks in the class (default 60)")
    parser.add_argument("--keep", type=Path, help="make the class and both tools' outputs here and keep them")
    parser.add_argument("--seed", type=int, default=0, help="seed of the class's design")
    parser.add_argument("--jobs", type=int, default=None,
                        help="our grader's workers (default: the grader's own, twice the cores)")
    parser.add_argument("--nbgrader-sample", type=int, default=None,
                        help="notebooks nbgrader grades, the first of the class (default: all up to 120, "
                             "else 60): with --n 1200, our throughput against nbgrader's time per notebook")
    parser.add_argument("--overhead", action="store_true",
                        help="only measure where our grader's time goes (no nbgrader): startup, forks, "
                             "cells, probes, judging, feedback")
    parser.add_argument("--gradescope-python", default=None, metavar="PYTHON",
                        help="with --overhead: the Python (with the course's packages) that run_autograder "
                             "uses, as setup.sh installs it where every user may read it (default: .venv's)")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    sample = args.nbgrader_sample or (args.n if args.n <= 120 else 60)
    if not 1 <= sample <= args.n:
        parser.error("--nbgrader-sample must be between 1 and --n")
    if args.overhead:
        from tools.bench_overhead import main as overhead

        return overhead(args.gradescope_python)

    from autograder.course import find_assignment
    from autograder.sandbox import default_workers

    assignment = find_assignment(ASSIGNMENT)
    bench_python = ensure_bench_venv()
    if args.keep:
        if args.keep.exists() and any(args.keep.iterdir()):
            parser.error(f"--keep {args.keep} is not empty")
        work = args.keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="autograder-bench-"))
    try:
        students = design_class(args.n, args.seed)
        course = work / "course"
        ours = write_course(course, assignment, students, 0, bench_python, students[:sample])
        counts = {k: sum(s.kind == k for s in students) for k in ("right", "wrong", "raising")}
        log(f"class: {args.n} notebooks for {ASSIGNMENT} ({counts['right']} right, {counts['wrong']} wrong, "
            f"{counts['raising']} raising; {sum(bool(s.slow) for s in students)} of them slow, sleeping "
            f"{sum(s.slow for s in students):.1f} s in all) in {work}")
        warm_caches(bench_python)
        if sample < args.n:
            log(f"nbgrader grades the first {sample} notebooks only; the ratio is per submission")
        log(f"load average before: {load_average()}")

        out1, out2 = work / "autograder-out", work / "autograder-out-2"
        log("running python -m autograder grade --force --quiet (before nbgrader) ...")
        first = timed(run_ours, ours, out1, args.jobs, students)
        log(f"load average: {load_average()}")
        log("running nbgrader autograde (one kernel per notebook, one notebook at a time) ...")
        theirs = timed(run_nbgrader, course, students[:sample])
        log(f"load average: {load_average()}")
        log("running python -m autograder grade --force --quiet (after nbgrader) ...")
        second = timed(run_ours, ours, out2, args.jobs, students)
        log(f"load average after: {load_average()}")
        log("measuring our fixed cost and the CPU of one right and one wrong submission ...")
        costs = Costs(*fixed_cost(), submission_cpu(assignment))

        report(students, [p.name for p in assignment.problems], theirs, (first, second),
               args.jobs or default_workers(), nbgrader_verdicts(course, bench_python),
               our_verdicts(out1, students), our_verdicts(out2, students), work if args.keep else None,
               sample, costs)
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
