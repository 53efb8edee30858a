"""PyTorch's entry points as they were before any student code ran.

Every measuring module calls torch through `T`, captured when this module is imported (in the clean
parent, before a submission's first cell), so that a submission patching `torch.autograd.grad`, the
tensor operators or `Function.apply` cannot answer for the measurements. The worker's snapshot puts
`T` itself back after every call into the submission (snapshot.py).

This is also the one place that uses torch's private API (names with an underscore): `PRIVATE` lists each
with what it protects. Where a torch lacks one or changed it, a fallback keeps check() and the grader
working without that protection, and `UNAVAILABLE` names what is lost (the grader logs it once).
snapshot.py also names private torch modules whose globals it puts back (torch._C, torch._tensor, torch._ops,
torch.utils._python_dispatch): one a torch lacks is simply not there to protect.
"""

from __future__ import annotations

import contextlib
import sys
from types import SimpleNamespace

import torch

# Where each private name lives, and what the grader loses without it (the protection it gives).
PRIVATE = {
    "torch._C.DisableTorchFunction": "a tensor subclass's __torch_function__ cannot answer when the grader "
                                     "reads a tensor's values, shape or history",
    "torch._C._InferenceMode": "inference mode left on by a submission is turned off before measuring",
    "torch._C._len_torch_function_stack": "torch function modes a submission leaves on (which could answer "
                                          "for any operation) are removed after each call",
    "torch._C._pop_torch_function_stack": "(the same)",
    "torch._C._len_torch_dispatch_stack": "dispatch modes a submission leaves on (which could answer for any "
                                          "operation) are removed after each call",
    "torch._C._pop_torch_dispatch_stack": "(the same)",
    "torch._C._autograd._top_saved_tensors_default_hooks": "default saved-tensor hooks a submission leaves "
                                                           "on are found and removed after each call",
    # Without these two, torch.autograd.graph.saved_tensors_hooks (public) does the same, unprotected.
    "torch._C._autograd._push_saved_tensors_default_hooks": "the hooks that see what forward saves (the "
                                                            "save_for_backward check) are torch's own",
    "torch._C._autograd._pop_saved_tensors_default_hooks": "(the same)",
    # Attributes of torch's objects, read where they are used (a fallback there, nothing lost):
    "<Name>Backward._forward_cls": "the Function that made a graph node (the companion Function check; "
                                   "without it, the node's class name, <Name>Backward, tells)",
    "CustomOpDef._name": "check() knows a custom op by its own name (without it, by the name the cell "
                         "binds it to)",
    # Speed only, nothing lost without it (so not in UNAVAILABLE): a description that starts with "(".
    "torch.autograd.graph._engine_run_backward": "(speed only) a vector-Jacobian product straight from "
                                                 "torch's engine: torch.autograd.grad's shape check imports "
                                                 "sympy, 0.3 to 0.7 s of a notebook's first check()",
}
UNAVAILABLE: list[str] = []  # "what is lost (name)", for each private name this torch lacks


def _private(path: str, fallback):
    """The private torch object at `path`, or `fallback` (noted in UNAVAILABLE) where torch lacks it."""
    obj = sys.modules["torch"]
    try:
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
    except AttributeError:
        what = PRIVATE[path]
        if not what.startswith("("):  # "(the same)", "(speed only)": no protection of its own
            UNAVAILABLE.append(f"{what} (torch {torch.__version__} has no {path})")
        return fallback
    return obj


def forward_class_of(node) -> type | None:
    """The Function class whose backward a graph node runs (None for torch's own nodes)."""
    cls = getattr(node, "_forward_cls", None)
    return cls if isinstance(cls, type) else None


def _function_apply():
    """torch's own Function.apply, unbound, so that a class cannot swap it: a classmethod written in
    Python up to torch 2.14, a C classmethod from 2.15 (both bind with __get__)."""
    for cls in torch.autograd.Function.__mro__:
        if "apply" in vars(cls):
            descriptor = vars(cls)["apply"]
            break

    bind = type(descriptor).__get__

    def apply(function, *args, **kwargs):
        if kwargs and not takes_keywords:
            args, kwargs = _positional(function, args, kwargs)
        return bind(descriptor, None, function)(*args, **kwargs)

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=0):
            return x

    try:  # a keyword argument for forward: torch 2.9 and later pass it on, earlier ones refuse
        bind(descriptor, None, Probe)(torch.zeros(1), k=1)
        takes_keywords = True
    except TypeError:
        takes_keywords = False
    return apply


def _positional(function, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Keyword arguments for forward passed by position, for a torch whose apply takes none (what is left,
    a keyword-only parameter, is still passed by keyword, and refused as that torch refuses it)."""
    import inspect

    forward = inspect.signature(function.forward)
    # forward(ctx, ...) unless the Function has a setup_context of its own
    with_ctx = getattr(function, "setup_context", None) is torch.autograd.Function.setup_context
    bound = forward.bind(*((None,) if with_ctx else ()), *args, **kwargs)
    return tuple(bound.args[1 if with_ctx else 0:]), dict(bound.kwargs)


def _public_push(pack, unpack):
    torch.autograd.graph.saved_tensors_hooks(pack, unpack).__enter__()


def _public_pop():
    torch.autograd.graph.saved_tensors_hooks(None, None).__exit__(None, None, None)


def _no_saved_hooks_query(_: bool):
    """Without torch's query for the top saved-tensor hooks (before torch 2.5): unknown."""
    return UNKNOWN


def _inference_mode_off(_: bool):
    """torch.inference_mode(False) entered and kept (the caller keeps the object alive)."""
    mode = torch.inference_mode(False)
    mode.__enter__()
    return mode


UNKNOWN = object()  # what saved_hooks() answers where torch cannot tell

T = SimpleNamespace(
    Tensor=torch.Tensor,
    Function=torch.autograd.Function,
    tensor=torch.tensor,
    grad=torch.autograd.grad,
    run_backward=_private("torch.autograd.graph._engine_run_backward", None),
    as_subclass=torch.Tensor.as_subclass,
    detach=torch.Tensor.detach,
    to=torch.Tensor.to,
    reshape=torch.Tensor.reshape,
    tolist=torch.Tensor.tolist,
    requires_grad_=torch.Tensor.requires_grad_,
    no_torch_function=_private("torch._C.DisableTorchFunction", contextlib.nullcontext),
    set_grad_enabled=torch.set_grad_enabled,
    is_grad_enabled=torch.is_grad_enabled,
    set_default_dtype=torch.set_default_dtype,
    get_default_dtype=torch.get_default_dtype,
    set_detect_anomaly=torch.autograd.set_detect_anomaly,
    is_anomaly_enabled=torch.is_anomaly_enabled,
    gradcheck=torch.autograd.gradcheck,
    gradgradcheck=torch.autograd.gradgradcheck,
    float64=torch.float64,
    isinstance=isinstance,
    issubclass=issubclass,
    type=type,
    apply=_function_apply(),
    inference_mode=_private("torch._C._InferenceMode", _inference_mode_off),
    is_inference_mode_enabled=torch.is_inference_mode_enabled,
    set_default_device=torch.set_default_device,
    len_function_modes=_private("torch._C._len_torch_function_stack", lambda: 0),
    pop_function_mode=_private("torch._C._pop_torch_function_stack", lambda: None),
    len_dispatch_modes=_private("torch._C._len_torch_dispatch_stack", lambda: 0),
    pop_dispatch_mode=_private("torch._C._pop_torch_dispatch_stack", lambda: None),
    saved_hooks=_private("torch._C._autograd._top_saved_tensors_default_hooks", _no_saved_hooks_query),
    pop_saved_hooks=_private("torch._C._autograd._pop_saved_tensors_default_hooks", _public_pop),
    setrecursionlimit=sys.setrecursionlimit,
    getrecursionlimit=sys.getrecursionlimit,
    no_grad=torch.no_grad,
    fork_rng=torch.random.fork_rng,
    manual_seed=torch.manual_seed,
    float32=torch.float32,
    push_saved_hooks=_private("torch._C._autograd._push_saved_tensors_default_hooks", _public_push),
    BackwardCFunction=torch.autograd.function.BackwardCFunction,
    RuntimeError=RuntimeError,
)
