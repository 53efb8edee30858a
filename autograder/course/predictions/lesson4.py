"""Lesson 4's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

KILLHEAD = """\
from torch.autograd import Function, gradcheck


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:ctx.n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result = grad_output.clone()
        result[:, 0:ctx.n] = 0
        return result, None


killhead = KillHead.apply
"""

QUESTIONS = [
    Question(
        id="4.slightly-off",
        form="values",
        code=KILLHEAD + """\


class AlmostKillHead(KillHead):
    @staticmethod
    def backward(ctx, grad_output):
        result, _ = KillHead.backward(ctx, grad_output)
        return result * 1.0005, None


x = torch.empty(10, 20, dtype=torch.float64).uniform_(-1, 1).requires_grad_()
(gradcheck(AlmostKillHead.apply, (x, 4), raise_exception=False),
 gradcheck(AlmostKillHead.apply, (x, 4), rtol=1e-4, atol=1e-6, raise_exception=False))
""",
        answer=(True, False),
        why="""With the defaults it passes. The non-zero entries are 1, so the error is 0.0005, below the
allowed 1e-5 + 1e-3 · 1 ≈ 0.001. With `rtol=1e-4, atol=1e-6` the allowed error drops to about 0.0001 and
the bug is caught.

Tightening is safe here only because, in float64, the finite differences of this linear function are
accurate to about 1e-10. Keep the lesson: a pass means "within tolerance"; when a backward is new, try
tighter tolerances too.""",
    ),
    Question(
        id="4.float32",
        form="values",
        code=KILLHEAD + """\
import warnings

warnings.simplefilter("ignore")  # gradcheck's warning about float32, which the lesson shows once
x32 = torch.empty(10, 20).uniform_(-1, 1).requires_grad_()
(gradcheck(killhead, (x32, 4), eps=1e-6, atol=1e-2, raise_exception=False),
 gradcheck(killhead, (x32, 4), eps=1e-3, atol=1e-4, raise_exception=False))
""",
        answer=(False, True),
        why="""(a) fails: with 160 entries checked, some sit where rounding costs the most, about 1.6% for
entries between 0.5 and 1 (33 grid steps instead of 33.55), more than the allowed 0.01 + 0.001 · 1.

(b) passes: the rounding error becomes about 6e-8 / 2e-3 ≈ 3e-5, and `KillHead` is linear, so a large step
adds no truncation error.

Neither is a real fix. A 1% tolerance also accepts a backward that is 1% wrong, and a large step adds the
truncation error ε²/6 · f''' for any non-linear Function. Check in float64.""",
    ),
    Question(
        id="4.which-input",
        form="values",
        code="""\
import re
from torch.autograd import Function, gradcheck
from torch.autograd.gradcheck import GradcheckError


class ScaledProduct(Function):
    @staticmethod
    def forward(ctx, scale, x, y):
        ctx.scale = scale
        ctx.save_for_backward(x, y)
        return scale * x * y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        return None, grad_output * ctx.scale * y, grad_output * ctx.scale  # the last one forgets x


x = torch.rand(3, dtype=torch.float64, requires_grad=True)
y = torch.rand(3, dtype=torch.float64, requires_grad=True)
named = []
for args in ((2.0, x, y), (2.0, x.detach(), y)):
    try:
        gradcheck(ScaledProduct.apply, args)
    except GradcheckError as error:
        named.append(int(re.search(r"with respect to input (\\d+)", str(error)).group(1)))
tuple(named)
""",
        answer=(1, 0),
        why="""First input 1, then input 0, although the faulty gradient is the third value `backward`
returns both times. `gradcheck` numbers only the tensors it perturbs, the ones that require a gradient:
the number `scale` never counts, and once `x` no longer requires a gradient, `y` becomes input 0.
Translate "input k" back to an argument before you look for the bug.""",
    ),
    Question(
        id="4.kink",
        form="values",
        code="""\
from torch.autograd import gradcheck

verdicts = []
for point in (0.0, 3e-7):
    x = torch.tensor([-0.5, point, 0.5], dtype=torch.float64, requires_grad=True)
    for f in (torch.relu, torch.abs):
        verdicts.append(gradcheck(f, (x,), raise_exception=False))
tuple(verdicts)
""",
        answer=(False, True, False, False),
        why="""At exactly 0, ReLU fails: the numerical derivative is (ε - 0)/2ε = 0.5, the analytical one 0.
|x| passes, but only by luck: (|ε| - |-ε|)/2ε = 0 happens to equal PyTorch's convention sign(0) = 0. A
backward returning 1 there, an equally valid choice (a subgradient), would fail.

At 3e-7 both fail: the derivative exists and `backward` is right, but the difference reaches across the
kink: (1.3e-6 - 0)/2e-6 = 0.65 for ReLU, (1.3e-6 - 0.7e-6)/2e-6 = 0.3 for |x|, against a true value of
1.""",
    ),
    Question(
        id="4.calls",
        form="values",
        code="""\
from torch.autograd import Function, gradcheck


class PairSum(Function):
    calls = {"forward": 0, "backward": 0}

    @staticmethod
    def forward(ctx, input):
        PairSum.calls["forward"] += 1
        return input.view(-1, 2).sum(1)

    @staticmethod
    def backward(ctx, grad_output):
        PairSum.calls["backward"] += 1
        return grad_output.repeat_interleave(2)


counts = []
for fast_mode in (False, True):
    PairSum.calls = {"forward": 0, "backward": 0}
    x = torch.randn(100, dtype=torch.float64, requires_grad=True)
    gradcheck(PairSum.apply, (x,), fast_mode=fast_mode)
    counts += [PairSum.calls["forward"], PairSum.calls["backward"]]
tuple(counts)
""",
        answer=(202, 102, 4, 4),
        why="""In the default (slow) mode: 2D + 2 forwards (two per input entry, plus a couple for side
checks) and 2M + 2 backwards: one per output entry, all done **twice**, since `gradcheck` builds the
analytical Jacobian a second time to check that `backward` gives the same answer each time it runs (the
check `nondet_tol` loosens, below). For D = 100 and M = 50: 202 and 102.

With `fast_mode=True`: 4 and 4, whatever D.""",
    ),
]
