"""What run_autograder starts on Gradescope, for each submission: grades /autograder/submission through the
pipeline (pipeline.py, as the local batch does) and writes /autograder/results/results.json.

    python -m autograder.gradescope run [--root /autograder]          (on Gradescope, per submission)
    python -m autograder.gradescope check [--root /autograder]        (setup.sh: is the image usable?)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import stat
import sys
import time
import traceback
from pathlib import Path

from autograder import config
from autograder.gradescope.settings import Settings, prepare

ROOT_ENV = "AUTOGRADER_ROOT"


def world_readable(path: Path) -> bool:
    """Whether any user may read path and enter every folder above it."""
    path = path.resolve()
    try:
        if not path.stat().st_mode & stat.S_IROTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)
    except OSError:
        return False


def close_grader_files(root: Path) -> None:
    """Only root may enter the grader's folders: students' workers run as other users, no capability."""
    if os.geteuid() != 0:
        return
    for folder in (root / "source", root / "results"):
        if folder.is_dir():
            folder.chmod(0o700)


def run(root: Path) -> int:
    """Grades /autograder/submission and writes /autograder/results/results.json. Exit status 0 once
    results.json is written, whatever the student scored (and even when the grader failed)."""
    from autograder.report.files import gradescope_failure, write_results

    started = time.monotonic()
    results_path = root / "results" / "results.json"
    # The log may quote a student's file name or error, which may hold lone surrogates: never a crash.
    sys.stdout.reconfigure(errors="backslashreplace")
    server = None
    try:
        from autograder.sandbox.parent import import_torch

        import_torch()  # once, before the clean parent is forked, which then shares it

        from autograder.sandbox import Server
        from autograder.torch_versions import tell

        tell(sys.stdout)  # a torch outside the tested releases, protections it lacks: said once
        # the workers' clean parent, before the extra files or the submission load. Gradescope's own container
        # holds this one submission alone: where it cannot make ours, the older confinement is used.
        server = Server(fork=True, fallback=True)
        if server.isolation != "container":
            print(f"autograder: no container for the worker ({server.isolation}); it runs under its own "
                  f"user id with resource limits, Landlock and seccomp, and cannot read the hidden tests.")
        settings, assignment = prepare(root, validated=False)
        close_grader_files(root)
        document = _graded(root, settings, assignment, server, started)
    except Exception as error:  # noqa: BLE001 - students still get a results.json that says so
        traceback.print_exc(file=sys.stdout)
        document = gradescope_failure(f"{type(error).__name__}: {error}", time.monotonic() - started)
    finally:
        if server is not None:
            server.close()
    write_results(results_path, document, indent=1)
    print(f"autograder: wrote {results_path} (score {document['score']:g}) "
          f"in {time.monotonic() - started:.1f} s")
    return 0


def _graded(root: Path, settings: Settings, assignment, server, started: float) -> dict:
    """Gradescope's results.json for the submission folder: one student's upload, each notebook graded
    with the .py files beside it as its modules (without a notebook, the one .py file); each problem
    counts from the file where it scored best."""
    import importlib

    import autograder
    from autograder.gradescope.results import results_document
    from autograder.intake.layouts import uploads
    from autograder.intake.loader import read_all
    from autograder.judge.checks import max_score
    from autograder.pipeline import Pipeline, Private, about
    from autograder.report.plain import shown

    print(f"autograder: {assignment.name} from {Path(autograder.__file__).parent}, Python {sys.executable}")
    readable = (world_readable(Path(sys.executable))
                and world_readable(Path(importlib.import_module("torch").__file__)))
    if not readable:
        print("autograder: warning: Python or its packages are not world-readable; students' code can import "
              "only what the grader loaded first (setup.sh installs them where every user may read).")
    # where the worker can read the packages, it imports what its notebook uses itself (matplotlib alone
    # costs every submission 0.4 s when loaded for all), and torch's symbolic shapes only where its own
    # code asks for them (torch.autograd.grad with a gradient, gradcheck in a cell: 0.3 s; the grader's
    # measurements, PyTorch's words on a failure included, never do)
    with Pipeline(assignment, settings.limits(), None, settings.seed, server, Private([root]),
                  () if readable else config.GRADESCOPE_PRELOAD, prime=not readable) as pipeline:
        for missing in pipeline.unavailable:
            print(f"autograder: warning: {missing}")
        found = uploads(root / "submission", (assignment.lesson, assignment.name),
                        tuple(p.lookup for p in assignment.problems))
        try:
            subs = [s for s in read_all(found.found) if s.path is not None or s.unreadable]
        finally:
            found.close()
        files = {}
        for sub, graded in pipeline.grade(subs):
            if graded.not_graded:  # the grader's fault: the student is told so, and no score is invented
                raise RuntimeError(graded.not_graded)
            name = (sub.path.relative_to(root / "submission").as_posix() if sub.path is not None
                    else "submission")
            files[sub.id] = dataclasses.replace(graded, submission=name)
            if not sub.error:
                print(f"autograder: {shown(name)}: {graded.score:g}/{max_score(assignment):g} "
                      f"in {graded.seconds:.1f} s")
    notes = [line for s in subs for line in about(s)]
    return results_document(assignment, [files[s.id] for s in subs], settings, time.monotonic() - started,
                            notes, server.isolation)


def main(argv: list[str] | None = None) -> int:
    from autograder.gradescope.check import check

    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope",
                                     description="The Gradescope side of the autograder "
                                                 "(run_autograder, setup.sh).")
    parser.add_argument("command", choices=("run", "check"))
    parser.add_argument("--root", type=Path, default=Path(os.environ.get(ROOT_ENV, config.GRADESCOPE_ROOT)),
                        help=f"Gradescope's root folder (default: ${ROOT_ENV} or {config.GRADESCOPE_ROOT})")
    args = parser.parse_args(argv)
    return run(args.root) if args.command == "run" else check(args.root)
