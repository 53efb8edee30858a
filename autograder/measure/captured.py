"""PyTorch's entry points as they were before any student code ran.

Every measuring module calls torch through `T`, captured when this module is imported (in the clean
parent, before a submission's first cell), so that a submission patching `torch.autograd.grad`, the
tensor operators or `Function.apply` cannot answer for the measurements. The worker's snapshot puts
`T` itself back after every call into the submission (snapshot.py).
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import torch

T = SimpleNamespace(
    Tensor=torch.Tensor,
    Function=torch.autograd.Function,
    tensor=torch.tensor,
    grad=torch.autograd.grad,
    as_subclass=torch.Tensor.as_subclass,
    detach=torch.Tensor.detach,
    to=torch.Tensor.to,
    reshape=torch.Tensor.reshape,
    tolist=torch.Tensor.tolist,
    requires_grad_=torch.Tensor.requires_grad_,
    no_torch_function=torch._C.DisableTorchFunction,
    set_grad_enabled=torch.set_grad_enabled,
    set_default_dtype=torch.set_default_dtype,
    set_detect_anomaly=torch.autograd.set_detect_anomaly,
    gradcheck=torch.autograd.gradcheck,
    gradgradcheck=torch.autograd.gradgradcheck,
    float64=torch.float64,
    isinstance=isinstance,
    issubclass=issubclass,
    type=type,
    apply=torch.autograd.Function.apply.__func__,
    inference_mode=torch._C._InferenceMode,
    is_inference_mode_enabled=torch.is_inference_mode_enabled,
    set_default_device=torch.set_default_device,
    len_function_modes=torch._C._len_torch_function_stack,
    pop_function_mode=torch._C._pop_torch_function_stack,
    len_dispatch_modes=torch._C._len_torch_dispatch_stack,
    pop_dispatch_mode=torch._C._pop_torch_dispatch_stack,
    saved_hooks=torch._C._autograd._top_saved_tensors_default_hooks,
    pop_saved_hooks=torch._C._autograd._pop_saved_tensors_default_hooks,
    setrecursionlimit=sys.setrecursionlimit,
    no_grad=torch.no_grad,
    fork_rng=torch.random.fork_rng,
    manual_seed=torch.manual_seed,
    float32=torch.float32,
    push_saved_hooks=torch._C._autograd._push_saved_tensors_default_hooks,
    BackwardCFunction=torch.autograd.function.BackwardCFunction,
)
