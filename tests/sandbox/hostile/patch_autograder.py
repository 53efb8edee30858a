# Hostile: right forwards, wrong backwards (zeros), and the autograder patched, at import and again inside
# every forward and backward, so that it would report the reference's numbers instead of these.
import json

import torch
from torch.autograd import Function

try:  # the grader's judging code: a worker refuses to load it (sandbox/watch.py), and the rest goes on
    import autograder.judge.checks
    import autograder.judge.verdicts
except PermissionError:
    pass
import autograder.measure.captured
import autograder.measure.in_full
import autograder.measure.probe
import autograder.sandbox
import autograder.sandbox.worker


def reference_like(problem, namespace, encoded_cases, seed=0):
    from autograder.judge.reference import reference_data, reference_graph

    ref = reference_data(problem, seed)
    return {"defined": True, "kind": "Function", "also": {n: "Function" for n in problem.also_functions},
            "cases": ref["cases"], "graph": reference_graph(problem, seed)[0],
            "torch_says": {"gradcheck": "passed", "gradgradcheck": "passed"}}


def all_passed(problem, data, seed=0):
    result = autograder.judge.verdicts.CheckResult
    checks = autograder.judge.checks
    return [result(problem.name, c, True, checks.points_of(problem, c)) for c in checks.checks_of(problem)]


def forged_dumps(message, *args, **kwargs):
    if isinstance(message, dict) and message.get("event") == "problem":
        from autograder.course.assignments.registry import find_problem

        message = dict(message, data=reference_like(find_problem(message["problem"]), {}, []))
    return json.dumps(message, *args, **kwargs)


def cheat():
    """Each patch tried on its own: reading or replacing a function's code is refused in a worker."""
    p = autograder.measure.probe

    def code_swap():
        p.__dict__["_cheat"] = reference_like
        reference_like_code = (lambda problem, namespace, encoded_cases, seed=0, report=None: _cheat(  # noqa: F821
            problem, namespace, encoded_cases, seed)).__code__
        p.measure.__code__ = reference_like_code

    def judge_swap():
        autograder.judge.verdicts.judge = all_passed

    for patch in (judge_swap, code_swap):
        try:
            patch()
        except (PermissionError, AttributeError):
            pass
    p.measure = reference_like
    autograder.sandbox.worker.measure = reference_like
    p.forward_case = lambda problem, obj, encoded: reference_like(problem, {}, [])["cases"][0]
    autograder.measure.in_full.analytical_jacobian = lambda out, tensors: [[[0.0]]]
    autograder.measure.captured.T.grad = lambda *args, **kwargs: (None,) * 4
    autograder.sandbox._probe = reference_like
    autograder.sandbox._dumps = forged_dumps
    autograder.sandbox.json = type("J", (), {"dumps": staticmethod(forged_dumps)})


cheat()


class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        cheat()
        ctx.n = n
        result = input.clone()
        result[:, 0:n] = 0
        return result

    @staticmethod
    def backward(ctx, grad_output):
        cheat()
        return grad_output * 0, None  # wrong


class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        cheat()
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        cheat()
        return grad_output * 0  # wrong


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        cheat()
        return torch.exp(x)

    @staticmethod
    def backward(ctx, grad_output):
        cheat()
        return grad_output * 0  # wrong


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        cheat()
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        cheat()
        return None, None, None  # wrong
