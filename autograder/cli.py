"""The command line:

    python -m autograder list [--json]
    python -m autograder grade --assignment NAME --out DIR SUBMISSION... [--canvas FILE.csv [--roster R.csv]]
    python -m autograder gradescope --assignment NAME --out FILE.zip     (a Gradescope autograder archive)
    python -m autograder export --graded DIR (--canvas | --csv | --moodle) FILE.csv [--roster R.csv] [...]
    python -m autograder release --graded DIR --to RELEASE_DIR [--format folders|zip|canvas] [--name-by ...]
    python -m autograder apparmor-profile   (where AppArmor refuses the grader user namespaces: Ubuntu 24.04)

Every command but export and release takes `--extra FILE.py` (repeatable): an instructor's private file
hiding or adding problems, checks or assignments (docs/authoring.md, docs/instructors.md). What it or an
installed package touches is validated first (validate.py): a problem the grader could not grade with is a
usage error naming it and why. Ctrl-C stops a batch with one line saying how to resume.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import textwrap
import time
from pathlib import Path

from autograder import config, selection, settings
from autograder.report.plain import shown


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one paragraph and exit status 2, no usage dump
        if self.prog == "autograder" and message.startswith("the following arguments are required"):
            message = f"give a command: {', '.join(COMMANDS)}"
        # prog is "autograder" or "autograder grade": the command line as the instructor types it
        fail(f"{message}. Run `python -m {self.prog} --help` for the usage.")


def paragraph(message: str) -> str:
    """A message wrapped at 100 columns, never inside a path or a word; what it quotes of the class (file
    names, zip entries) with its control characters escaped (plain.shown)."""
    return textwrap.fill(shown(message), 100, subsequent_indent="  ", break_on_hyphens=False,
                         break_long_words=False)


def fail(message: str) -> None:
    print("autograder: " + paragraph(message), file=sys.stderr)
    sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="autograder", description="Grades custom torch.autograd.Function exercises.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser,
                                     metavar="{" + ",".join(COMMANDS) + "}")
    listing = commands.add_parser("list", help="the assignments and their problems")
    listing.add_argument("--json", action="store_true", help="print JSON: [{name, problems, max_score}, ...]")
    _extra_option(listing)
    grading = commands.add_parser("grade",
                                  help="grade submissions and write results.json, feedback.html, grades.csv")
    grading.add_argument("--assignment", required=True, help="an assignment name from `list`")
    grading.add_argument("--out", required=True, type=Path, help="folder for the result files")
    grading.add_argument("submissions", nargs="+", type=Path, help=".ipynb or .py files, or folders of them")
    grading.add_argument("--force", action="store_true", help="grade again what is already graded")
    grading.add_argument("--replace", action="store_true",
                         help="replace results already in --out even when this run scores fewer points "
                              "(an --extra file left out, a problem removed, a lower maximum): without it, "
                              "such a run stops before writing anything")
    settings.add_options(grading)  # --load-timeout, --problem-timeout, --memory, --tmp-size, --jobs
    grading.add_argument("--seed", type=int, default=config.SEED,
                         help=f"seed of the inputs, 0 to {config.MAX_SEED} "
                              f"(same seed, same results)")
    grading.add_argument("--quiet", action="store_true", help="no progress bar or summary table")
    grading.add_argument("--no-isolation", action="store_true",
                         help="grade even where the machine cannot make the workers' container: student code "
                              "then runs under your own account (it can read what you can); the terminal, "
                              "report.html and every results.json say so")
    grading.add_argument("--canvas", type=Path, metavar="FILE.csv",
                         help="also write the grades as a Canvas gradebook import (see the export command)")
    grading.add_argument("--roster", type=Path, metavar="ROSTER.csv",
                         help="with --canvas: the class list (e.g. Canvas's gradebook export) "
                              "to match students")
    _policy_option(grading)
    _extra_option(grading)
    selection.add_options(grading)  # --only, --shard

    gs = commands.add_parser("gradescope",
                             help="build a Gradescope autograder archive (.zip) for an assignment")
    gs.add_argument("--assignment", required=True, help="an assignment name from `list`")
    gs.add_argument("--out", required=True, type=Path, metavar="FILE.zip", help="the archive to write")
    gs.add_argument("--visibility", default=config.VISIBILITY, choices=config.VISIBILITIES,
                    help=f"when students see the tests that are not hidden (default: {config.VISIBILITY})")
    gs.add_argument("--hidden-visibility", default=config.HIDDEN_VISIBILITY, choices=config.VISIBILITIES,
                    help=f"when students see hidden problems and checks "
                         f"(default: {config.HIDDEN_VISIBILITY}, i.e. "
                         f"never; after_published shows them once you publish the grades)")
    gs.add_argument("--output-format", default=config.OUTPUT_FORMAT, choices=config.OUTPUT_FORMATS,
                    help="how explanations are shown: html or md (with pictures as PNG), text (no pictures)")
    settings.add_options(gs, TIMEOUTS, in_file=False)
    gs.add_argument("--seed", type=int, default=config.SEED, help="seed of the inputs")
    _extra_option(gs, "also bundled into the archive, where students cannot read it")

    from autograder.handback import add_export_arguments, add_release_arguments

    _policy_option(add_export_arguments(commands.add_parser(
        "export", help="write graded results (grading.toml applied) as Canvas's or Moodle's gradebook "
                       "import, or a plain CSV")))
    _policy_option(add_release_arguments(commands.add_parser(
        "release", help="put each student's feedback page where an LMS or a mail merge takes it")))
    commands.add_parser("apparmor-profile", help="print the AppArmor profile that lets this Python make user "
                                                 "namespaces where AppArmor restricts them (Ubuntu 24.04)")
    return parser


def _policy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default=config.POLICY, choices=config.POLICIES,
                        help=f"when a student has several submissions: the best score counts, or the latest "
                             f"submission's (default: {config.POLICY})")


def _extra_option(parser: argparse.ArgumentParser, note: str = "") -> None:
    parser.add_argument("--extra", action="append", type=Path, default=[], metavar="FILE.py",
                        help="an instructor's private file that hides or adds problems"
                             + (f"; {note}" if note else ""))


def load_extras(paths: list[Path]):
    """The assignments this command knows (a Registry): built-in, installed, then the --extra files'."""
    from autograder.course.assignments.registry import load

    registry = load()
    for path in paths:
        if path.suffix != ".py":
            fail(f"--extra takes a Python file (.py), not {path}")
        try:
            registry.load_extra(path)
        except LookupError as error:
            fail(str(error))
    for broken in registry.broken:
        print("autograder: warning: " + paragraph(broken), file=sys.stderr)
    return registry


def validated(assignment, origins: dict, seed: int = config.SEED, outside_only: bool = False):
    """The assignment, once validate.py finds every problem gradable (outside_only: every problem an extra
    file or an installed package added or changed); else a usage error naming why."""
    from autograder.judge.validate import InvalidAssignment, validate

    try:
        validate(assignment, seed, origins, outside_only)
    except InvalidAssignment as error:
        fail(f"{error} Nothing was done: fix it and run the command again.")
    return assignment


def lookup(registry, name: str):
    """The assignment called name, not yet validated; else a usage error listing the assignments."""
    try:
        return registry.find_assignment(name)
    except LookupError as error:
        fail(str(error))


def find(registry, name: str, seed: int = config.SEED):
    return validated(lookup(registry, name), registry.origins, seed)


def check_seed(seed: int) -> None:
    if not 0 <= seed <= config.MAX_SEED:
        fail(f"--seed must be a whole number from 0 to {config.MAX_SEED}, not {seed}")


def check_settings(args, folder: Path | None = None, keys: tuple[str, ...] = tuple(settings.BY_KEY)) -> dict:
    """The settings' values (settings.py: the command line, then folder's grading.toml, then the defaults);
    one out of bounds is a usage error."""
    try:
        values = settings.resolve(args, folder, keys)
        kept = [k for k in settings.read_table(folder) if getattr(args, k, None) is None] if folder else []
    except settings.SettingError as error:
        fail(f"{error} Nothing was graded.")
    if kept:  # limits that are not the defaults, said where the instructor sees them
        said = ", ".join(f"{k} = {settings.BY_KEY[k].describe(values[k])}" for k in kept)
        print("autograder: " + paragraph(f"{folder / 'grading.toml'} [limits]: {said}."), file=sys.stderr)
    return values


def check_paths(args) -> None:
    """--out must be a folder of its own: not a file, not in a folder of submissions, not a submission."""
    out = args.out.resolve()
    if args.out.exists() and not args.out.is_dir():
        fail(f"--out must be a folder, and {args.out} is a file. Choose a folder with --out.")
    for path in args.submissions:
        if not path.exists() and not path.is_symlink():
            fail(f"{path} does not exist. Name notebooks (.ipynb), Python files (.py), zips or folders "
                 f"that hold them.")
        given = path.resolve()
        if path.is_dir() and (out == given or given in out.parents):
            fail(f"--out {args.out} is inside the submissions folder {path}: its results would be read as "
                 f"submissions next time. Choose a folder outside it.")
        if out in given.parents and path.is_dir():
            fail(f"The submissions folder {path} is inside --out {args.out}, where the grader writes a "
                 f"folder per student. Keep submissions elsewhere.")
    for option, path in (("--roster", args.roster),):
        if path is not None and not path.is_file():
            fail(f"{option} {path} is not a file: give the CSV of the class list.")
    if args.canvas is not None and args.canvas.is_dir():
        fail(f"--canvas names a folder ({args.canvas}): give the CSV file to write.")


def cmd_list(args) -> int:
    from autograder.judge.checks import ALL, max_score
    registry = load_extras(args.extra)
    for assignment in registry.from_outside():
        validated(assignment, registry.origins)
    if args.json:
        print(json.dumps([{"name": a.name, "problems": [p.name for p in a.problems],
                           "max_score": max_score(a)} for a in registry.assignments.values()], indent=2))
        return 0
    print("The checks, with their points (unless a problem sets its own) and what each asks:")
    width = max(len(c.name) for c in ALL)  # columns as wide as the longest name, whatever is declared
    for c in ALL:
        print(f"  {c.name:<{width}} {c.points:>3g}  {c.question}")
    problems = [p for a in registry.assignments.values() for p in a.problems]
    width = max((len(p.name) for p in problems), default=0)
    for a in registry.assignments.values():
        print(f"{a.name}  (lesson {a.lesson}, {max_score(a):g} points)")
        for p in a.problems:
            hidden = " [hidden]" if p.hidden else (f" [hidden checks: {', '.join(sorted(p.hidden_checks))}]"
                                                   if p.hidden_checks else "")
            print(f"  {p.name:<{width}} {max_score(p):>4g}  {p.summary}{hidden}")
    return 0


def cmd_grade(args) -> int:
    from autograder.sandbox.parent import import_torch

    import_torch()  # once, before the clean parent is forked, which then shares it

    from autograder.sandbox import ContainerUnavailable, Server
    from autograder.torch_versions import tell

    tell(sys.stderr)  # a torch outside the tested releases, protections it lacks: said once
    try:  # the workers' clean parent, before the extra files or a submission is loaded
        server = Server(fork=True, fallback=args.no_isolation)
    except ContainerUnavailable as error:
        fail(str(error))
    # SIGTERM (kill, a scheduler's time limit, a shutdown) stops as Ctrl-C does: what was graded is saved.
    # Set once the clean parent is forked, which keeps the default.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _grade(args, server)
    finally:
        server.close()


def _grade(args, server) -> int:
    from autograder.batch import UsageError, grade
    from autograder.intake.loader import NoSubmissions

    if args.roster and not args.canvas:
        fail("--roster goes with --canvas FILE.csv (the Canvas import to write)")
    check_seed(args.seed)
    check_paths(args)
    values = check_settings(args, args.out)
    limits = settings.limits_of(values)
    registry = load_extras(args.extra)
    from autograder.pipeline import warm_up

    assignment = lookup(registry, args.assignment)
    server.warm_up(*warm_up(assignment))  # the clean parent warms up while the assignment is validated
    validated(assignment, registry.origins, args.seed, outside_only=True)
    INTERRUPTED[0] = (f"Stopped. Every submission graded before now is saved in {args.out}: run the same "
                      f"command again to grade the rest.")
    start = time.monotonic()
    try:
        graded = grade(assignment, args.submissions, args.out, args.force, values["jobs"], limits, args.seed,
                       progress=not args.quiet, server=server, extras=args.extra, replace=args.replace,
                       **selection.chosen(args, fail))
    except (UsageError, NoSubmissions) as error:
        fail(str(error))
    if not args.quiet:
        from autograder.term.progress import print_summary

        print_summary(graded, args.out, time.monotonic() - start)
    tell_instructor(graded)
    if args.canvas:
        status = export_canvas(args.out, args.canvas, args.roster, policy=args.policy)
        return status or (1 if graded.not_graded else 0)
    return 1 if graded.not_graded else 0


def tell_instructor(graded) -> None:
    """What needs a look, on stderr whatever --quiet says: files that could not be read, zip entries
    refused, submissions the grader could not grade by a fault of its own."""
    if graded.unreadable:
        print(f"autograder: {len(graded.unreadable)} submission(s) could not be read and score 0 "
              f"(see report.html):", file=sys.stderr)
        for line in graded.unreadable[:UNREADABLE_SHOWN]:
            print("  " + shown(line), file=sys.stderr)
        if len(graded.unreadable) > UNREADABLE_SHOWN:
            print(f"  and {len(graded.unreadable) - UNREADABLE_SHOWN} more, each with its cause in "
                  f"report.html", file=sys.stderr)
    for warning in graded.warnings:
        print("autograder: warning: " + shown(warning), file=sys.stderr)
    if graded.not_graded:
        print("autograder: " + paragraph(
            f"{len(graded.not_graded)} submission(s) NOT graded, by a fault of the grader's (see above: "
            f"a full disk, a worker that could not be started), so they are left out of grades.csv and "
            f"report.html: {', '.join(graded.not_graded)}. Free some space and run the same command "
            f"again: it grades them (exit status 1 until then)."), file=sys.stderr)


def export_canvas(graded: Path, out: Path, roster: Path | None, policy: str = config.POLICY) -> int:
    """grade --canvas: the Canvas import of the folder just graded."""
    return hand_back(argparse.Namespace(command="export", graded=graded, canvas=out, csv=None, moodle=None,
                                        roster=roster, column=None, id_column=None, out_of=None,
                                        policy=policy))


def hand_back(args) -> int:
    from autograder.handback import COMMANDS as HAND_BACK
    from autograder.report.roster import ExportError

    try:
        print(shown(HAND_BACK[args.command](args)))
    except ExportError as error:
        fail(str(error))
    return 0


def cmd_gradescope(args) -> int:
    from autograder.gradescope.build import build
    from autograder.gradescope.settings import Settings
    from autograder.judge.checks import checks_of, max_score

    check_seed(args.seed)
    values = check_settings(args, None, TIMEOUTS)
    assignment = find(load_extras(args.extra), args.assignment, args.seed)
    if args.out.suffix != ".zip":
        fail(f"--out must name a .zip file (Gradescope takes the autograder as a zip), not {args.out}")
    settings = Settings(assignment.name, visibility=args.visibility, hidden_visibility=args.hidden_visibility,
                        output_format=args.output_format, load_seconds=values["load_timeout"],
                        problem_seconds=values["problem_timeout"], seed=args.seed)
    try:
        names = build(settings, args.extra, args.out)
    except OSError as error:
        fail(f"Cannot write {args.out} ({error.strerror}). Choose a path you can write to with --out.")
    hidden = sum(1 for p in assignment.problems for c in checks_of(p) if p.hidden or c in p.hidden_checks)
    print(f"{args.out}: Gradescope autograder for {assignment.name} ({len(assignment.problems)} problems, "
          f"{max_score(assignment):g} points, {hidden} hidden check(s), {len(names)} files).")
    print("On Gradescope: create a Programming Assignment, Configure Autograder, upload this zip "
          "(Ubuntu 22.04 or 24.04 base image), then Test Autograder with a notebook. "
          "docs/instructors.md has the steps.")
    return 0


def cmd_apparmor_profile(args) -> int:
    from autograder.sandbox.apparmor import profile
    print(profile(), end="")
    return 0


UNREADABLE_SHOWN = 10  # the unreadable named with their cause on the terminal; report.html has them all
TIMEOUTS = ("load_timeout", "problem_timeout")  # what a Gradescope archive takes of the settings
INTERRUPTED = ["Stopped."]  # what Ctrl-C says: grade sets how to resume


# Each command and what runs it; the parser lists them in this order (build_parser, _Parser.error).
COMMANDS = {"list": cmd_list, "grade": cmd_grade, "gradescope": cmd_gradescope, "export": hand_back,
            "release": hand_back, "apparmor-profile": cmd_apparmor_profile}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from autograder.packages import missing_packages_said, not_on_linux_said

    said = missing_packages_said() or not_on_linux_said(args.command)  # before torch: it warns without NumPy
    if said:
        fail(said)
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("\nautograder: " + INTERRUPTED[0], file=sys.stderr)
        return 130
