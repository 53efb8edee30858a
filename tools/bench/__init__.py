"""Benchmark: this autograder against `nbgrader autograde` on one generated class, on this machine.

    python -m tools.bench [--n 60] [--keep DIR] [--seed 0] [--jobs N] [--nbgrader-sample M]   (make bench)

1. Creates .venv-bench (nbgrader, torch, ipykernel, pinned below) if it is missing: nbgrader is a
   benchmark dependency only, never a runtime one.
2. Generates a class for the custom-functions assignment: an nbgrader course (a source notebook whose
   answer cells carry nbgrader metadata and whose test cells hold hidden tests, one per problem, worth
   that problem's points), `nbgrader generate_assignment`, and N submitted notebooks made from the
   release version: mostly right, some wrong in different ways, some raising, a few slow. Each
   submission is designed to pass or fail each problem, which gives a third opinion on every verdict.
3. Times `python -m autograder grade --force --quiet`, then `nbgrader autograde` (one kernel per notebook,
   the bench venv's Python), then our grader again, on the same notebooks: our time is the mean of the
   runs before and after nbgrader's, so a change of load during the run falls on both tools alike.
   Wall and CPU time (of all the processes each tool started) are both reported.
4. Maps both to pass/fail per (student, problem): ours passes a problem when all its checks pass;
   nbgrader's when its hidden test cell scores full points. The hidden tests ask the same questions as
   our checks (forward equals the reference in shape, dtype float64 and value; backward returns one
   value per input, shaped like it or None; the Jacobian from backward equals the reference's;
   gradcheck; gradgradcheck for Exp), on the same inputs and with the same tolerances.
5. Prints wall times, per-submission times, the ratio and the agreement, our fixed cost and the CPU of
   one right and one wrong submission in the sandbox (costs.py), and ends with the line
   `speedup vs nbgrader: <ratio>x, verdicts identical: yes|no`. Past 120 notebooks (`--n 1200`) nbgrader
   grades only the first 60 (`--nbgrader-sample`): the ratio is then our time per submission against its
   time per notebook, where our fixed cost no longer counts.

Timings are wall clock on a shared machine: the load average is printed before, between and after.
`--overhead` measures only where our grader's time goes (tools/bench_overhead.py), without nbgrader.

The parts: students.py designs the class (each answer a file of variants/), nbgrader_course.py makes
and grades the nbgrader course, ours.py runs this autograder, report.py times and prints.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "custom-functions"
