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


def _at_kink(case, kinks):
    """Per tensor input, the mask of its entries that sit exactly on a kink the exercise states."""
    return [_torch.zeros(0, dtype=_torch.bool) if not isinstance(a, dict) else
            _torch.tensor([any(v == at for at, _, _ in kinks) for v in a["values"]], dtype=_torch.bool)
            for a in case]


def _grade(name, reference, cases, double_backward=False, kinks=()):
    """kinks: (at, low, high) where the derivative does not exist and any value from low to high is right;
    finite differences mean nothing there, so a case that sits on one is not gradchecked."""
    fn = globals().get(name)
    assert isinstance(fn, type) and issubclass(fn, _torch.autograd.Function), f"{name} is not a Function"
    returned, patched = [], "backward" in fn.__dict__
    original, backward = fn.__dict__.get("backward"), fn.backward

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
            assert out.shape == expected.shape and out.dtype == _torch.float64, \
                "forward: wrong shape or dtype"
            assert _torch.isclose(out.detach(), expected.detach(), rtol=1e-9, atol=1e-12).all(), \
                "forward: values"
            assert out.grad_fn is not None, "the output has no grad_fn"
            inputs = [a for a in args if isinstance(a, _torch.Tensor)]
            returned.clear()
            jac = _jacobians(out, inputs)
            ref_jac = _jacobians(expected, [a for a in ref_args if isinstance(a, _torch.Tensor)])
            if returned:
                values = returned[0]
                assert len(values) >= len(case), "backward returns"
                assert all(v is None for v in values[len(case):]), "backward returns"
                for v, a in zip(values, case):
                    assert (v is None) if not isinstance(a, dict) else (
                        v is None or (isinstance(v, _torch.Tensor) and list(v.shape) == a["shape"])), \
                        "backward returns"
            masks = [m for m, a in zip(_at_kink(case, kinks), case) if isinstance(a, dict)]
            for j, r, mask in zip(jac, ref_jac, masks):
                right = _torch.isclose(j, r, rtol=1e-9, atol=1e-12)
                for _, low, high in kinks:
                    right |= mask[None, :] & (j >= low) & (j <= high)
                assert right.all(), "gradient differs from the reference"
            if any(m.any() for m in masks):
                continue
            assert _torch.autograd.gradcheck(lambda *a: fn.apply(*a), tuple(_tensors(case)), eps=1e-6,
                                             atol=1e-5)
            if double_backward:
                assert _torch.autograd.gradgradcheck(lambda *a: fn.apply(*a), tuple(_tensors(case)), eps=1e-6,
                                                     atol=1e-5)
    finally:
        if patched:
            fn.backward = original
