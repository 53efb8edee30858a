"""How long report.html takes for a class of N (default 300), without grading it:

    python -m tools.bench.class_report [N] [--out DIR]

The class is the benchmark's (students.py: right, wrong and raising answers drawn from the variants),
each notebook being the lesson's starter cells followed by the student's answer cells, plus ten copies of
one student that differ only in comments and names. Each student's results.json is what the grader
writes for such a submission: every check of custom-functions, passed where the variant is right. The
report is then built from these rows and cells as a batch builds it (batch._class_report), and timed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from autograder.batch import starter_notebooks
from autograder.course import find_assignment
from autograder.intake.loader import read_cells
from tools.bench.students import VARIANTS, answer_source, design_class

COPIES = 10
OWN = [  # one student's own way of answering (right, and unlike the variants)
    """def zero_columns(t, n):
    kept = t.clone()
    kept[:, :n] = 0.0
    return kept


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.columns = n
        return zero_columns(input, n)

    @staticmethod
    def backward(ctx, grad_output):
        return zero_columns(grad_output, ctx.columns), None""",
    """class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        positive = input > 0
        ctx.save_for_backward(positive)
        return input * positive

    @staticmethod
    def backward(ctx, grad_output):
        (positive,) = ctx.saved_tensors
        return grad_output * positive""",
    """class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y.view_as(y).clone()

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.saved_tensors[0].mul(grad_output)""",
    """class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight)
        ctx.with_bias = bias is not None
        return torch.addmm(bias, input, weight.t()) if bias is not None else input.mm(weight.t())

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        return (grad_output.mm(weight), grad_output.t().mm(input),
                grad_output.sum(0) if ctx.with_bias else None)""",
]


def results_of(assignment, passes: dict[str, bool], sid: str) -> dict:
    from autograder.judge.checks import checks_of, points_of
    from autograder.results import name_of

    tests = [{"name": name_of(p.name, c), "score": points_of(p, c) if passes[p.name] else 0.0,
              "max_score": points_of(p, c), "status": "passed" if passes[p.name] else "failed",
              "output": "" if passes[p.name] else f"The gradient of {p.name} has the wrong sign at 0.5."}
             for p in assignment.problems for c in checks_of(p)]
    return {"score": sum(t["score"] for t in tests), "tests": tests,
            "extra_data": {"submission": sid, "file": f"{sid}.ipynb", "status": "graded"}}


def disguised(cell: str, n: int) -> str:
    """The same code, other comments and a renamed variable."""
    return f"# my own work ({n})\n" + cell.replace("grad_output", f"g{n}")


def synthetic_class(n: int, seed: int = 1):
    """(assignment, [(id, results.json)], {id: code cells}, starter cells) for n students and COPIES."""
    assignment = find_assignment("custom-functions")
    starter = [cell for path in starter_notebooks(assignment) for cell in read_cells(path)]
    rows, codes = [], {}
    for s in design_class(n, seed):
        codes[s.id] = [*starter, *(answer_source(p, s.answers[p]) for p in VARIANTS)]
        rows.append((s.id, results_of(assignment, {p: s.expected(p) for p in VARIANTS}, s.id)))
    # one student's own answers, copied ten times with other comments and names
    for i in range(COPIES):
        sid = f"copy{i + 1:02d}"
        codes[sid] = [*starter, *(disguised(cell, i) for cell in OWN)]
        rows.append((sid, results_of(assignment, dict.fromkeys(VARIANTS, True), sid)))
    return assignment, rows, codes, starter


def main(argv: list[str] | None = None) -> int:
    from autograder.report import similar
    from autograder.report.classreport import class_report

    parser = argparse.ArgumentParser(prog="python -m tools.bench.class_report")
    parser.add_argument("n", type=int, nargs="?", default=300)
    parser.add_argument("--out", type=Path, help="also write report.html into this folder")
    args = parser.parse_args(argv)
    assignment, rows, codes, starter = synthetic_class(args.n)
    start = time.perf_counter()
    pairs = similar.near_identical(codes, starter)
    compared = time.perf_counter() - start
    start = time.perf_counter()
    page = class_report(assignment, rows, codes=codes, starter=starter, starter_name="the lesson's notebooks")
    whole = time.perf_counter() - start
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "report.html").write_text(page, encoding="utf-8")
    print(f"{len(rows)} submissions ({args.n} + {COPIES} copies): report.html built in {whole:.2f} s "
          f"({len(page) / 1e6:.2f} MB), of which comparing the code {compared:.2f} s; "
          f"{len(pairs)} near-identical pairs in {len(similar.groups(pairs))} group(s).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
