"""The benchmark's class: what each student wrote, designed to pass or fail each problem.

Each answer is a file of variants/<problem>/<variant>.py: the code below its marker line is the answer
cell; the lines above stand for the notebook's set-up cell (so the file is Python on its own). The
release notebook's unanswered cell ("template") raises NotImplementedError.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

VARIANTS_FOLDER = Path(__file__).parent / "variants"
MARKER = "# -- the answer cell --\n"
RIGHT, WRONG = True, False

# problem -> variant -> whether it passes the problem (in this order: the class's design draws from it)
VARIANTS: dict[str, dict[str, bool]] = {
    "KillHead": {"right": RIGHT, "right-mask": RIGHT, "off-by-one": WRONG, "one-gradient": WRONG},
    "MyReLU": {"right": RIGHT, "right-where": RIGHT, "sign": WRONG, "inverted-mask": WRONG, "float32": WRONG},
    "Exp": {"right": RIGHT, "right-recompute": RIGHT, "detach": WRONG, "numpy": WRONG, "view": WRONG},
    "LinearFunction": {"right": RIGHT, "right-matmul": RIGHT, "factor-2": WRONG, "bias-required": WRONG,
                       "untransposed": WRONG},
}
RIGHT_VARIANTS = {p: [n for n, ok in v.items() if ok] for p, v in VARIANTS.items()}
WRONG_VARIANTS = {p: [n for n, ok in v.items() if not ok] for p, v in VARIANTS.items()}

SLOW_CELL = "# a training run left in the notebook\nimport time\ntime.sleep({seconds})\n"
SCRATCH_ERRORS = [
    "# scratch work\nx = torch.randn(3)\nprint(y)\n",
    "import torchvision  # not installed: ModuleNotFoundError\n",
    "KillHead.apply(torch.randn(2, 2))  # forgot n: TypeError\n",
]


def variant_code(problem: str, variant: str) -> str:
    """The answer cell of variants/<problem>/<variant>.py."""
    text = (VARIANTS_FOLDER / problem / f"{variant}.py").read_text()
    return text.split(MARKER, 1)[1].strip()


@dataclass
class Student:
    id: str
    kind: str  # right, wrong, raising
    answers: dict[str, str]  # problem -> variant name, "template" or "syntax-error"
    extra_cells: list[tuple[int, str]] = field(default_factory=list)  # (insert after answer k, source)
    slow: float = 0.0

    def expected(self, problem: str) -> bool:
        return VARIANTS[problem].get(self.answers[problem], False)

    def describe(self) -> str:
        odd = [f"{p}={v}" for p, v in self.answers.items() if not self.expected(p) or v != "right"]
        extras = [f"slow {self.slow:.1f} s"] if self.slow else []
        extras += ["a cell raising"] * sum(1 for _, src in self.extra_cells if src in SCRATCH_ERRORS)
        return ", ".join(odd + extras) or "all right"


def design_class(n: int, seed: int) -> list[Student]:
    """Mostly right (about 60%), wrong in different ways (about 25%), raising (about 15%), a few slow."""
    rng = random.Random(seed)
    problems = list(VARIANTS)
    n_wrong, n_raising = round(n * 0.25), round(n * 0.15)
    kinds = ["wrong"] * n_wrong + ["raising"] * n_raising + ["right"] * (n - n_wrong - n_raising)
    rng.shuffle(kinds)
    students = []
    for i, kind in enumerate(kinds):
        answers = {p: rng.choice(RIGHT_VARIANTS[p]) for p in problems}
        extra: list[tuple[int, str]] = []
        if kind == "wrong":
            for p in rng.sample(problems, rng.choice((1, 1, 2))):
                answers[p] = rng.choice(WRONG_VARIANTS[p])
        elif kind == "raising":
            how = rng.choice(("template", "syntax-error", "scratch"))
            if how == "scratch":
                extra.append((rng.randrange(len(problems)), rng.choice(SCRATCH_ERRORS)))
            else:
                for p in rng.sample(problems, rng.choice((1, 2, 4) if how == "template" else (1,))):
                    answers[p] = how
        students.append(Student(f"s{i + 1:03d}", kind, answers, extra))
    for s in rng.sample(students, max(2, n // 20) if n >= 4 else 0):
        s.slow = round(rng.uniform(1.0, 2.0), 1)
        s.extra_cells.append((0, SLOW_CELL.format(seconds=s.slow)))
    return students


def answer_source(problem: str, variant: str) -> str:
    if variant == "template":
        return "# YOUR CODE HERE\nraise NotImplementedError()"
    if variant == "syntax-error":  # the right answer, its class line's colon missing
        code = variant_code(problem, "right")
        return code.replace(f"class {problem}(Function):", f"class {problem}(Function)", 1)
    return variant_code(problem, variant)
