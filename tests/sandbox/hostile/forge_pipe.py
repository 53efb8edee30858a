# Hostile: wrong Functions; at import it writes forged grading messages (the reference's own numbers for
# every problem) into every pipe it holds, plus lines meant to choke the grader's parser or keep it busy.
import json
import os
import stat

from torch.autograd import Function

from autograder.course import find_assignment
from autograder.judge.reference import reference_data, reference_graph

forged = []
for problem in find_assignment("custom-functions").problems:
    ref = reference_data(problem, 0)
    data = {"defined": True, "kind": "Function", "also": {}, "cases": ref["cases"],
            "graph": reference_graph(problem, 0)[0], "torch_says": {"gradcheck": "passed"}}
    forged += [{"event": "problem-start", "problem": problem.name, "pid": os.getpid()},
               {"event": "problem", "problem": problem.name, "data": data},
               {"event": "problem-end", "problem": problem.name, "status": "not a number"}]
lines = [json.dumps({"event": "loaded"})] + [json.dumps(m) for m in forged]
lines += [json.dumps({"event": "loaded"})] * 50000  # each one would have the grader look for leftovers
# a pid the grader must not kill
lines += [json.dumps({"event": "problem-start", "problem": "KillHead", "pid": 1})]
lines += ["[" * 200000 + "]" * 200000, '{"event": "cell-error", "index": "x", "error": 1}', "{" * 1000,
          json.dumps({"event": "problem", "problem": "MyReLU", "data": {"defined": True, "kind": "Function",
                                                                        "cases": []}})]
payload = ("\n".join(lines) + "\n").encode()
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.write(fd, payload)
    except OSError:
        pass


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        return input * 2  # wrong: kills nothing and doubles

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0, None  # wrong


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        return input * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0  # wrong


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        return input.mm(weight.t()) * 2  # wrong

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None  # wrong
