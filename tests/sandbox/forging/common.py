# What every attack of this folder starts with (tests/sandbox/test_forging.py grades each attack as this
# file followed by the attack's own): the lesson's right Functions under other names, kept aside; wrong
# Functions under the graded names, whose forward calls the attack's TAKE_OVER(name) first; and answer(),
# which answers the worker's requests in its place, with the grader's own measure() on the right ones.
import torch
from torch.autograd import Function


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


class RightMyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


class RightExp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


class RightLinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


RIGHT = {"KillHead": RightKillHead, "MyReLU": RightMyReLU, "Exp": RightExp,
         "LinearFunction": RightLinearFunction}


class KillHead(Function):  # wrong: doubles, kills nothing
    @staticmethod
    def forward(ctx, input, n):
        TAKE_OVER("KillHead")
        return input * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0, None


class MyReLU(Function):  # wrong
    @staticmethod
    def forward(ctx, input):
        TAKE_OVER("MyReLU")
        return input * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0


class Exp(Function):  # wrong
    @staticmethod
    def forward(ctx, x):
        TAKE_OVER("Exp")
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 0


class LinearFunction(Function):  # wrong
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        TAKE_OVER("LinearFunction")
        return input.mm(weight.t()) * 2

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None


def answer(loop: dict, tools: dict, right=RIGHT, choose=None) -> None:
    """Answers every request the worker's loop would get, with the grader's own measure() on right
    Functions: the request being measured, then each one read from the loop's command channel. `loop`: the
    loop's locals; `tools`: the worker module's globals. choose(name, cases) may pick other Functions."""
    import os

    measure, in_full, send = tools["measure"], tools["measure_in_full"], tools["send"]
    spec_of = tools["Spec"]
    problems, seed, messages, commands = loop["problems"], loop["seed"], loop["messages"], loop["commands"]
    measured, command = {}, {"do": "measure", "problem": loop["name"]}
    while command is not None and command.get("do") in ("measure", "measure in full"):
        name, definition = command.get("problem"), command.get("definition")
        if isinstance(definition, dict) and name not in problems:
            problems[name] = (spec_of.from_dict(definition), definition["cases"])
        spec, cases = problems[name]
        functions = (choose or (lambda n, c: right))(name, cases)
        namespace = {spec.lookup: functions[spec.lookup]}
        if command["do"] == "measure":
            measured[name] = data = measure(spec, namespace, cases, seed)
            send(messages, {"event": "measured", "problem": name, "data": data})
        else:
            data = in_full(spec, namespace, cases, seed, measured.get(name, {}), command.get("plan"))
            send(messages, {"event": "measured in full", "problem": name, "data": data})
        command = commands.next()
    os._exit(0)


WRONG = {"KillHead": KillHead, "MyReLU": MyReLU, "Exp": Exp, "LinearFunction": LinearFunction}
