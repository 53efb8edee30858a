"""Lesson 7's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

CLIP = """\
from torch.autograd import Function

received = []


class ClipUnmarked(Function):
    @staticmethod
    def forward(x):
        inside = ((x > -1) & (x < 1)).to(x.dtype)
        return x.clamp(-1, 1), inside

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, inside = output
        ctx.save_for_backward(inside)  # no mark_non_differentiable

    @staticmethod
    def backward(ctx, grad_y, grad_inside):
        received.append(grad_inside)
        (inside,) = ctx.saved_tensors
        return grad_y * inside


x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
y, inside = ClipUnmarked.apply(x)
(y * inside).sum().backward()
"""

QUESTIONS = [
    Question(
        id="7.setup-context-inputs",
        form="int",
        code="""\
from torch.autograd import Function

seen = []


class Scale(Function):
    @staticmethod
    def forward(x, factor):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        seen.append(inputs)
        _, ctx.factor = inputs

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


x = torch.tensor([1.0, 2.0], requires_grad=True)
Scale.apply(x, 3.0).sum().backward()
len(seen[0])
""",
        answer=2,
        why="""`inputs` is `(x, 3.0)`: every argument given to `apply`, in order, tensors and non-tensors
alike, so it has 2 entries. The float cannot go through `save_for_backward` (tensors only), so
`setup_context` stores it as an attribute of `ctx`. `backward` returns one value per argument of
`forward` as well: the gradient for `x`, and `None` for the float, which has no gradient.""",
    ),
    Question(
        id="7.unmarked-grad",
        form="numbers",
        code=CLIP + "tuple(received[0].tolist())\n",
        answer=(-1.0, 0.5, 1.0),
        why="""Without `mark_non_differentiable`, `inside` counts as differentiable, so autograd computes the
gradient of the loss with respect to it, the derivative of `y * inside` with respect to `inside`: the
values of `y`, `[-1.0, 0.5, 1.0]`. The multiplication had to save `y` to produce it. `backward` ignores
that argument, so `x.grad` is the same `[0., 1., 0.]`: the result is right, but autograd did work that
nobody used.""",
    ),
    Question(
        id="7.vmap-forward",
        form="values",
        code="""\
from torch.autograd import Function

shapes = []


class LoudExp(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        shapes.append(tuple(x.shape))
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


batch = torch.randn(4, 3, dtype=torch.double)
torch.func.vmap(LoudExp.apply)(batch)
(len(shapes), shapes[0])
""",
        answer=(1, (3,)),
        why="""Once, with shape `(3,)`. `vmap` does not loop over the four samples: it calls `forward` a
single time with a batched tensor that looks like one sample, `(3,)`, while carrying all four inside.
Each operation in `forward` (here `exp`) then runs once on the whole batch. The result comes back with the
batch dimension in front, `(4, 3)`.""",
    ),
]
