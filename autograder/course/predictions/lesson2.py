"""Lesson 2's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

QUESTIONS = [
    Question(
        id="2.no-grad-input",
        form="values",
        code="""\
from torch.autograd import Function
runs = []


class Dummy(Function):
    @staticmethod
    def forward(ctx, input):
        runs.append(type(ctx).__name__)
        return input * 3

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3


x_plain = torch.tensor([1.0, 2.0, 3.0])
y = Dummy.apply(x_plain)
(len(runs) == 1, y.requires_grad, y.grad_fn)
""",
        answer=(True, False, None),
        why="""`forward` runs and prints as before: the value is needed whether or not anyone wants
gradients. But no input requires a gradient, so no backward pass can ever reach this node, and autograd
drops it: `y.requires_grad` is `False`, `y.grad_fn` is `None`, and `backward` will never run.

(The print still says `DummyBackward`: the context is created before `forward` runs, and only thrown
away afterwards.)""",
    ),
    Question(
        id="2.del-output",
        form="values",
        code="""\
import gc
import weakref
from torch.autograd import Function


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, input):
        result = torch.sigmoid(input)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result * (1 - result)


class SigmoidStashed(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.result = torch.sigmoid(input)
        return ctx.result

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.result * (1 - ctx.result)


def alive_after_del(function):
    gc.collect()
    gc.disable()  # keep the garbage collector out of the experiment
    try:
        y = function.apply(torch.zeros(1_000_000, requires_grad=True))
        y_ref = weakref.ref(y)
        del y
        return y_ref() is not None
    finally:
        gc.enable()
        gc.collect()


(alive_after_del(Sigmoid), alive_after_del(SigmoidStashed))
""",
        answer=(False, True),
        why="""The output of `Sigmoid` is freed at once; the output of `SigmoidStashed` stays alive until
Python's garbage collector runs.

The output's `grad_fn` is the node, which is the `ctx`, and `ctx.result` points back to the output: a
reference cycle, output, node, output. Python frees most objects as soon as nothing refers to them, but
objects in a cycle always refer to each other, so they wait for the cyclic garbage collector, which runs
from time to time and knows nothing of tensor sizes. Meanwhile the 4 MB, and everything the graph holds,
stays allocated: in a training loop that can be one graph per step, and on a GPU an out-of-memory error.

`save_for_backward` knows when it is given an output of the Function and stores it without the link back
to the node, so there is no cycle; the node is reattached when `backward` reads `ctx.saved_tensors`.""",
    ),
    Question(
        id="2.needs-input-grad",
        form="values",
        code="""\
from torch.autograd import Function
seen = []


class Probe(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, scale):
        seen.append(ctx.needs_input_grad)
        return input @ weight.t() * scale


data = torch.ones(4, 3)
weight = torch.ones(2, 3, requires_grad=True)
y = Probe.apply(data, weight, None, 0.5)
(seen[0], y.requires_grad)
""",
        answer=((False, True, False, False), True),
        why="""It prints `(False, True, False, False)`: `data` does not require a gradient, `weight` does, and
`None` and `0.5` are not tensors. `y` requires a gradient, since one of the inputs does: the `weight`
slot needs a real gradient from `backward`, the other three can get `None`.""",
    ),
]
