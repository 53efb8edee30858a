"""The command line: python -m autograder list [--json] | grade --assignment NAME --out DIR SUBMISSION..."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

# Modules a submission is likely to import: loaded once here so that each forked worker has them.
PRELOAD = ("numpy", "torch.nn", "torch.nn.functional", "torch.autograd.function", "torch.optim", "graphviz",
           "torchviz")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one paragraph and exit status 2, no usage dump
        fail(f"{message}. Run `python -m autograder {self.prog.split()[-1]} --help` for the usage.")


def fail(message: str) -> None:
    print("autograder: " + textwrap.fill(message, 100, subsequent_indent="  "), file=sys.stderr)
    sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="autograder", description="Grades custom torch.autograd.Function exercises.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    listing = commands.add_parser("list", help="the assignments and their problems")
    listing.add_argument("--json", action="store_true", help="print JSON: [{name, problems, max_score}, ...]")
    grading = commands.add_parser("grade", help="grade submissions and write results.json, feedback.html, grades.csv")
    grading.add_argument("--assignment", required=True, help="an assignment name from `list`")
    grading.add_argument("--out", required=True, type=Path, help="folder for the result files")
    grading.add_argument("submissions", nargs="+", type=Path, help=".ipynb or .py files, or folders of them")
    grading.add_argument("--force", action="store_true", help="grade again what is already graded")
    grading.add_argument("--jobs", type=int, default=None, help="workers in parallel (default: all cores)")
    grading.add_argument("--load-timeout", type=float, default=60.0, help="seconds to run a submission's cells")
    grading.add_argument("--problem-timeout", type=float, default=20.0, help="seconds to grade one problem")
    grading.add_argument("--seed", type=int, default=0, help="seed of the inputs (same seed, same results)")
    grading.add_argument("--quiet", action="store_true", help="no progress bar or summary table")
    return parser


def cmd_list(args) -> int:
    from autograder.assignments import ASSIGNMENTS

    if args.json:
        print(json.dumps([a.to_dict() for a in ASSIGNMENTS.values()], indent=2))
        return 0
    for a in ASSIGNMENTS.values():
        print(f"{a.name}  (lesson {a.lesson}, {a.max_score:g} points)")
        for p in a.problems:
            print(f"  {p.name:<16} {p.max_score:>4g}  {p.summary}")
    return 0


def warm_up(assignment, seed: int) -> None:
    """Imports and first-call work done once here rather than in every worker."""
    import importlib

    import torch

    from autograder.judge import reference_data

    torch.set_num_threads(1)  # one thread per worker; also keeps fork() safe
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    torch.autograd.grad(x * x, x, torch.ones(2, dtype=torch.float64), create_graph=True)
    torch.autograd.gradgradcheck(torch.exp, (x,), fast_mode=True)
    for problem in assignment.problems:
        reference_data(problem, seed)


def cmd_grade(args) -> int:
    from autograder.assignments import find_assignment
    from autograder.batch import UsageError, grade
    from autograder.loader import NoSubmissions
    from autograder.sandbox import Limits

    try:
        assignment = find_assignment(args.assignment)
    except LookupError as error:
        fail(str(error))
    warm_up(assignment, args.seed)
    limits = Limits(load_seconds=args.load_timeout, problem_seconds=args.problem_timeout)
    try:
        graded = grade(assignment, args.submissions, args.out, args.force, args.jobs, limits, args.seed,
                       progress=not args.quiet)
    except (UsageError, NoSubmissions) as error:
        fail(str(error))
    if not args.quiet:
        print_summary(graded, args.out)
    return 0


def print_summary(graded, out: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Graded {len(graded)} submission(s); feedback under {out}/<id>/feedback.html")
    for column in ("submission", "score", "grading time", "feedback"):
        table.add_column(column)
    for g in graded:
        time = "already graded" if g.skipped else f"{g.seconds:.2f} s"
        table.add_row(g.submission, f"{g.score:g}/{g.max_score:g}", time, str(g.feedback))
    Console(stderr=False).print(table)
    print(f"grades: {out / 'grades.csv'}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return {"list": cmd_list, "grade": cmd_grade}[args.command](args)
