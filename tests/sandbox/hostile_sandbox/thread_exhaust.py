# Hostile: right Functions, and as many sleeping threads as the process limit allows, so that the grader
# cannot fork a thread-free copy to measure in. It must fail with that cause, never be measured beside them.
import threading
import time

from torch.autograd import Function

started = 0
while True:
    try:
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        started += 1
    except RuntimeError:
        break
print("threads started:", started)


class KillHead(Function):
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
