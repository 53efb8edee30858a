"""check(): the notebook's immediate verdict on a Function, with the grader's own checks and pictures.

    from autograder import check
    check(KillHead)        # or check(sinh), check(obj, problem="KillHead")

Problems an instructor added are looked up too: those of installed packages (entry points), and those
of the files named by the environment variable AUTOGRADER_EXTRA (docs/authoring.md).

It measures the Function in the notebook's process (your own code, so no isolation is needed), then
judges and draws exactly as the batch grader does. Hidden checks are graded later, never shown here.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.judge.verdicts import CheckResult


@dataclass
class Report:
    """What check() returns: rich HTML in Jupyter, plain text elsewhere.

    A Function that passes every check is told so in one line (with any note that costs nothing), not
    with a row per check: the solutions' committed outputs then say the same when a check is added to
    the grader. `table=True` (check(KillHead, table=True)) shows every row, passing or not."""

    problem: str
    results: list[CheckResult]
    table: bool = False
    called: str = ""  # what the learner passed check(), for the hint: "sinh" for the problem Sinh

    @property
    def _summary(self) -> bool:
        return self.passed and not self.table

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def score(self) -> float:
        return sum(r.score for r in self.results)

    def _repr_html_(self) -> str:
        with _old_objects_frozen():
            return self._html()

    def _html(self) -> str:
        from autograder.report.pages import PASSING, checks_table_html, passing_html

        if self._summary:
            return passing_html(self.problem, self.results, self.called or self.problem)
        verdict = PASSING if self.passed else "some checks fail"
        # a cause several checks share (a class that is not a Function fails every check) said once
        return checks_table_html(self.results, title=f"check({self.problem}): {verdict}", group=True)

    def __repr__(self) -> str:
        from autograder.report.pages import passing_text, text_report

        if self._summary:
            return passing_text(self.problem, self.results, self.called or self.problem)
        return f"check({self.problem})\n" + text_report(self.results, group=True)


def check(obj, problem: str | None = None, seed: int = 0, table: bool = False) -> Report | None:
    """Grades obj as the graded problem of the same name (or `problem`) and shows why it fails; with
    table=True, every check's row even when all pass."""
    if os.environ.get("AUTOGRADER_BATCH"):
        return None  # inside a grading worker the notebook's own check cells are skipped
    with _old_objects_frozen():
        return _check(obj, problem, seed, table, sys._getframe(1).f_globals)


@contextlib.contextmanager
def _old_objects_frozen():
    """The objects the notebook holds already (torch's million among them) kept out of the garbage
    collector's passes while check() runs, and given back afterwards: a full pass walks every one of
    them, 0.2 s apiece with torch loaded, and the first check() (its imports) would make two or three.
    Left alone where the notebook froze objects itself."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _check(obj, problem: str | None, seed: int, table: bool, caller: dict) -> Report:
    # Imported here, past check()'s return in a worker: a worker never loads the grader's code (judge/).
    from autograder.course.assignments.registry import for_notebooks
    from autograder.judge.plan import probe
    from autograder.judge.reference import encoded_cases, expectations
    from autograder.judge.verdicts import judge
    from autograder.torch_versions import tell

    tell(sys.stderr, prefix="", protections=False)  # a torch outside the tested releases: said once
    # with AUTOGRADER_EXTRA's files: an instructor's problems, visible to check() when they want
    registry = for_notebooks()
    name = problem or _graded_name(obj, caller, registry)
    if not name:
        raise TypeError("check() needs the class or function itself, e.g. check(KillHead), or "
                        "check(obj, problem='KillHead').")
    spec = registry.find_problem(name, include_hidden=False)
    namespace = dict(caller)  # for companions such as CubeBackward or Sinh
    namespace[spec.lookup] = obj
    with warnings.catch_warnings():
        # check() calls the Function dozens of times: what PyTorch warns of (a tensor turned into a Python
        # float for math.exp, say) would print above the report, which names that mistake itself.
        warnings.simplefilter("ignore")
        data = probe(spec, namespace, encoded_cases(spec, seed), seed, expectations(spec, seed))
    results = [r for r in judge(spec, data, seed, _source(spec, obj, seed, caller)) if not r.hidden]
    return Report(spec.name, results, table, name if problem is None else f"{name}, problem={problem!r}")


def _source(spec, obj, seed: int, caller: dict):
    """The rules as the notebook's cells show them (as the batch grader reads them), where the graded
    name is bound to obj itself and the cells define it as a class; None (no facts) otherwise."""
    from autograder.judge.source import read_source, tensor_arguments
    from autograder.notebook_source import cells_run

    if caller.get(spec.lookup) is not obj:
        return None
    cells = cells_run(caller, spec.lookup)
    facts = read_source(spec, cells, {}, tensor_arguments(spec, seed)) if cells else None
    return facts if facts is not None and (facts.bound == "class" or spec.kind != "function") else None


def _graded_name(obj, caller: dict, registry) -> str | None:
    """The problem obj answers: its own name (__name__, or a custom op's _name) when a problem has it,
    else the name the calling cell binds it to, as the batch grader looks it up (sinh = lambda x:
    Sinh.apply(x)[0]; Exp = ExpFunction); else its own name, for the error that lists the graded ones."""
    own = getattr(obj, "__name__", None) or getattr(obj, "_name", None)  # _name: measure/captured.PRIVATE
    bound = [key for key, value in list(caller.items()) if value is obj and not key.startswith("_")]
    for name in ([own] if isinstance(own, str) else []) + bound:
        try:
            registry.find_problem(name, include_hidden=False)
            return name
        except LookupError:
            continue
    return own if isinstance(own, str) else None
