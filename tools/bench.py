"""Benchmark: this autograder against `nbgrader autograde` on one generated class, on this machine.

    python -m tools.bench [--n 60] [--keep DIR] [--seed 0] [--jobs N]      (make bench)

1. Creates .venv-bench (nbgrader, torch, ipykernel, pinned below) if it is missing: nbgrader is a
   benchmark dependency only, never a runtime one.
2. Generates a class for the custom-functions assignment: an nbgrader course (a source notebook whose
   answer cells carry nbgrader metadata and whose test cells hold hidden tests, one per problem, worth
   that problem's points), `nbgrader generate_assignment`, and N submitted notebooks made from the
   release version: mostly right, some wrong in different ways, some raising, a few slow. Each
   submission is designed to pass or fail each problem, which gives a third opinion on every verdict.
3. Times `python -m autograder grade --force --quiet`, then `nbgrader autograde` (one kernel per notebook,
   the bench venv's Python), then our grader again, on the same notebooks: our time is the mean of the
   runs before and after nbgrader's, so a change of load during the run falls on both tools alike.
   Wall and CPU time (of all the processes each tool started) are both reported.
4. Maps both to pass/fail per (student, problem): ours passes a problem when all its checks pass;
   nbgrader's when its hidden test cell scores full points. The hidden tests ask the same questions as
   our checks (forward equals the reference in shape, dtype float64 and value; backward returns one
   value per input, shaped like it or None; the Jacobian from backward equals the reference's;
   gradcheck; gradgradcheck for Exp), on the same inputs and with the same tolerances.
5. Prints wall times, per-submission times, the ratio and the agreement, and ends with the line
   `speedup vs nbgrader: <ratio>x, verdicts identical: yes|no`.

Timings are wall clock on a shared machine: the load average is printed before, between and after.
`--overhead` measures only where our grader's time goes (tools/bench_overhead.py), without nbgrader.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_VENV = ROOT / ".venv-bench"
# torch 2.13.0 is the only version that installs locally in seconds (a CPU build); pin it exactly.
BENCH_PINS = ("nbgrader==0.9.6", "torch==2.13.0", "numpy==2.4.6", "ipykernel==7.4.0")
ASSIGNMENT = "custom-functions"
KERNEL = "autograd-bench"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def log(message: str = "") -> None:
    print(message, flush=True)


# -- the bench environment ---------------------------------------------------------------------------

def ensure_bench_venv() -> Path:
    """.venv-bench with nbgrader, created (a few minutes, once) when missing or its pins changed."""
    stamp = BENCH_VENV / ".bench-pins"
    wanted = "\n".join(BENCH_PINS) + "\n"
    if (BENCH_VENV / "bin" / "nbgrader").exists() and stamp.exists() and stamp.read_text() == wanted:
        return BENCH_VENV / "bin" / "python"
    log(f"bench: creating {BENCH_VENV.name} with {', '.join(BENCH_PINS)} (once; a few minutes)")
    if not (BENCH_VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
    pip = [str(BENCH_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + list(BENCH_PINS), check=True)
    stamp.write_text(wanted)
    return BENCH_VENV / "bin" / "python"


# -- what the students write ---------------------------------------------------------------------------
# Each variant: (code of the answer cell, whether it passes the problem). "template" is the unanswered
# cell of the release notebook, which raises NotImplementedError.

RIGHT, WRONG = True, False

VARIANTS: dict[str, dict[str, tuple[str, bool]]] = {
    "KillHead": {
        "right": ('''
class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result = grad_output.clone()
        result[:, 0:ctx.n] = 0
        return result, None
''', RIGHT),
        "right-mask": ('''
class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        mask = torch.ones_like(input)
        mask[:, :n] = 0
        ctx.save_for_backward(mask)
        return input * mask

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None
''', RIGHT),
        "off-by-one": ('''
class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result = grad_output.clone()
        result[:, 1:ctx.n + 1] = 0  # kills the wrong columns
        return result, None
''', WRONG),
        "one-gradient": ('''
class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result = grad_output.clone()
        result[:, 0:ctx.n] = 0
        return result  # no None for n
''', WRONG),
    },
    "MyReLU": {
        "right": ('''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input
''', RIGHT),
        "right-where": ('''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        output = torch.where(input > 0, input, torch.zeros_like(input))
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        output, = ctx.saved_tensors
        return grad_output * (output > 0).to(grad_output.dtype)
''', RIGHT),
        "sign": ('''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return -grad_input  # sign flipped
''', WRONG),
        "inverted-mask": ('''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input > 0] = 0  # keeps the gradient where it should be zero
        return grad_input
''', WRONG),
        "float32": ('''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0).float()  # loses float64

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone().to(input.dtype)
        grad_input[input < 0] = 0
        return grad_input
''', WRONG),
    },
    "Exp": {
        "right": ('''
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result
''', RIGHT),
        "right-recompute": ('''
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.exp(x)
''', RIGHT),
        "detach": ('''
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result.detach()  # cuts the second-order graph
''', WRONG),
        "numpy": ('''
import numpy as np


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * torch.from_numpy(np.array(result.detach().numpy()))  # invisible to autograd
''', WRONG),
        "view": ('''
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x).view(-1, 2)  # raises unless x has an even number of entries
        ctx.save_for_backward(result)
        return result.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result.view_as(grad_output)
''', WRONG),
    },
    "LinearFunction": {
        "right": ('''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias
''', RIGHT),
        "right-matmul": ('''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight)
        ctx.has_bias = bias is not None
        out = input @ weight.T
        return out + bias if bias is not None else out

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        grad_bias = grad_output.sum(dim=0) if ctx.has_bias else None
        return grad_output @ weight, grad_output.T @ input, grad_bias
''', RIGHT),
        "factor-2": ('''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = 2 * grad_output.t().mm(input)  # factor 2
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias
''', WRONG),
        "bias-required": ('''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        return input.mm(weight.t()) + bias.unsqueeze(0)  # fails without a bias

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        return grad_output.mm(weight), grad_output.t().mm(input), grad_output.sum(0)
''', WRONG),
        "untransposed": ('''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_bias = grad_output.sum(0) if bias is not None else None
        return grad_output.mm(weight), input.t().mm(grad_output), grad_bias  # weight gradient transposed
''', WRONG),
    },
}
RIGHT_VARIANTS = {p: [n for n, (_, ok) in v.items() if ok] for p, v in VARIANTS.items()}
WRONG_VARIANTS = {p: [n for n, (_, ok) in v.items() if not ok] for p, v in VARIANTS.items()}

# The references of the hidden tests, written with PyTorch's own operations (as in the assignment).
REFERENCES = {
    "KillHead": "def _reference(input, n):\n    keep = torch.ones_like(input)\n    keep[:, :n] = 0\n"
                "    return input * keep\n",
    "MyReLU": "def _reference(input):\n    return input.clamp(min=0)\n",
    "Exp": "def _reference(x):\n    return torch.exp(x)\n",
    "LinearFunction": "def _reference(input, weight, bias=None):\n    out = input @ weight.t()\n"
                      "    return out if bias is None else out + bias\n",
}

# A read-only cell of the assignment: the hidden tests call it. It asks our checks' questions.
HELPERS = '''\
# Grading helpers (read-only): the hidden tests below call _grade.
import torch as _torch


def _tensors(case):
    return [_torch.tensor(a["values"], dtype=_torch.float64).reshape(a["shape"]).requires_grad_()
            if isinstance(a, dict) else a for a in case]


def _jacobians(out, inputs):
    """One (out.numel() x input.numel()) matrix per input, a vector-Jacobian product per row."""
    jac = [_torch.zeros(out.numel(), t.numel(), dtype=_torch.float64) for t in inputs]
    for i in range(out.numel()):
        v = _torch.zeros(out.numel(), dtype=_torch.float64)
        v[i] = 1.0
        grads = _torch.autograd.grad(out, inputs, v.reshape(out.shape), retain_graph=True, allow_unused=True)
        for k, g in enumerate(grads):
            if g is not None:
                jac[k][i] = g.reshape(-1)
    return jac


def _grade(name, reference, cases, double_backward=False):
    fn = globals().get(name)
    assert isinstance(fn, type) and issubclass(fn, _torch.autograd.Function), f"{name} is not a Function"
    returned, patched = [], "backward" in fn.__dict__
    original, backward = fn.__dict__.get("backward"), getattr(fn, "backward")

    def recording(ctx, *grads):
        result = backward(ctx, *grads)
        returned.append(result if isinstance(result, tuple) else (result,))
        return result

    if patched:
        fn.backward = staticmethod(recording)
    try:
        for case in cases:
            args, ref_args = _tensors(case), _tensors(case)
            out, expected = fn.apply(*args), reference(*ref_args)
            assert isinstance(out, _torch.Tensor), "forward does not return a tensor"
            assert out.shape == expected.shape and out.dtype == _torch.float64, "forward: wrong shape or dtype"
            assert _torch.isclose(out.detach(), expected.detach(), rtol=1e-9, atol=1e-12).all(), "forward: values"
            assert out.grad_fn is not None, "the output has no grad_fn"
            inputs = [a for a in args if isinstance(a, _torch.Tensor)]
            returned.clear()
            jac = _jacobians(out, inputs)
            ref_jac = _jacobians(expected, [a for a in ref_args if isinstance(a, _torch.Tensor)])
            if returned:
                values = returned[0]
                assert len(values) >= len(case) and all(v is None for v in values[len(case):]), "backward returns"
                for v, a in zip(values, case):
                    assert (v is None) if not isinstance(a, dict) else (
                        v is None or (isinstance(v, _torch.Tensor) and list(v.shape) == a["shape"])), \\
                        "backward returns"
            for j, r in zip(jac, ref_jac):
                assert _torch.isclose(j, r, rtol=1e-9, atol=1e-12).all(), "gradient differs from the reference"
            assert _torch.autograd.gradcheck(lambda *a: fn.apply(*a), tuple(_tensors(case)), eps=1e-6, atol=1e-5)
            if double_backward:
                assert _torch.autograd.gradgradcheck(lambda *a: fn.apply(*a), tuple(_tensors(case)), eps=1e-6,
                                                     atol=1e-5)
    finally:
        if patched:
            setattr(fn, "backward", original)
'''

SLOW_CELL = "# a training run left in the notebook\nimport time\ntime.sleep({seconds})\n"
SCRATCH_ERRORS = [
    "# scratch work\nx = torch.randn(3)\nprint(y)\n",
    "import torchvision  # not installed: ModuleNotFoundError\n",
    "KillHead.apply(torch.randn(2, 2))  # forgot n: TypeError\n",
]


@dataclass
class Student:
    id: str
    kind: str  # right, wrong, raising
    answers: dict[str, str]  # problem -> variant name, "template" or "syntax-error"
    extra_cells: list[tuple[int, str]] = field(default_factory=list)  # (insert after answer k, source)
    slow: float = 0.0

    def expected(self, problem: str) -> bool:
        variant = self.answers[problem]
        return variant in VARIANTS[problem] and VARIANTS[problem][variant][1]

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
    code = VARIANTS[problem]["right"][0].strip()
    if variant == "syntax-error":
        return code.replace(f"class {problem}(Function):", f"class {problem}(Function)", 1)  # colon missing
    return VARIANTS[problem][variant][0].strip()


# -- the nbgrader course -----------------------------------------------------------------------------

def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
            "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def source_notebook(assignment, seed: int):
    """The instructor's notebook: answers between solution markers, hidden tests per problem."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from autograder.judge.verdicts import encoded_cases

    cells = [new_markdown_cell("# Lesson 2: writing a custom Function\n\nImplement the four Functions below."),
             new_code_cell("import torch\nfrom torch.autograd import Function"),
             new_code_cell(HELPERS, metadata=_meta("helpers", locked=True))]
    for problem in assignment.problems:
        cells.append(new_markdown_cell(f"## {problem.name}\n\n{problem.summary}."))
        answer = VARIANTS[problem.name]["right"][0].strip()
        cells.append(new_code_cell(f"### BEGIN SOLUTION\n{answer}\n### END SOLUTION",
                                   metadata=_meta(f"{problem.name}-answer", solution=True)))
        cases = repr(encoded_cases(problem, seed))
        hidden = (f"{REFERENCES[problem.name]}\n_cases = {cases}\n"
                  f"_grade({problem.name!r}, _reference, _cases, double_backward={problem.double_backward})")
        cells.append(new_code_cell(
            f"# {problem.name} is graded by hidden tests.\n### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS",
            metadata=_meta(f"{problem.name}-tests", grade=True, locked=True, points=problem.max_score)))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": KERNEL, "display_name": "Python 3 (bench)", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return nb


def student_notebook(release, student: Student):
    import nbformat
    from nbformat.v4 import new_code_cell

    nb = nbformat.from_dict(json.loads(json.dumps(release)))
    cells, k = [], -1
    for cell in nb.cells:
        cells.append(cell)
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("-answer"):
            problem = grade_id[: -len("-answer")]
            cell.source = answer_source(problem, student.answers[problem])
            k += 1
            cells += [new_code_cell(src) for after, src in student.extra_cells if after == k]
    nb.cells = cells
    return nb


def write_course(course: Path, assignment, students: list[Student], seed: int, bench_python: Path) -> Path:
    """The nbgrader course with every submission in submitted/; returns a folder of the same
    notebooks named <student>.ipynb for our grader."""
    import nbformat

    course.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(textwrap.dedent(f"""\
        c = get_config()  # noqa: F821
        c.CourseDirectory.root = {str(course)!r}
        c.CourseDirectory.course_id = "autograd-bench"
        c.Execute.timeout = 60
        """))
    kernel = course / "jupyter-data" / "kernels" / KERNEL
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [str(bench_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (bench)", "language": "python"}))
    source = course / "source" / ASSIGNMENT / NOTEBOOK
    source.parent.mkdir(parents=True)
    nbformat.write(source_notebook(assignment, seed), source)
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    ours = course / "ours"
    ours.mkdir()
    for s in students:
        nb = student_notebook(release, s)
        path = course / "submitted" / s.id / ASSIGNMENT / NOTEBOOK
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
        shutil.copyfile(path, ours / f"{s.id}.ipynb")
    return ours


def nbgrader_env(course: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "PYTHONPATH", "VIRTUAL_ENV"))}
    env.update(JUPYTER_DATA_DIR=str(course / "jupyter-data"), JUPYTER_CONFIG_DIR=str(course / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(course / "jupyter-runtime"), JUPYTER_PATH=str(course / "jupyter-data"),
               JUPYTER_PLATFORM_DIRS="1", PATH=f"{BENCH_VENV / 'bin'}:{env.get('PATH', '')}")
    return env


def nbgrader(course: Path, *args: str, log_file: Path | None = None) -> None:
    command = [str(BENCH_VENV / "bin" / "nbgrader"), *args]
    with open(log_file or course / "nbgrader-setup.log", "a") as out:
        done = subprocess.run(command, cwd=course, env=nbgrader_env(course), stdout=out, stderr=subprocess.STDOUT,
                              check=False)
    if done.returncode != 0:
        tail = (log_file or course / "nbgrader-setup.log").read_text()[-3000:]
        raise SystemExit(f"bench: `nbgrader {' '.join(args)}` failed (exit {done.returncode}):\n{tail}")


NBGRADER_SCORES = """
import json, sys
from nbgrader.api import Gradebook
rows = []
with Gradebook("sqlite:///" + sys.argv[1]) as gb:
    for sub in gb.assignment_submissions(sys.argv[2]):
        for nb in sub.notebooks:
            for g in nb.grades:
                rows.append([sub.student_id, g.name, g.score, g.max_score])
print(json.dumps(rows))
"""


def nbgrader_verdicts(course: Path, bench_python: Path) -> dict[tuple[str, str], bool]:
    done = subprocess.run([str(bench_python), "-c", NBGRADER_SCORES, str(course / "gradebook.db"), ASSIGNMENT],
                          env=nbgrader_env(course), capture_output=True, text=True, check=True)
    return {(student, grade_id.removesuffix("-tests")): score is not None and score >= max_score > 0
            for student, grade_id, score, max_score in json.loads(done.stdout)}


def our_verdicts(out: Path, students: list[Student]) -> dict[tuple[str, str], bool]:
    verdicts = {}
    for s in students:
        result = json.loads((out / s.id / "results.json").read_text())
        problems: dict[str, bool] = {}
        for test in result["tests"]:
            problem = test["name"].split(": ", 1)[0]
            problems[problem] = problems.get(problem, True) and test["status"] == "passed"
        verdicts.update({(s.id, p): ok for p, ok in problems.items()})
    return verdicts


def intervals(start: float, files: list[Path]) -> list[float]:
    """Seconds between one submission's last file and the next one's (the first from the start): the
    time each submission took for nbgrader, which grades one at a time; for our parallel workers, how
    often a submission was finished."""
    stamps = sorted(f.stat().st_mtime for f in files)
    return [b - a for a, b in zip([start, *stamps[:-1]], stamps)]


# -- timing ------------------------------------------------------------------------------------------

def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} cores)"


def warm_caches(bench_python: Path) -> None:
    """Both tools' torch read once from disk, so neither run pays for the other's cold page cache."""
    for python in (ROOT / ".venv" / "bin" / "python", bench_python):
        subprocess.run([str(python), "-c", "import torch"], check=True)


def run_nbgrader(course: Path, students: list[Student]) -> tuple[float, list[float]]:
    start, t0 = time.time(), time.perf_counter()
    nbgrader(course, "autograde", ASSIGNMENT, "--force", log_file=course / "nbgrader-autograde.log")
    wall = time.perf_counter() - t0
    return wall, intervals(start, [course / "autograded" / s.id / ASSIGNMENT / NOTEBOOK for s in students])


def run_ours(ours: Path, out: Path, jobs: int | None, students: list[Student]) -> tuple[float, list[float]]:
    command = [str(ROOT / ".venv" / "bin" / "python"), "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
               "--out", str(out), "--force", "--quiet", str(ours)]
    if jobs:
        command[5:5] = ["--jobs", str(jobs)]
    env = dict(os.environ, PYTHONHASHSEED="0")
    start, t0 = time.time(), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"bench: the autograder failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return wall, intervals(start, [out / s.id / "results.json" for s in students])


def timed(run, *args):
    """What run returned, and the CPU seconds (user + system) of the processes it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spread(values: list[float]) -> str:
    if not values:
        return "n/a"
    q = statistics.quantiles(values, n=10, method="inclusive") if len(values) > 1 else values * 9
    return f"median {statistics.median(values):.2f} s, p90 {q[8]:.2f} s, max {max(values):.2f} s"


# -- the run -----------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="notebooks in the class (default 60)")
    parser.add_argument("--keep", type=Path, help="make the class and both tools' outputs here and keep them")
    parser.add_argument("--seed", type=int, default=0, help="seed of the class's design")
    parser.add_argument("--jobs", type=int, default=None, help="our grader's workers (default: the grader's own, twice the cores)")
    parser.add_argument("--overhead", action="store_true",
                        help="only measure where our grader's time goes (no nbgrader): startup, forks, cells, "
                             "probes, judging, feedback")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("--n must be at least 1")
    if args.overhead:
        from tools.bench_overhead import main as overhead

        return overhead()

    from autograder.course import find_assignment
    from autograder.sandbox import default_workers

    assignment = find_assignment(ASSIGNMENT)
    bench_python = ensure_bench_venv()
    if args.keep:
        if args.keep.exists() and any(args.keep.iterdir()):
            parser.error(f"--keep {args.keep} is not empty")
        work = args.keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="autograder-bench-"))
    try:
        students = design_class(args.n, args.seed)
        course = work / "course"
        ours = write_course(course, assignment, students, 0, bench_python)
        counts = {k: sum(s.kind == k for s in students) for k in ("right", "wrong", "raising")}
        log(f"class: {args.n} notebooks for {ASSIGNMENT} ({counts['right']} right, {counts['wrong']} wrong, "
            f"{counts['raising']} raising; {sum(bool(s.slow) for s in students)} of them slow, sleeping "
            f"{sum(s.slow for s in students):.1f} s in all) in {work}")
        warm_caches(bench_python)
        log(f"load average before: {load_average()}")

        out1, out2 = work / "autograder-out", work / "autograder-out-2"
        log("running python -m autograder grade --force --quiet (before nbgrader) ...")
        (our_wall1, our_per1), our_cpu1 = timed(run_ours, ours, out1, args.jobs, students)
        log(f"load average: {load_average()}")
        log("running nbgrader autograde (one kernel per notebook, one notebook at a time) ...")
        (nb_wall, nb_per), nb_cpu = timed(run_nbgrader, course, students)
        log(f"load average: {load_average()}")
        log("running python -m autograder grade --force --quiet (after nbgrader) ...")
        (our_wall2, our_per2), our_cpu2 = timed(run_ours, ours, out2, args.jobs, students)
        log(f"load average after: {load_average()}")
        our_wall, our_cpu = (our_wall1 + our_wall2) / 2, (our_cpu1 + our_cpu2) / 2

        theirs = nbgrader_verdicts(course, bench_python)
        mine, again = our_verdicts(out1, students), our_verdicts(out2, students)
        pairs = [(s.id, p.name) for s in students for p in assignment.problems]
        by_id = {s.id: s for s in students}
        differ = [(sid, p) for sid, p in pairs if mine.get((sid, p)) != theirs.get((sid, p))]
        unexpected = [(sid, p) for sid, p in pairs if mine.get((sid, p)) != by_id[sid].expected(p)]
        unstable = [pair for pair in pairs if mine.get(pair) != again.get(pair)]
        identical = not differ and not unstable and len(theirs) == len(pairs)

        log("")
        log(f"nbgrader autograde: {nb_wall:8.2f} s wall, {nb_cpu:7.2f} s CPU for {args.n} notebooks = "
            f"{nb_wall / args.n:.3f} s per submission; one submission after another: {spread(nb_per)}")
        log(f"autograder grade:   {our_wall:8.2f} s wall, {our_cpu:7.2f} s CPU for {args.n} notebooks = "
            f"{our_wall / args.n:.3f} s per submission (mean of the runs before and after nbgrader: "
            f"{our_wall1:.2f} s and {our_wall2:.2f} s); {args.jobs or default_workers()} workers, a submission "
            f"finished every: {spread(our_per1 + our_per2)}")
        log(f"ratio: {nb_wall / our_wall:.1f}x in wall time, {nb_cpu / our_cpu:.1f}x in CPU time")
        passed = sum(mine.get(p, False) for p in pairs)
        log(f"verdicts: {len(pairs)} (student, problem) pairs, {passed} passed by the autograder, "
            f"{sum(theirs.get(p, False) for p in pairs)} by nbgrader; the tools differ on {len(differ)}; the "
            f"autograder differs from the class's design on {len(unexpected)}")
        for sid, p in differ:
            log(f"  differ: {sid} {p}: autograder {'pass' if mine.get((sid, p)) else 'fail'}, nbgrader "
                f"{'pass' if theirs.get((sid, p)) else 'fail' if (sid, p) in theirs else 'missing'} "
                f"({by_id[sid].describe()})")
        for sid, p in unstable:
            log(f"  unstable: {sid} {p}: the autograder's two runs disagree")
        for sid, p in unexpected:
            log(f"  unexpected: {sid} {p}: autograder {'pass' if mine.get((sid, p)) else 'fail'}, designed to "
                f"{'pass' if by_id[sid].expected(p) else 'fail'} ({by_id[sid].describe()})")
        if args.keep:
            log(f"kept: {work} (course/ is the nbgrader course; autograder-out/ and autograder-out-2/ our results)")
        log(f"speedup vs nbgrader: {nb_wall / our_wall:.1f}x, verdicts identical: {'yes' if identical else 'no'}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
