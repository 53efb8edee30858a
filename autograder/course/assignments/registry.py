"""Which assignments a command knows: a Registry, built fresh by each command (and once per value of
AUTOGRADER_EXTRA for check() in the notebooks), never a global that grading changes in place.

Instructors extend the built-in assignments without touching this package (docs/authoring.md):

- a private Python file, passed to the command line with `--extra FILE.py` (and bundled into a
  Gradescope archive, where students cannot read it), calls `hide(...)`, `add_problem(...)` or
  `add_assignment(...)` (imported from autograder.course): they change the registry loading that file;
- an installed package declares an entry point in the group `autograder.assignments` naming an
  Assignment, a module holding ASSIGNMENT, or a function that calls those functions;
- for check() in the notebooks, the environment variable AUTOGRADER_EXTRA names files (separated by
  the path separator, ":") that check() loads before looking a problem up.

Where each problem came from is kept (Registry.origins), so that a mistake in it is reported with its file;
a file that fails while it runs is reported with its line and the problem written there, and a file that
registers nothing is an error (its problems would silently never be graded).
"""

from __future__ import annotations

import ast
import dataclasses
import os
import runpy
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import metadata
from pathlib import Path

from autograder.course.assignments import (
    Assignment,
    conv_bn_fusion,
    custom_functions,
    double_backward,
    gradcheck,
    modern_functions,
)
from autograder.course.problems import DefinitionError, Problem

ENTRY_POINTS = "autograder.assignments"  # a public contract: installed packages name their assignments here
BUILTIN = tuple(m.ASSIGNMENT for m in (custom_functions, gradcheck, double_backward, conv_bn_fusion,
                                       modern_functions))


class UnknownProblem(LookupError):
    pass


# The registry whose extension is running now: hide, add_problem... (below), called from that file, change it.
_CURRENT: ContextVar[Registry | None] = ContextVar("autograder_registry_loading", default=None)


class Registry:
    """Assignments by name, where each problem an extension added came from, and the installed entry
    points that failed to load (for the instructor)."""

    def __init__(self, assignments: Iterable[Assignment] = BUILTIN):
        self.assignments: dict[str, Assignment] = {a.name: a for a in assignments}
        # (assignment, problem) -> the file or package that added it
        self.origins: dict[tuple[str, str], str] = {}
        self.broken: list[str] = []
        self._sources: list[str] = []  # what is being loaded now (an extra file, an entry point)
        self._changes = 0  # calls of hide, add_problem, add_assignment while loading

    # -- looking up ------------------------------------------------------------------------------------

    def find_assignment(self, name: str) -> Assignment:
        try:
            return self.assignments[name]
        except KeyError:
            known = ", ".join(sorted(self.assignments))
            raise LookupError(f"There is no assignment called {name!r}. The assignments are: {known} "
                              f"(python -m autograder list shows them with their problems).") from None

    def find_problem(self, name: str, include_hidden: bool = True) -> Problem:
        """A problem by name; a name shared by two assignments is one and the same problem. The inline
        check() asks with include_hidden=False: a hidden problem is then unknown, and not listed."""
        shown = [p for a in self.assignments.values() for p in a.problems if include_hidden or not p.hidden]
        for problem in shown:
            if name in (problem.name, problem.lookup):
                return problem
        known = ", ".join(sorted({p.name for p in shown}))
        raise UnknownProblem(f"No graded problem is called {name!r}. The graded names are: {known}. "
                             f"Pass the class (or the function) itself, e.g. check(KillHead), or name the "
                             f"problem with check(obj, problem='KillHead').")

    def from_outside(self) -> list[Assignment]:
        """The assignments an extra file or an installed package added or changed."""
        names = {a for a, _ in self.origins}
        return [a for a in self.assignments.values() if a.name in names]

    # -- changing (what instructors' files call, through the functions below) ------------------------

    def hide(self, assignment: str, *targets: str) -> None:
        """Marks whole problems ("Exp") or single checks ("Exp: gradgradcheck") of an assignment hidden:
        still graded and scored, never shown by check(), shown on Gradescope as the instructor chooses."""
        for target in targets:
            name, _, check = (part.strip() for part in target.partition(":"))
            problems = {p.name: p for p in self.find_assignment(assignment).problems}
            if name not in problems:
                raise LookupError(f"hide({assignment!r}, {target!r}): {assignment} has no problem {name!r}; "
                                  f"its problems are {', '.join(problems)}.")
            problem = problems[name]
            if not check:
                self._replace(assignment, problem, dataclasses.replace(problem, hidden=True))
            else:  # a check the problem does not ask is named by validate (judge/validate.py)
                hidden = frozenset(problem.hidden_checks | {check})
                self._replace(assignment, problem, dataclasses.replace(problem, hidden_checks=hidden))

    def add_problem(self, assignment: str, problem: Problem) -> None:
        """Adds a problem to an assignment (pass hidden=True to Problem to grade it without showing it)."""
        a = self.find_assignment(assignment)
        if not isinstance(problem, Problem):
            raise TypeError(f"add_problem({assignment!r}, ...) takes a Problem, not a "
                            f"{type(problem).__name__}.")
        if any(p.name == problem.name for p in a.problems):
            raise ValueError(f"add_problem: {a.name} already has a problem called {problem.name!r}.")
        self.assignments[a.name] = dataclasses.replace(a, problems=(*a.problems, problem))
        self._note(a.name, [problem])

    def add_assignment(self, assignment: Assignment) -> None:
        """Adds a whole assignment (a new name, or one that replaces the built-in of the same name)."""
        usage = "add_assignment takes an Assignment(name, lesson, (Problem(...), ...))."
        if not isinstance(assignment, Assignment):
            raise TypeError(usage)
        if not all(isinstance(p, Problem) for p in assignment.problems):
            raise TypeError(usage)
        self.assignments[assignment.name] = assignment
        self._note(assignment.name, assignment.problems)

    def _replace(self, assignment: str, old: Problem, new: Problem) -> None:
        a = self.find_assignment(assignment)
        problems = tuple(new if p is old else p for p in a.problems)
        self.assignments[a.name] = dataclasses.replace(a, problems=problems)
        self._note(a.name, [new])

    def _note(self, assignment: str, problems: Iterable[Problem]) -> None:
        self._changes += 1
        if self._sources:
            for problem in problems:
                self.origins[(assignment, problem.name)] = self._sources[-1]

    # -- loading extensions ----------------------------------------------------------------------------

    def load_extra(self, path: Path | str) -> None:
        """Runs an instructor's extension file, whose hide / add_problem / add_assignment change this
        registry."""
        path = Path(path)
        if not path.is_file():
            raise LookupError(f"The extra assignments file {path} does not exist.")
        changes = self._changes
        try:
            with self._loading(str(path)):
                namespace = runpy.run_path(str(path), run_name="autograder_extra")
        except Exception as error:  # noqa: BLE001 - reported as a usage error with its cause and line
            cause = error.text if isinstance(error, DefinitionError) else str(error) \
                if isinstance(error, LookupError) else f"{type(error).__name__}: {error}"
            raise LookupError(f"The extra assignments file {path} failed{_at(path, error, cause)}: "
                              f"{cause}") from None
        if self._changes == changes:
            raise LookupError(_registers_nothing(path, namespace))

    def load_entry_points(self) -> None:
        """Assignments of installed packages (entry point group `autograder.assignments`)."""
        try:
            found = metadata.entry_points(group=ENTRY_POINTS)
        except Exception:  # noqa: BLE001 - broken package metadata must not stop the notebooks' check()
            return
        for entry in sorted(found, key=lambda e: e.name):
            label = f"the entry point {entry.name} = {entry.value} of an installed package"
            try:
                with self._loading(label):
                    value = entry.load()
                    if isinstance(value, Assignment):
                        self.add_assignment(value)
                    elif isinstance(getattr(value, "ASSIGNMENT", None), Assignment):
                        self.add_assignment(value.ASSIGNMENT)
                    elif callable(value):
                        value()
                    else:
                        raise TypeError(f"it names a {type(value).__name__}, not an Assignment, a module "
                                        f"holding ASSIGNMENT or a function")
            except Exception as error:  # noqa: BLE001 - reported to the instructor, never fatal to check()
                self.broken.append(f"{label} failed: {type(error).__name__}: {error}")

    @contextmanager
    def _loading(self, source: str) -> Iterator[None]:
        self._sources.append(source)
        token = _CURRENT.set(self)
        try:
            yield
        finally:
            _CURRENT.reset(token)
            self._sources.pop()


def _at(path: Path, error: BaseException, cause: str) -> str:
    """" at line 12 (Problem 'Gather')": where in the file the error arose (its innermost line there, or
    the line a SyntaxError names; for a DefinitionError naming a keyword, that keyword's line) and the
    Problem(...) written around it, unless the cause names it."""
    if isinstance(error, SyntaxError) and error.filename == str(path):
        line = error.lineno
    else:
        lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
        line = lines[-1] if lines else None
    if not line:
        return ""
    call = _problem_written_at(path, line)
    name = getattr(error, "problem", "") or _keyword(call, "name")
    keyword = getattr(error, "keyword", "") and _keyword_line(call, error.keyword)
    named = f" (Problem {name!r})" if name and repr(name) not in cause else ""
    return f" at line {keyword or line}{named}"


def _problem_written_at(path: Path, line: int) -> ast.Call | None:
    """The innermost Problem(...) call of the file spanning this line."""
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    found = None
    for node in ast.walk(tree):  # outer calls before the calls inside them
        called = getattr(node, "func", None)
        if isinstance(node, ast.Call) and getattr(called, "id", getattr(called, "attr", "")) == "Problem" \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            found = node
    return found


def _keyword(call: ast.Call | None, name: str) -> str:
    """The string a call gives as keyword `name` (Problem(name="Gather")), or ""."""
    for keyword in call.keywords if call else ():
        if keyword.arg == name and isinstance(keyword.value, ast.Constant) \
                and isinstance(keyword.value.value, str):
            return keyword.value.value
    return ""


def _keyword_line(call: ast.Call | None, name: str) -> int | None:
    return next((k.value.lineno for k in (call.keywords if call else ()) if k.arg == name), None)


def _registers_nothing(path: Path, namespace: dict) -> str:
    """Why a file that changed no assignment is refused, naming the problems it defines and their lines."""
    from autograder.course.assignments import Assignment

    problems = {k: v for k, v in namespace.items() if isinstance(v, Problem) and not k.startswith("_")}
    assignments = [k for k, v in namespace.items() if isinstance(v, Assignment) and not k.startswith("_")]
    defined = [f"{k} = Problem(name={v.name!r}, ...)" + (f" at line {v.written_at[1]}" if v.written_at
                                                         and v.written_at[0] == str(path) else "")
               for k, v in problems.items()] + [f"{k} = Assignment(...)" for k in assignments]
    if not defined:
        return (f"The extra assignments file {path} registers nothing: it calls none of add_problem, "
                f"add_assignment and hide (imported from autograder.course), so it changes no assignment. "
                f"Register each problem, e.g. add_problem(\"custom-functions\", Problem(...)) "
                f"(docs/authoring.md).")
    it = "it" if len(defined) == 1 else "them"
    first = next(iter(problems), "Problem(...)")
    whole = assignments[0] if assignments else f"Assignment(name, lesson, ({first},))"
    return (f"The extra assignments file {path} registers nothing: it defines {', '.join(defined)} but "
            f"never registers {it}, so nothing in it would be graded. Register {it}: "
            f"add_problem(\"custom-functions\", {first}) adds a problem to an assignment, "
            f"add_assignment({whole}) makes an assignment of its own (docs/authoring.md).")


def load(extras: Iterable[Path | str] = ()) -> Registry:
    """A fresh registry: the built-in assignments, then installed packages', then each extra file's."""
    registry = Registry()
    registry.load_entry_points()
    for path in extras:
        registry.load_extra(path)
    return registry


_NOTEBOOKS: dict[str, Registry] = {}  # AUTOGRADER_EXTRA's value -> its registry, each file loaded once


def for_notebooks() -> Registry:
    """What check() knows: load() with the files AUTOGRADER_EXTRA names, built once for each value."""
    value = os.environ.get("AUTOGRADER_EXTRA", "")
    if value not in _NOTEBOOKS:
        _NOTEBOOKS[value] = load(filter(None, value.split(os.pathsep)))
    return _NOTEBOOKS[value]


# -- what an instructor's extra file (or an entry point's function) calls: docs/authoring.md -----------------

def _being_loaded(call: str) -> Registry:
    registry = _CURRENT.get()
    if registry is None:
        raise RuntimeError(f"{call}() changes the assignments while an instructor's file is loaded (--extra, "
                           f"AUTOGRADER_EXTRA, an installed package's entry point). Elsewhere, change a "
                           f"registry of your own: registry = load() (from autograder.course.assignments."
                           f"registry), then registry.{call}(...).")
    return registry


def hide(assignment: str, *targets: str) -> None:
    """hide("custom-functions", "Exp: gradgradcheck"): see Registry.hide."""
    _being_loaded("hide").hide(assignment, *targets)


def add_problem(assignment: str, problem: Problem) -> None:
    """add_problem("custom-functions", Problem(...)): see Registry.add_problem."""
    _being_loaded("add_problem").add_problem(assignment, problem)


def add_assignment(assignment: Assignment) -> None:
    """add_assignment(Assignment(name, lesson, problems)): see Registry.add_assignment."""
    _being_loaded("add_assignment").add_assignment(assignment)


def note_added_check() -> None:
    """Called by judge.checks.add_check: a file that adds a check while it is loaded changes what is
    graded, as one that adds a problem does, so it is not refused as registering nothing."""
    registry = _CURRENT.get()
    if registry is not None:
        registry._changes += 1


def find_assignment(name: str) -> Assignment:
    """In an extra file, the assignment as that file's registry has it so far; elsewhere, as load() has it."""
    return (_CURRENT.get() or load()).find_assignment(name)


def find_problem(name: str, include_hidden: bool = True) -> Problem:
    """As find_assignment, for a problem: see Registry.find_problem."""
    return (_CURRENT.get() or load()).find_problem(name, include_hidden)

