"""What decides a graded result, and what grading it again would change.

A result is keyed on everything that decides it (`Key`): the submission's bytes (its file and its helper
modules), the assignment's full definition (judge/fingerprint.py), the extra files' code (their syntax
trees: a comment or a new layout changes nothing), the seed, the limits, the grader's version and where
student code ran. A re-run grades again exactly the results whose key changed, naming every part that
changed (`staleness`); one that would replace results and lose points graded before (an --extra file
left out, a problem removed, a lower maximum, another assignment) is told in a paragraph (`points_lost`),
and batch.py stops before writing anything unless told --replace.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import autograder
from autograder.results import read_tests

if TYPE_CHECKING:
    from autograder.course.assignments import Assignment
    from autograder.intake.loader import Submission
    from autograder.sandbox import Limits


@dataclass(frozen=True)
class Key:
    """Everything that decides a result, except the submission itself (see the module's docstring)."""

    assignment: str
    definition: str
    extra_files: tuple[tuple[str, str], ...]  # (file name, sha256 of its syntax tree)
    seed: int
    limits: dict = field(hash=False)
    grader: str = autograder.__version__
    isolation: str = "container"  # where student code ran (sandbox.Server.isolation)

    def of(self, sub: Submission) -> dict:
        return {"submission": sub.sha256, "assignment": self.assignment, "definition": self.definition,
                "extra_files": [list(e) for e in self.extra_files], "seed": self.seed, "limits": self.limits,
                "grader": self.grader, "isolation": self.isolation}


def make_key(assignment: Assignment, seed: int, limits: Limits, extras: list[Path] = (),
             isolation: str = "container") -> Key:
    from autograder.judge.fingerprint import fingerprint

    return Key(assignment.name, fingerprint(assignment, seed), extra_files(extras), seed,
               dataclasses.asdict(limits), isolation=isolation)


def extra_files(paths: list[Path]) -> tuple[tuple[str, str], ...]:
    """(name, hash of its code) of each extra file: the hash of its syntax tree, so that an edit of its
    comments or layout grades nobody again (the registry has run each file, so each parses)."""
    from autograder.judge.fingerprint import normalised

    return tuple((Path(p).name, hashlib.sha256(normalised(Path(p).read_text()).encode()).hexdigest())
                 for p in paths)


# Why a result is stale: every part of the key that differs, in this order.
STALE = (("submission", "its files changed"), ("assignment", "it was graded for another assignment"),
         ("grader", "the grader changed"), ("seed", "the seed changed"), ("limits", "the limits changed"),
         ("extra_files", "the extra files changed"), ("definition", "the assignment's definition changed"),
         ("isolation", "where student code runs changed"))


def staleness(previous: dict | None, key: dict, fingerprint_at: Callable[[int], str] | None = None) -> str:
    """"" when previous (a results.json) was graded with this very key, else why not: every part that
    changed. The definition's fingerprint depends on the seed and on the grader: after a new seed it is
    compared with this definition's at the old seed (fingerprint_at, when given), after a new grader not
    at all (the grader's change is reason enough)."""
    if previous is None:
        return "new"
    old = (previous.get("extra_data") or {}).get("key")
    if not isinstance(old, dict):
        return "it was graded by an earlier version of the grader"
    reasons = []
    for name, why in STALE:
        if name == "definition":
            changed = _definition_changed(old, key, fingerprint_at)
        elif name == "extra_files":
            changed = _code(old.get(name)) != _code(key[name])
        else:
            changed = old.get(name) != key[name]
        if not changed:
            continue
        if name in ("grader", "seed"):
            why = f"{why} ({old.get(name)} -> {key[name]})"
        elif name == "extra_files":
            why = f"{why} ({_extras_diff(_pairs(old.get(name)), _pairs(key[name]))})"
        reasons.append(why)
    return and_(reasons)


def and_(items: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _definition_changed(old: dict, key: dict, fingerprint_at: Callable[[int], str] | None) -> bool:
    if old.get("grader") != key["grader"]:
        return False
    if old.get("seed") == key["seed"]:
        return old.get("definition") != key["definition"]
    if fingerprint_at is None or not isinstance(old.get("seed"), int):
        return False
    try:
        return old.get("definition") != fingerprint_at(old["seed"])
    except Exception:  # noqa: BLE001 - a definition that cannot be made at the old seed is another one
        return True


def _pairs(files) -> list[tuple[str, str]]:
    """A key's extra files as (name, hash) pairs, whether from a Key or read back from a results.json."""
    try:
        return [(str(name), str(code)) for name, code in files or ()]
    except (TypeError, ValueError):
        return [("?", repr(files))]


def _code(files) -> list[str]:
    """What of the extra files decides a result: their code, not their names."""
    return sorted(code for _, code in _pairs(files))


def _extras_diff(old: list[tuple[str, str]], new: list[tuple[str, str]]) -> str:
    """"hidden.py added", "hidden.py removed", "hidden.py edited": each file whose code differs."""
    old_code, new_code = {c for _, c in old}, {c for _, c in new}
    old_names, new_names = {n for n, _ in old}, {n for n, _ in new}
    said = [f"{n} {'edited' if n in old_names else 'added'}" for n, c in new if c not in old_code]
    said += [f"{n} removed" for n, c in old if c not in new_code and n not in new_names]
    return ", ".join(said)


def losses(replaced: list[dict], assignment: Assignment, key: Key) -> list[str]:
    """How grading these results again would lose points graded before, each in a clause: an extra file
    they were graded with and this run is not given, problems no longer graded, a lower maximum, another
    assignment. [] when none."""
    data = [r.get("extra_data") or {} for r in replaced]
    said = []
    others = sorted({d["assignment"] for d in data if d.get("assignment") not in (None, assignment.name)})
    if others:
        said.append(f"they are results of {and_(others)}, and this run grades {assignment.name}")
    missing = missing_extras(replaced, key)
    if missing:
        said.append(f"they were graded with --extra {and_(missing)}, which this run is not given")
    same = [(r, d) for r, d in zip(replaced, data) if d.get("assignment") == assignment.name]
    graded = {t.problem for r, _ in same for t in read_tests(r)}
    gone = sorted(graded - {p.name for p in assignment.problems})
    if gone:
        said.append(f"the problem{'s' if len(gone) > 1 else ''} {and_([repr(g) for g in gone])} "
                    f"{'is' if len(gone) == 1 else 'are'} no longer graded")
    before = max((d["max_score"] for _, d in same if isinstance(d.get("max_score"), int | float)), default=0)
    from autograder.judge.checks import max_score

    if before > max_score(assignment):
        said.append(f"the maximum falls from {before:g} to {max_score(assignment):g} points")
    return said


def missing_extras(results: list[dict], key: Key) -> list[str]:
    """The names of the extra files these results were graded with that this run is not given (by name
    or by code: a file renamed, or edited, is still given)."""
    names, codes = {n for n, _ in key.extra_files}, {c for _, c in key.extra_files}
    return sorted({name for r in results
                   for name, code in _pairs(((r.get("extra_data") or {}).get("key") or {}).get("extra_files"))
                   if name not in names and code not in codes})


def points_lost(out: Path, replaced: list[dict], assignment: Assignment, key: Key) -> str:
    """What changed and how to go on, in a paragraph, when grading these results again would lose points
    graded before; else ""."""
    said = losses(replaced, assignment, key)
    if not said:
        return ""
    missing = missing_extras(replaced, key)
    keep = (f"pass {' '.join('--extra ' + n for n in missing)} again" if missing
            else "grade as before (the same assignment and --extra files)")
    return (f"Grading again would replace {len(replaced)} result(s) in {out} and lose points "
                     f"graded before: {'; '.join(said)}. Nothing was written. To keep them, {keep}; to "
                     f"accept the change and replace them, add --replace (or grade into a new --out).")
