"""The commands that hand a graded folder back: `export` (a gradebook import: Canvas, Moodle, a plain
CSV; report/export.py) and `release` (the students' pages; report/release.py). Each returns what it tells
the instructor, or raises ExportError with one paragraph (cli.py prints it, exit status 2)."""

from __future__ import annotations

import math
from pathlib import Path

from autograder.report.roster import ExportError

FORMATS = ("canvas", "csv", "moodle")


def add_export_arguments(parser):
    """The export command's options (cli.py adds --policy, shared with release)."""
    parser.add_argument("--graded", required=True, type=Path, metavar="DIR",
                        help="a folder written by `grade`")
    written = parser.add_mutually_exclusive_group(required=True)
    written.add_argument("--canvas", type=Path, metavar="FILE.csv", help="Canvas's gradebook import to write")
    written.add_argument("--csv", type=Path, metavar="FILE.csv",
                         help="a plain CSV to write: id, name, email, each problem, adjustments, "
                              "late_penalty, total")
    written.add_argument("--moodle", type=Path, metavar="FILE.csv",
                         help="Moodle's grade import to write: ID number, Email address, Full name, grade, "
                              "Feedback")
    parser.add_argument("--roster", type=Path, metavar="ROSTER.csv",
                        help="the class list (e.g. Canvas's gradebook export) to match submissions to "
                             "students")
    parser.add_argument("--column", help="Canvas's gradebook column (default: the assignment's name, a "
                                         "new column); Canvas's 'Name (id)' header updates that assignment")
    parser.add_argument("--id-column", help="the roster column that submission file names carry "
                                            "(default: any identifier column: ID, SIS User ID, "
                                            "SIS Login ID, email, ...)")
    parser.add_argument("--out-of", type=float, metavar="POINTS",
                        help="scale scores to this many points (default: the autograder's points)")
    return parser


def add_release_arguments(parser):
    from autograder.report.release import add_arguments

    return add_arguments(parser)


def export(args) -> str:
    from autograder.report.export import describe, export

    if args.out_of is not None and not (math.isfinite(args.out_of) and args.out_of > 0):
        raise ExportError(f"--out-of must be a number of points greater than 0, not {args.out_of:g}")
    if args.roster is not None and not args.roster.is_file():
        raise ExportError(f"--roster {args.roster} is not a file: give the CSV of the class list.")
    fmt = next(f for f in FORMATS if getattr(args, f) is not None)
    out = getattr(args, fmt)
    if out.is_dir():
        raise ExportError(f"--{fmt} names a folder ({out}): give the CSV file to write.")
    return describe(export(args.graded, out, fmt, args.roster, args.column, args.id_column, args.out_of,
                           args.policy), out)


def release(args) -> str:
    from autograder.report.release import describe, release

    released = release(args.graded, args.to, args.format, args.name_by, args.policy)
    return describe(released, args.to, args.format)


COMMANDS = {"export": export, "release": release}
