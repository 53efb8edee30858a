"""Lesson 1's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

NETWORK = """\
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
"""

QUESTIONS = [
    Question(
        id="1.leaves",
        form="names",
        choices=("x", "y", "w", "b", "z", "loss"),
        code=NETWORK + """\
tensors = {"x": x, "y": y, "w": w, "b": b, "z": z, "loss": loss}
{name for name, t in tensors.items() if t.is_leaf}
""",
        answer={"x", "y", "w", "b"},
        why="""`w` and `b` are leaves: you created them, so they were not computed from anything. `z` and
`loss` are not: both were computed from tracked tensors and have a `grad_fn`.

The surprise is `x` and `y`. By convention every tensor with `requires_grad=False` is a leaf, since it has
no history to record. Only the leaves that *also* require gradients get a `.grad` from `backward()`:
`w` and `b` here.""",
    ),
    Question(
        id="1.second-backward",
        form="choice",
        choices=("same", "twice", "zero"),
        code=NETWORK + """\
loss.backward(retain_graph=True)
first = b.grad.clone()
loss.backward()
second = b.grad
"same" if torch.equal(second, first) else "twice" if torch.allclose(second, 2 * first) else "zero"
""",
        answer="twice",
        why="""The second pass computes exactly the same gradient (nothing changed in between), and
`backward()` **adds** what it computes to the `.grad` already there instead of overwriting it: two passes
give twice the gradient. The last section of this lesson says why PyTorch does this.""",
    ),
    Question(
        id="1.detach-shares",
        form="bool",
        code=NETWORK + """\
z_det = z.detach()
z_det.data_ptr() == z.data_ptr()
""",
        answer=True,
        why="""They share memory. `detach()` copies nothing: it makes a new tensor that views the same data,
without the history. Changing `z_det` in place therefore changes `z` too (and, as the next exercise
shows, it shares `z`'s version counter as well). For an independent copy, write `z.detach().clone()`.""",
    ),
    Question(
        id="1.ones-v",
        form="numbers",
        code="""\
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
first = inp.grad[0, 0].item(), inp.grad[0, 1].item()
out.backward(torch.ones_like(out), retain_graph=True)
second = inp.grad[0, 0].item()
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
(*first, second, inp.grad[0, 0].item())
""",
        answer=(4.0, 2.0, 8.0, 4.0),
        why="""With v all ones, vᵀJ is the sum of the derivatives of all outputs, and each input affects
exactly one output, whose derivative is 2(inp + 1). So the first call gives **4 on the diagonal**
(where `inp` is 1) and **2 everywhere else**. The transpose moves where each output sits, not its derivative.

The second call adds the same values again: 8 on the diagonal. After `zero_()`, the third call gives 4
and 2 again.""",
    ),
    Question(
        id="1.two-paths",
        form="numbers",
        code="""\
t = torch.tensor(3.0, requires_grad=True)
arrivals = []
t.register_hook(lambda grad: arrivals.append(grad))
u = t * t + 2 * t
u.backward()
(t.grad.item(), len(arrivals))
""",
        answer=(8.0, 1),
        why="""du/dt = 2t + 2 = 8. In the graph `t` feeds the multiplication twice and the scaling by 2 once.
Each factor of `t * t` sends back the other factor, 3, which gives 3 + 3 = 6; the term `2 * t` sends back
2. Autograd adds the three contributions **before** anything reaches `t`: the hook is called once, with
8, and `AccumulateGrad` writes that total into `t.grad` once.""",
    ),
]
