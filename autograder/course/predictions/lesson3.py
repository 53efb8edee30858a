"""Lesson 3's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

KILLHEAD = """\
from torch import nn
from torch.autograd import Function


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
criterion = nn.MSELoss()


def train(lr, steps=5):
    # The loop of the slides, from the same seeded start; returns the losses and x.
    torch.manual_seed(0)
    y = torch.empty(3, 8).normal_()
    x = torch.empty(y.size()).normal_().requires_grad_()
    optimizer = torch.optim.SGD([x], lr=lr)
    losses = []
    for k in range(steps):
        loss = criterion(killhead(x, 2), y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return losses, x


"""

QUESTIONS = [
    Question(
        id="3.floor",
        form="values",
        code=KILLHEAD + """\
losses, x = train(1.0, steps=105)
torch.manual_seed(0)
y = torch.empty(3, 8).normal_()
x_start = torch.empty(y.size()).normal_()
(round(losses[-1], 4), torch.equal(x[:, :2], x_start[:, :2]))
""",
        answer=(0.2205, True),
        rel_tol=5e-3,  # the floor to 3 digits, 0.221, is right
        why="""The loss does **not** go to 0. Whatever `x` is, the first two columns of `killhead(x, 2)` are
0, so each of those 6 entries always adds (0 - y[i, j])² to the sum. The loss approaches the constant
`y[:, :2].pow(2).sum() / 24`, the mean taken over all 24 entries: 0.2205 for this `y`.

The first two columns of `x` never change. `KillHead.backward` returns 0 in those columns, so `x.grad`
is 0 there and `optimizer.step()` subtracts `lr * 0`: they keep their random starting values forever.
That does no harm here, because the output does not depend on them. The other 18 entries of `x` move
towards `y`, and their share of the loss goes to 0.""",
    ),
    Question(
        id="3.lr",
        form="values",
        choices=("shrinks", "stays", "grows"),
        code=KILLHEAD + """\
floor = train(1.0, steps=200)[0][-1]


def trend(lr):
    losses = train(lr)[0]
    if abs(losses[-1] - losses[0]) < 1e-4:
        return "stays"
    return "shrinks" if losses[-1] < losses[0] else "grows"


one_step = [lr for lr in range(1, 31) if abs(train(float(lr))[0][1] - floor) < 1e-5]
(one_step[0] if len(one_step) == 1 else tuple(one_step), trend(20.0), trend(24.0), trend(30.0))
""",
        answer=(12, "shrinks", "stays", "grows"),
        why="""Every step multiplies the gap to the target by 1 - lr/12.

- `lr=12` makes the factor 0: after one step every kept entry equals its target, and the loss sits on
  the floor from step 1 onwards. It is the only rate that does.
- `lr=20` gives a factor of -2/3. Each step overshoots: the gap changes sign but shrinks, so the loss
  still decreases, more slowly than with 12.
- `lr=24` gives a factor of -1. `x` jumps from one side of the target to the mirror position on the other
  side, forever, and the loss stays where it started.
- `lr=30` gives a factor of -1.5. Each step overshoots by more than the last, and the loss grows without
  limit (it *diverges*).

Small rates (0.1) are safe but slow. The fastest rate is not the largest one.""",
    ),
    Question(
        id="3.dead-params",
        form="values",
        code=KILLHEAD + """\
class KillHeadLayer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, input):
        return killhead(input, self.n)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), KillHeadLayer(2), nn.Tanh(), nn.Linear(6, 1))
inputs = torch.randn(64, 4)
targets = inputs.sum(dim=1, keepdim=True).sin()
criterion(model(inputs), targets).backward()
tuple(int((p.grad == 0).sum()) for p in model.parameters())
""",
        answer=(8, 2, 2, 0),
        why="""Eight entries of `0.weight` (rows 0 and 1), two of `0.bias`, two of `3.weight`, none of
`3.bias`.

- `0.weight` rows 0 and 1 and `0.bias` entries 0 and 1 compute hidden units 0 and 1. `KillHead` sends
  zero gradient back through those units, so nothing reaches the parameters that compute them.
- `3.weight` columns 0 and 1 as well, which is less obvious. Those weights multiply hidden units 0 and 1,
  which after the kill and `tanh` are tanh(0) = 0. The gradient of a weight is its input times the
  incoming gradient, so it is 0.
- `3.bias` gets a normal gradient.

Units 0 and 1 are dead in both directions: whatever you train, the eight weights going into them, the two
biases and the two weights coming out of them never change.""",
    ),
]
