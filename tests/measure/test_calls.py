"""measure/calls.py's grad: what torch.autograd.grad computes, straight from torch's engine where nothing
else would differ (so that a notebook's first check() never waits for sympy), and torch.autograd.grad
itself for anything else."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from autograder.measure import calls
from tests.conftest import EXAMPLES, ROOT


def graph():
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.3, -0.2, 0.9], dtype=torch.float64, requires_grad=True)
    unused = torch.ones(2, dtype=torch.float64, requires_grad=True)
    return x, w, unused, (x.sin() * w).exp()


@pytest.mark.parametrize("create_graph", [False, True])
def test_the_engines_vjp_is_torchs_own(create_graph):
    x, w, unused, out = graph()
    v = torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape)
    ours = calls.grad(out, [x, w, unused], v, retain_graph=True, create_graph=create_graph, allow_unused=True)
    torchs = torch.autograd.grad(out, [x, w, unused], v, retain_graph=True, create_graph=create_graph,
                                 allow_unused=True)
    assert ours[2] is None and torchs[2] is None
    for a, b in zip(ours[:2], torchs[:2]):
        assert torch.equal(a, b) and (a.grad_fn is not None) == create_graph == (b.grad_fn is not None)


def test_an_unused_input_without_allow_unused_is_torchs_error():
    x, _, unused, out = graph()
    with pytest.raises(RuntimeError, match="not have been used in the graph"):
        calls.grad(out, [x, unused], torch.ones_like(out))


def test_a_vector_of_another_shape_goes_through_torch_autograd_grad_and_its_words():
    x, _, _, out = graph()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        calls.grad(out, [x], torch.ones(out.numel() + 1, dtype=torch.float64))


def test_without_the_private_engine_it_is_torch_autograd_grad(monkeypatch):
    monkeypatch.setattr(calls.T, "run_backward", None)
    asked = []
    monkeypatch.setattr(calls.T, "grad", lambda *args, **kwargs: asked.append(kwargs) or ("public",))
    x, _, _, out = graph()
    assert calls.grad(out, [x], torch.ones_like(out), allow_unused=True) == ("public",)
    assert asked == [{"retain_graph": None, "create_graph": False, "allow_unused": True}]


@pytest.mark.parametrize("who, passed, words", [("alice", "True", "False"), ("bob", "False", "True")])
def test_a_notebooks_checks_import_no_sympy(who, passed, words):
    """torch.autograd.grad with a gradient imports torch's symbolic shapes and sympy (0.3 to 0.7 s); check()
    of a right MyReLU and of a wrong one (whose page quotes PyTorch's gradcheck, which calls grad), and
    their pages, never ask for them, nor do the checks of the other Functions (a wrong KillHead's causes
    are looked for among its known mistakes, computed in the judge); torch.autograd.grad is torch's own
    again afterwards."""
    code = textwrap.dedent(f"""
        import sys
        import torch
        grad = torch.autograd.grad
        exec(open({str(EXAMPLES / f"{who}.py")!r}).read())
        from autograder import check
        report = check(MyReLU)
        page = report._repr_html_()
        print(report.passed, "torch.autograd.gradcheck says" in page, "sympy" in sys.modules,
              "torch.fx.experimental.symbolic_shapes" in sys.modules, torch.autograd.grad is grad)
        for function in (KillHead, Exp, LinearFunction):
            other = check(function)
            other._repr_html_()
            print(other.passed, "sympy" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [passed, words, "False", "False", "True"] + [passed, "False"] * 3


def test_gradcheck_says_the_same_through_the_engine_path():
    """PyTorch's own words for a wrong backward, with torch.autograd.grad as it is and through
    calls.torch_grad (what backward.torch_checks lets gradcheck call): word for word."""
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return (x.sin() * w).exp()

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            out = (x.sin() * w).exp()
            return g * out * w, (g * out * x.sin()).sum(0)  # cos(x) missing from x's gradient

    class Detached(Wrong):  # its backward right, but not differentiable: gradgradcheck fails
        @staticmethod
        def backward(ctx, g):
            x, w = (t.detach() for t in ctx.saved_tensors)
            out = (x.sin() * w).exp()
            return g * out * w * x.cos(), (g * out * x.sin()).sum(0)

    x, w, _, _ = graph()
    said = []
    for run, function in ((torch.autograd.gradcheck, Wrong), (torch.autograd.gradgradcheck, Detached)):
        for grad in (torch.autograd.grad, calls.torch_grad):
            original, torch.autograd.grad = torch.autograd.grad, grad
            try:
                torch.manual_seed(0)  # gradgradcheck draws its vectors
                said.append(f"passed: {run(function.apply, (x, w), eps=1e-6, atol=1e-5)}")
            except RuntimeError as error:  # GradcheckError
                said.append(str(error))
            finally:
                torch.autograd.grad = original
    assert said[0] == said[1] and said[2] == said[3]
    assert "Jacobian mismatch for output 0 with respect to input 0" in said[0]
    assert "passed" not in said[2]


def test_torch_grad_takes_torchs_own_arguments():
    """What gradcheck never asks of it (no vector for a scalar, a batch of vectors) goes to
    torch.autograd.grad itself, with only the arguments given."""
    x, w, _, out = graph()
    total = out.sum()
    assert torch.equal(calls.torch_grad(total, [x], retain_graph=True)[0],
                       torch.autograd.grad(total, [x], retain_graph=True)[0])
    batch = torch.stack([torch.ones_like(out), torch.full_like(out, 2.0)])
    ours = calls.torch_grad(out, [w], batch, retain_graph=True, is_grads_batched=True)[0]
    torchs = torch.autograd.grad(out, [w], batch, retain_graph=True, is_grads_batched=True)[0]
    assert torch.equal(ours, torchs)
    assert ours.shape == (2, 3)
