"""Which submissions one `grade` run grades, and which results make the class.

- `--only ID...` grades those students again (whatever their key says) and nobody else.
- `--shard I/N` grades the I-th of N shares of the class (I from 0), so that N machines of a cluster
  (a Slurm job array, a Kubernetes Indexed Job) grade one class into one --out on a shared file system
  at once. Every shard loads the same submissions in the same order and takes every N-th from its I-th:
  the shares are disjoint and cover the class. `--shard auto` reads I and N from Slurm's
  SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) and SLURM_ARRAY_TASK_COUNT, or Kubernetes'
  JOB_COMPLETION_INDEX with the count given as `--shard auto/N`.
- The class is every result of this assignment in --out, not only this run's: a run that grades a few
  students (a file named alone, --only, a shard) keeps the others' results, and the class files are
  written from all of them (`class_rows`). A student dropped from the class is dropped by deleting
  their folder in --out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.report.files import read_results


class SelectionError(ValueError):
    """--only or --shard given wrong: one paragraph, exit status 2."""


@dataclass(frozen=True)
class Shard:
    index: int  # from 0
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, position: int) -> bool:
        return position % self.count == self.index


def parse_shard(text: str, env: dict | None = None) -> Shard:
    """`I/N`, `auto` (Slurm's array variables) or `auto/N` (JOB_COMPLETION_INDEX or Slurm's task id, with
    N shards)."""
    env = os.environ if env is None else env
    usage = ("--shard takes I/N (this machine grades share I of N, I from 0 to N-1), or auto (read from a "
             "Slurm job array's SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT), or auto/N (the index "
             "from a Kubernetes Indexed Job's JOB_COMPLETION_INDEX, N its completions)")
    index, _, count = text.partition("/")
    if index == "auto":
        index, count = _from_environment(env, count, usage)
    if not (index.isdigit() and count.isdigit()):
        raise SelectionError(f"{usage}, not {text!r}.")
    shard = Shard(int(index), int(count))
    if not 0 <= shard.index < shard.count:
        raise SelectionError(f"{usage}: {text!r} gives share {shard.index} of {shard.count}, and the shares "
                             f"are numbered 0 to {max(shard.count - 1, 0)}.")
    return shard


def _from_environment(env, count: str, usage: str) -> tuple[str, str]:
    if env.get("SLURM_ARRAY_TASK_ID"):
        index = str(int(env["SLURM_ARRAY_TASK_ID"]) - int(env.get("SLURM_ARRAY_TASK_MIN") or 0)) \
            if env["SLURM_ARRAY_TASK_ID"].isdigit() else env["SLURM_ARRAY_TASK_ID"]
        return index, count or env.get("SLURM_ARRAY_TASK_COUNT", "")
    if env.get("JOB_COMPLETION_INDEX"):
        if not count:
            raise SelectionError(f"{usage}: a Kubernetes Indexed Job gives the index only, so give the "
                                 f"count as --shard auto/N (N the Job's completions).")
        return env["JOB_COMPLETION_INDEX"], count
    raise SelectionError(f"{usage}. --shard auto found neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX "
                         f"in the environment: run it as a task of a job array, or give I/N.")


def check_only(only: list[str], ids: list[str], found_in: str) -> None:
    """Every id --only names is a submission found; else a paragraph naming the ids there are."""
    unknown = [o for o in only if o not in set(ids)]
    if not unknown:
        return
    import difflib

    near = sorted({c for o in unknown for c in difflib.get_close_matches(o, ids, 3, 0.6)})
    shown = ", ".join(ids[:20]) + (" ..." if len(ids) > 20 else "")
    raise SelectionError(f"--only names {', '.join(unknown)}, which {'is' if len(unknown) == 1 else 'are'} "
                         f"not among the {len(ids)} submission(s) found in {found_in}"
                         f"{' (did you mean ' + ', '.join(near) + '?)' if near else ''}. --only takes the "
                         f"ids of grades.csv's first column (here: {shown}). Nothing was graded.")


def class_rows(out: Path, assignment: str, rows: dict[str, dict]) -> dict[str, dict]:
    """rows (this run's results and kept ones, by id) with every other result of this assignment in out:
    the whole class, by id."""
    whole = dict(rows)
    try:
        folders = sorted(p for p in out.iterdir() if p.is_dir() and p.name not in whole)
    except OSError:
        return whole
    for folder in folders:
        result = read_results(folder / "results.json")
        extra = result.get("extra_data") if isinstance(result, dict) else None
        if (isinstance(extra, dict) and extra.get("assignment") == assignment
                and extra.get("submission") == folder.name and isinstance(result.get("score"), int | float)):
            whole[folder.name] = result
    return whole


def add_options(parser) -> None:
    """grade's --only and --shard, and a word on --and (several.py)."""
    parser.epilog = ("Several assignments in one grader start: join whole grade command lines with --and "
                     "(grade --assignment A --out DIR_A ... --and --assignment B --out DIR_B ...).")
    parser.add_argument("--only", nargs="+", action="extend", default=[], metavar="ID",
                        help="grade again these submissions only (ids as in grades.csv), keeping every other "
                             "result in --out: the class files still hold the whole class")
    parser.add_argument("--shard", metavar="I/N",
                        help="grade share I of N (from 0) of the submissions, for N machines grading into "
                             "one shared --out at once; auto reads a Slurm job array's task id and count, "
                             "auto/N a Kubernetes Indexed Job's index. A plain grade afterwards writes "
                             "grades.csv")


def chosen(args, fail) -> dict:
    """grade()'s only and shard from the command line; fail(paragraph) on a mistake."""
    if args.shard is None:
        return {"only": args.only, "shard": None}
    if args.canvas:
        fail("--canvas goes with the plain grade run after the shards (a shard writes no grades.csv): "
             "run every shard without it, then the same command without --shard and with --canvas.")
    try:
        return {"only": args.only, "shard": parse_shard(args.shard)}
    except SelectionError as error:
        fail(str(error))
