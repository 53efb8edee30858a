# Hostile: wrong Functions (backward returns zeros), and trace and profile hooks installed at import that swap
# right ones' measurements into what the grader's measure() returns. With the hooks cleared before
# measuring, it scores as the wrong Functions do.
import sys
import threading

import torch
from torch.autograd import Function


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        return torch.zeros_like(grad_output), None


class RightKillHead(Function):
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


def swap(frame, event, arg):
    """When the grader's measure() returns KillHead's data, put a right Function's measurements in it."""
    if event == "return" and frame.f_code.co_name == "measure" and isinstance(arg, dict) and "cases" in arg:
        from autograder.measure import probe

        local = frame.f_locals
        if getattr(local.get("problem"), "lookup", "") == "KillHead":
            right = probe.measure(local["problem"], {"KillHead": RightKillHead}, local["encoded_cases"],
                                  local["seed"])
            arg.clear()
            arg.update(right)
    return swap


try:  # refused in a worker (sandbox/watch.py); were they not, they are cleared before measuring
    sys.setprofile(swap)
    sys.settrace(swap)
except PermissionError:
    print("hooks refused")
threading.setprofile(swap)
