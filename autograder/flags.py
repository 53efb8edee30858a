"""A submission that reaches into the grader is flagged: what it did, where, and which problems it may
have touched, which score nothing until the instructor accepts it in grading.toml (term/rules.py,
[[accept]]); the points its measurements earned are kept beside, withheld.

The evidence comes from two places the submission cannot fake: its source, read here (reaching.py), and
its worker's audit hook, which tells the grader of a reach before the reach happens (sandbox/watch.py,
sandbox/evidence.py: with the messages its loop never writes). A reach in the source, or while the cells
ran, may have touched every problem; one while a problem was measured touches that problem and every
problem measured after it (hidden ones come last).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autograder import cells as cells_
from autograder.judge import reach_names
from autograder.judge.reaching import scan
from autograder.results import subtotals

WHAT_HAPPENED = {  # the audit hook's events, in the page's words
    "sys._getframe": reach_names.FRAMES, "sys._getframemodulename": reach_names.FRAMES,
    "sys._current_frames": reach_names.FRAMES, "sys._current_exceptions": reach_names.FRAMES,
    "object.__getattr__": reach_names.OBJECTS, "object.__setattr__": reach_names.OBJECTS,
    "object.__delattr__": reach_names.OBJECTS, "gc.get_objects": reach_names.OBJECTS,
    "gc.get_referrers": reach_names.OBJECTS, "gc.get_referents": reach_names.OBJECTS,
    "code.__new__": reach_names.DYNAMIC, "function.__new__": reach_names.DYNAMIC,
    "marshal.loads": reach_names.DYNAMIC, "marshal.load": reach_names.DYNAMIC, "compile": reach_names.DYNAMIC,
    "exec": reach_names.DYNAMIC, "pickle.find_class": reach_names.DYNAMIC, "import": reach_names.GRADER,
    "open": reach_names.PROCESS, "os.listdir": reach_names.PROCESS, "os.scandir": reach_names.PROCESS,
    "channel": "wrote on the worker's channel to the grader behind its back",
}


@dataclass
class Evidence:
    where: str  # "Cell 3", "helper.py", or "" (not known)
    line: int
    what: str  # what it does, in a phrase, and the name used
    text: str  # the line of the source (the grader's own copy), or what the worker saw
    how: str  # "in the source", "while running (refused)", "while running"
    # seen while a hidden problem was measured: never on the student's page (what a worker does then could
    # carry what it saw of the hidden inputs)
    hidden: bool = False

    def describe(self) -> str:
        where = f"{self.where}, line {self.line}: " if self.where and self.line else \
            f"{self.where}: " if self.where else ""
        text = f" `{self.text}`" if self.text else ""
        return f"{where}{self.what} ({self.how}){text}"


@dataclass
class Flag:
    """Why a submission is flagged, and what it costs: the touched problems, the points withheld."""

    evidence: list[Evidence]
    touched: list[str]
    withheld: dict[str, float] = field(default_factory=dict)  # problem -> points as measured
    measured: dict[str, list] = field(default_factory=dict)  # check's name -> [passed, score] as measured

    def to_dict(self) -> dict:
        return {"evidence": [asdict(e) for e in self.evidence], "touched": self.touched,
                "withheld": self.withheld, "measured": self.measured}

    def shown(self) -> list[Evidence]:
        """The evidence a student may read (not what was seen while a hidden problem was measured)."""
        return [e for e in self.evidence if not e.hidden]

    def sentence(self, hidden: bool = False) -> str:
        """The sentence of a withheld check (of a hidden problem: all the evidence may be named)."""
        evidence = self.evidence if hidden else self.shown()
        first = evidence[0].describe() if evidence else "while a hidden test was measured"
        more = f" (and {len(evidence) - 1} more, listed with the flag)" if len(evidence) > 1 else ""
        return (f"Not scored: your submission reaches into the grader's own code, which a Function never "
                f"needs: {first}{more}. This problem's points are withheld until your instructor reviews "
                f"it.")


def _phrase(event: str) -> str:
    if event in WHAT_HAPPENED:
        return WHAT_HAPPENED[event]
    if event.startswith("ctypes."):
        return reach_names.MEMORY
    processes = event.startswith(("os.", "subprocess", "socket", "mmap"))
    return reach_names.PROCESS if processes else reach_names.HOOKS


def _where(sub, file: str) -> str:
    """A file the worker named, as the page names it: a cell, a helper module, or what it is."""
    if file.startswith("<cell ") and file.endswith(">") and file[6:-1].isdigit():
        return cells_.name(sub, int(file[6:-1]))
    for module in sub.modules:
        if file.endswith("/" + module):
            return module
    return "code it built while running" if file else ""


def _line_of(sub, file: str, line: int) -> str:
    source = ""
    if file.startswith("<cell ") and file[6:-1].isdigit() and 0 < int(file[6:-1]) <= len(sub.cells):
        source = sub.cells[int(file[6:-1]) - 1]
    for module, text in (sub.modules or {}).items():
        if file.endswith("/" + module):
            source = text
    lines = source.splitlines()
    return lines[line - 1].strip()[:160] if 0 < line <= len(lines) else ""


def flag_of(problems: list[str], sub, reaches: list[dict], hidden: tuple[str, ...] = ()) -> Flag | None:
    """The flag of a submission (None when nothing reaches): its source read here, and what its workers
    reported (Outcome.reaches). hidden: the hidden problems' names."""
    evidence, touched = [], set()
    for reach in scan(sub.cells, sub.modules, frozenset(i + 1 for i in getattr(sub, "read_only", ()))):
        where = (cells_.name(sub, reach.source) if isinstance(reach.source, int) else str(reach.source))
        evidence.append(Evidence(where, reach.line, reach.what, reach.text, "in the source"))
        touched |= set(problems)
    for reach in reaches:
        event, file = str(reach.get("what")), str(reach.get("file", ""))
        detail, line = str(reach.get("detail", "")), int(reach.get("line") or 0)
        named = detail if event == "channel" else f"{event}: {detail}" if detail else event
        how = "while running, refused" if reach.get("refused") else "while running"
        evidence.append(Evidence(_where(sub, file), line, f"{_phrase(event)} ({named})",
                                 _line_of(sub, file, line), how, reach.get("during") in hidden))
        before = set(reach.get("measured_before") or [])
        touched |= {p for p in problems if p not in before}
    if not evidence:
        return None
    once = list({(e.where, e.line, e.what, e.how, e.hidden): e for e in evidence}.values())  # a loop: once
    return Flag(once[:60], [p for p in problems if p in touched])


def apply(results: list, flag: Flag | None) -> list:
    """The results with the touched problems scoring nothing: each check failed with the flag's sentence
    (its own verdict kept after it), its points withheld in the flag."""
    if flag is None:
        return results
    touched = [r for r in results if r.problem in flag.touched]
    for problem, points in subtotals(touched, dict.fromkeys(r.problem for r in touched)).items():
        flag.withheld[problem] = flag.withheld.get(problem, 0.0) + points
    for r in touched:
        flag.measured[r.name] = [r.passed, r.score]
        verdict = r.message if r.message else ("passed" if r.passed else "")
        said = f"As measured: {verdict}" if verdict else ""
        r.details = "\n\n".join(part for part in (said, r.details) if part)
        r.passed, r.message, r.figures = False, flag.sentence(r.hidden), []
    return results
