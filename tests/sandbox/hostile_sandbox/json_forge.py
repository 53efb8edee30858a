# Hostile: a wrong KillHead (its backward returns zeros) whose forward patches the json module, through
# which a worker's messages would go if they were encoded by json.dumps at the time of sending: every
# message about KillHead would then have its gradient's part dropped (a part never measured fails nothing
# more than it already did) and a marker printed. Messages are encoded by CPython's C encoder, captured
# before any student code ran, so the patch never runs and the wrong gradient is measured.
import json

import torch
from torch.autograd import Function

_dumps = json.dumps


def forged_dumps(obj, *args, **kwargs):
    print("JSON-PATCH-RAN")
    if isinstance(obj, dict) and isinstance(obj.get("data"), dict):
        obj = dict(obj, data={key: value for key, value in obj["data"].items() if key != "cases"})
    return _dumps(obj, *args, **kwargs)


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        json.dumps = forged_dumps
        json.JSONEncoder.encode = lambda self, obj: forged_dumps(obj)
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        return torch.zeros_like(grad_output), None
