"""Wrong Functions, one per mistake the grader must diagnose, shared by the tests.

Each entry: (problem, source defining the student's code, the check that must fail, a phrase its
diagnosis must contain). The sources are what students really write. RIGHT holds right but unusual ones
that keep full marks; ISSUE22 the attempts of issue 22 (in CASES too), for which none of the MISLEADING
sentences may appear; SWISH an instructor's own problem's wrong Function, and SWISH_RIGHT its fix.
"""

import torch

HEADER = "import numpy as np\nimport torch\nfrom torch.autograd import Function\n"

KILLHEAD = '''
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
        result[:, {cols}] = 0
        return {returns}
'''

EXP = '''
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        {forward}

    @staticmethod
    def backward(ctx, grad_output):
        {backward}
'''

SOMETHING_SWAPPED = '''
class Something(Function):
    @staticmethod
    def forward(ctx, input1, input2):
        ctx.save_for_backward(input1, input2)
        return (input1 * input2).abs()

    @staticmethod
    def backward(ctx, grad_output):
        input1, input2 = ctx.saved_tensors
        return grad_output * input1.abs() * input2.sign(), grad_output * input1.sign() * input2.abs()
'''

RELU_SIGN = '''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return -grad_input
'''

LINEAR_TRANSPOSED = '''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        return output if bias is None else output + bias

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_bias = grad_output.sum(0) if bias is not None else None
        return grad_output.mm(weight), input.t().mm(grad_output), grad_bias
'''

SQUARE = '''
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        {forward}

    @staticmethod
    def backward(ctx, grad_out):
        {backward}
'''

SINH_BAD = '''
class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.expx, ctx.expnegx = expx, expnegx  # intermediates stashed, not returned as outputs
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * (ctx.expx + ctx.expnegx) / 2


def sinh(x):
    return Sinh.apply(x)
'''

SINH_TUPLE = '''
class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_exp, grad_negexp):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2 + grad_exp * expx - grad_negexp * expnegx


def sinh(x):
    return Sinh.apply(x)  # the whole tuple, not its first output
'''

LOGSUMEXP = '''
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, input):
        {forward}
        ctx.save_for_backward(input, result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        input, result = ctx.saved_tensors
        {backward}
'''
LSE_STABLE = ("m = input.amax(dim=-1, keepdim=True)\n"
              "        result = m.squeeze(-1) + (input - m).exp().sum(-1).log()")
LSE_GRAD = "return grad_output.unsqueeze(-1) * (input - result.unsqueeze(-1)).exp()"

SOFTMAX_CE = '''
class SoftmaxCrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, target):
        {forward}
        ctx.save_for_backward(logits, target)
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        logits, target = ctx.saved_tensors
        p = torch.softmax(logits, dim=1)
        {backward}
'''
CE_STABLE = "loss = -torch.log_softmax(logits, dim=1)[torch.arange(len(target)), target].mean()"
CE_NAIVE = ("p = logits.exp() / logits.exp().sum(dim=1, keepdim=True)  # no max subtracted\n"
            "        loss = -p[torch.arange(len(target)), target].log().mean()")
CE_ONE_HOT = "p[torch.arange(len(target)), target] -= 1\n        "
CE_GRAD = CE_ONE_HOT + "return grad_output * p / len(target), None"

LAYERNORM = '''
class LayerNorm(Function):
    @staticmethod
    def forward(ctx, input, eps=1e-5):
        mean = input.mean(-1, keepdim=True)
        rstd = ({variance} + eps).rsqrt()
        normalised = (input - mean) * rstd
        ctx.save_for_backward(normalised, rstd)
        return normalised

    @staticmethod
    def backward(ctx, grad_output):
        normalised, rstd = ctx.saved_tensors
        g = grad_output
        return {backward}
'''
LN_VARIANCE = "((input - mean) ** 2).mean(-1, keepdim=True)"
LN_GRAD = "rstd * (g - g.mean(-1, keepdim=True) - normalised * (g * normalised).mean(-1, keepdim=True)), None"

# The Stack Overflow answer's Function (see seeds), scipy.signal replaced by NumPy stand-ins of the same
# meaning; {grad_input} and {grad_filter} are its two backward lines.
SCIPY_CONV = '''
def correlate2d(in1, in2, mode="valid"):
    if mode == "full":
        kh, kw = in2.shape
        in1 = np.pad(in1, ((kh - 1, kh - 1), (kw - 1, kw - 1)))
    windows = np.lib.stride_tricks.sliding_window_view(in1, in2.shape)
    return np.einsum("ijkl,kl->ij", windows, in2)


def convolve2d(in1, in2, mode="valid"):
    return correlate2d(in1, in2[::-1, ::-1], mode)


class ScipyConv2dFunction(Function):
    @staticmethod
    def forward(ctx, input, filter):
        result = correlate2d(input.numpy(), filter.numpy(), mode='valid')
        ctx.save_for_backward(input, filter)
        return input.new(result)

    @staticmethod
    def backward(ctx, grad_output):
        input, filter = ctx.saved_tensors
        grad_input = {grad_input}
        grad_filter = {grad_filter}
        return grad_output.new(grad_input), grad_output.new(grad_filter)
'''
CONV_GRAD_INPUT = "convolve2d(grad_output.numpy(), filter.numpy(), mode='full')"
CONV_GRAD_FILTER = "correlate2d(input.numpy(), grad_output.numpy(), mode='valid')"

# Right answers to lesson 4's problems beyond Something, for the test that every right answer passes.
RIGHT_GRADCHECK = (LOGSUMEXP.format(forward=LSE_STABLE, backward=LSE_GRAD)
                   + LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD)
                   + SCIPY_CONV.format(grad_input=CONV_GRAD_INPUT, grad_filter=CONV_GRAD_FILTER))

CASES = [
    ("KillHead", KILLHEAD.format(cols="1:ctx.n + 1", returns="result, None"), "gradient",
     "in columns 0, 2 of input"),
    ("KillHead", KILLHEAD.format(cols="0:ctx.n", returns="result"), "backward returns",
     "backward returned 1 value(s) but forward takes 2 input(s)"),
    ("KillHead", KILLHEAD.format(cols="0:ctx.n", returns="result, torch.zeros(1)"), "backward returns",
     "which is not a tensor"),
    ("MyReLU", RELU_SIGN, "gradient", "wrong sign"),
    ("Something", SOMETHING_SWAPPED, "gradient", "are swapped"),
    ("LinearFunction", LINEAR_TRANSPOSED, "backward returns", "looks transposed"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return "
                               "result",
                       backward="result, = ctx.saved_tensors\n        return 2 * grad_output * result"),
     "gradient", "2 times the right one"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.result = result.detach()\n        return "
                               "result",
                       backward="return grad_output * ctx.result"),
     "gradgradcheck", "detached copy"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(x)\n        return "
                               "result",
                       backward="x, = ctx.saved_tensors\n        return grad_output * "
                                "torch.from_numpy(np.exp(x.detach().numpy()))"),
     "gradient", "torch.from_numpy was given a NumPy number"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return "
                               "result",
                       backward="result, = ctx.saved_tensors\n        with torch.no_grad():\n            "
                                "return grad_output * result"),
     "gradgradcheck", "no autograd history linking it to x"),
    ("Exp", EXP.format(forward="result = torch.exp(x.float()).double()\n        "
                               "ctx.save_for_backward(result)\n        return result",
                       backward="result, = ctx.saved_tensors\n        return grad_output * result"),
     "gradcheck", "Your forward computes in float32"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return "
                               "result",
                       backward="result, = ctx.saved_tensors\n        result.mul_(grad_output)  # in place\n"
                                "        return result"),
     "gradient", "changed in place"),
    ("Square", SQUARE.format(forward="ctx.save_for_backward(x)\n        return x ** 2",
                             backward="x, = ctx.saved_tensors\n        return grad_out * x"),
     "gradient", "0.5 times the right one"),
    ("Sinh", SINH_BAD, "gradgradcheck",
     "an intermediate result has no autograd history, whether it is kept on ctx"),
    ("Sinh", SINH_TUPLE, "forward", "not a Tensor"),
    ("KillHead", "def KillHead(x, n):\n    return x\n", "is a Function",
     "subclass of torch.autograd.Function"),
    ("KillHead", ("class KillHead(Function):\n    @staticmethod\n    def forward(ctx, input, n):\n"
                 "        raise NotImplementedError()\n"), "forward", "not written yet"),
    # Lesson 4's derived backwards: one mistake each, as students make them.
    ("LogSumExp", LOGSUMEXP.format(forward="result = input.exp().sum(-1).log()  # overflows",
                                   backward=LSE_GRAD),
     "forward", "NaN or infinity"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE,
                                   backward="return grad_output * (input - result.unsqueeze(-1)).exp()"),
     "gradient", "grad_output.unsqueeze(dim)"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE,
                                   backward="return grad_output.unsqueeze(-1) * input.exp() / "
                                            "input.exp().sum(-1, keepdim=True)"),
     "gradient", "NaN or infinity"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE,
                                   backward="return (input - result.unsqueeze(-1)).exp()"),
     "gradient", "it never uses grad_output"),
    ("LayerNorm", LAYERNORM.format(variance="input.var(-1, keepdim=True)", backward=LN_GRAD),
     "forward", "the variance is the unbiased one, dividing by n - 1"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward="rstd * (g - g.mean(-1, keepdim=True)), "
                                                                  "None"),
     "gradient", "the path through the variance is left out"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward="g * rstd, None"),
     "gradcheck", "backward does not compute the derivative of forward"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD.replace(", None", "")),
     "backward returns", "backward returned 1 value(s) but forward takes 2 input(s)"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(  # the answer's backward as posted: both bugs
        grad_input="convolve2d(grad_output.numpy(), filter.t().numpy(), mode='full')",
        grad_filter="convolve2d(input.numpy(), grad_output.numpy(), mode='valid')"),
     "backward returns", "each gradient must have the shape of its input"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input=CONV_GRAD_INPUT,
                                              grad_filter="convolve2d(input.numpy(), grad_output.numpy(), "
                                                          "mode='valid')"),
     "gradient", "grad_output read in reverse order"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input="correlate2d(grad_output.numpy(), filter.numpy(), "
                                                         "mode='full')",
                                              grad_filter=CONV_GRAD_FILTER),
     "gradient", "cross-correlates grad_output with the filter as it is"),
    # SoftmaxCrossEntropy: the one-hot forgotten, the batch size forgotten, exp of raw logits, a sign
    ("SoftmaxCrossEntropy", SOFTMAX_CE.format(forward=CE_STABLE,
                                              backward="return grad_output * p / len(target), None"),
     "gradient", "the one-hot of the target is not subtracted"),
    ("SoftmaxCrossEntropy", SOFTMAX_CE.format(forward=CE_STABLE,
                                              backward=CE_ONE_HOT + "return grad_output * p, None"),
     "gradient", "not divided by the batch size"),
    ("SoftmaxCrossEntropy", SOFTMAX_CE.format(forward=CE_NAIVE, backward=CE_GRAD),
     "forward", "NaN or infinity"),
    ("SoftmaxCrossEntropy", SOFTMAX_CE.format(forward=CE_STABLE, backward=CE_ONE_HOT
                                              + "return -grad_output * p / len(target), None"),
     "gradient", "the gradient has the wrong sign"),
    ("SoftmaxCrossEntropy", SOFTMAX_CE.format(
        forward="loss = -torch.log_softmax(logits, dim=1)[torch.arange(len(target)), target].sum()",
        backward=CE_ONE_HOT + "return grad_output * p, None"),
     "forward", "summed over the batch, not averaged"),
]


# -- issue 12: rules an exercise states that a wrong Function can break without changing a number -------

MYRELU = '''
class MyReLU(Function):
    @staticmethod
    def forward(ctx, input):
        {forward}

    @staticmethod
    def backward(ctx, grad_output):
        {backward}
'''

MYRELU_SAVED = "ctx.save_for_backward(input)\n        return input.clamp(min=0)"
MYRELU_LOADED = "input, = ctx.saved_tensors\n        "

SOMETHING = '''
class Something(Function):
    @staticmethod
    def forward(ctx, input1, input2):
        {forward}

    @staticmethod
    def backward(ctx, grad_output):
        {backward}
'''
SOMETHING_SAVED = "ctx.save_for_backward(input1, input2)\n        return (input1 * input2).abs()"
SOMETHING_LOADED = "input1, input2 = ctx.saved_tensors\n        "

LINEAR = '''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        {body}
        return grad_input, grad_weight, grad_bias
'''

SINH = '''
class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_out_exp, grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        {body}


def sinh(x):
    return Sinh.apply(x)[0]
'''

CUBE = '''
def cube_backward(grad_out, x):
    return torch.as_tensor(grad_out.numpy() * 3 * x.numpy() ** 2)  # as the lesson's helper


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        {cube}


class CubeBackward(Function):
    @staticmethod
    def forward(ctx, grad_out, x):
        ctx.save_for_backward(x, grad_out)
        return cube_backward(grad_out, x)

    @staticmethod
    def backward(ctx, grad_out):
        x, saved_grad_out = ctx.saved_tensors
        {cube_backward}
'''
SINH_NUMPY = SINH.format(body="cosh = torch.from_numpy((expx.numpy() + expnegx.numpy()) / 2)  # NumPy in "
                                "backward\n        return grad_out * cosh + grad_out_exp * expx - "
                                "grad_out_negexp * expnegx")
CUBE_BACKWARD_RIGHT = "return grad_out * 3 * x ** 2, grad_out * saved_grad_out * 6 * x"

SOFTPLUS = '''
class Softplus(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return {forward}

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * {derivative}
'''
STABLE = "x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))"

KILLHEAD_RIGHT_BACKWARD = ("result = grad_output.clone()\n        result[:, 0:ctx.n] = 0\n"
                           "        return result, None")
KILLHEAD_ANY = '''
class KillHead(Function):
    @staticmethod
    def forward(ctx, input, n):
        ctx.n = n
        {forward}

    @staticmethod
    def backward(ctx, grad_output):
        {backward}
'''

CASES += [
    # Full marks for wrong work, before issue 12: each breaks a rule its exercise states.
    ("KillHead", KILLHEAD_ANY.format(forward="input[:, :n] = 0\n        return input",
                                     backward=KILLHEAD_RIGHT_BACKWARD),
     "inputs unchanged", "forward changed input in place"),
    ("KillHead", KILLHEAD_ANY.format(forward="result = input.clone()\n        result[:, :n] = 0\n        "
                                             "return result",
                                     backward="grad_output[:, :ctx.n] = 0\n        return grad_output, None"),
     "grad_output unchanged", "backward changed grad_output in place"),
    ("MyReLU", MYRELU.format(forward="ctx.input = input\n        return input.clamp(min=0)",
                             backward="g = grad_output.clone()\n        g[ctx.input < 0] = 0\n        return "
                                      "g"),
     "save_for_backward", "keeps input, one of its inputs, as ctx.input"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.result = result\n        return result",
                       backward="return grad_output * ctx.result"),
     "save_for_backward", "no reference cycle"),
    ("Something", SOMETHING.format(forward="ctx.u, ctx.v = input1, input2\n        return (input1 * "
                                           "input2).abs()",
                                   backward="u, v = ctx.u, ctx.v\n        s = (u * v).sign()\n"
                                            "        return grad_output * s * v, grad_output * s * u"),
     "save_for_backward", "keeps input1, one of its inputs, as ctx.u"),
    ("Square", SQUARE.format(forward="ctx.x = x\n        return x ** 2", backward="return grad_out * 2 * "
                                                                                  "ctx.x"),
     "save_for_backward", "even second derivatives work"),
    ("Sinh", SINH_BAD, "save_for_backward", "neither an input nor an output"),
    ("Cube", CUBE.format(cube="return grad_out * 3 * x ** 2", cube_backward="raise NotImplementedError()"),
     "companion used", "Cube's gradient does not go through CubeBackward"),
    # Messages that misled.
    ("Sinh", SINH.format(body="return grad_out * (expx + expnegx) / 2"), "gradcheck",
     "backward ignores grad_out_exp"),
    ("Sinh", SINH_NUMPY, "gradgradcheck",
     "calls .numpy() on a tensor that requires grad"),
    ("Square", SQUARE.format(forward="ctx.save_for_backward(x)\n        return x ** 2",
                             backward="x, = ctx.saved_tensors\n        return grad_out * torch.from_numpy(2 "
                                      "* x.numpy())"),
     "gradient", "NumPy returns a plain number"),
    ("LinearFunction", LINEAR.format(body="grad_input = grad_output.mm(weight)\n"
                                          "        grad_weight = grad_output.t().mm(input)"
                                          "\n        grad_bias = grad_output.sum(0)"),
     "backward returns", "LinearFunction.apply was called without bias here"),
    ("Cube", CUBE.format(cube="return CubeBackward.forward(ctx, grad_out, x)",
                         cube_backward=CUBE_BACKWARD_RIGHT),
     "companion used", "calls CubeBackward.forward(...) directly: call CubeBackward.apply(...) instead"),
    # Causes that were not named.
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return "
                               "result",
                       backward="result, = ctx.saved_tensors\n        return result"),
     "gradient", "it never uses grad_output"),
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n        return input.clamp(min=0)",
                             backward="input, = ctx.saved_tensors\n        g = grad_output.clone()\n"
                                      "        g[input > 0] = 0\n        return g"),
     "gradient", "the condition that chooses the entries is inverted"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(x)\n        return "
                               "result",
                       backward="x, = ctx.saved_tensors\n        return grad_output * x"),
     "gradient", "is grad_output times x, the input"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "return grad_output * input1.sign() * input2.abs(), grad_output * "
                                   "input1.abs()"),
     "gradient", "The gradient with respect to input2 lacks a factor input2.sign()"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "return grad_output * input1.sign() * input2.abs(), input1.abs() * "
                                   "input2.sign()"),
     "gradient", "the same gradient for input2 whatever grad_output"),
    ("Cube", CUBE.format(cube="return CubeBackward.apply(grad_out, x)",
                         cube_backward="return grad_out * 3 * x ** 2, grad_out * saved_grad_out * 3 * x"),
     "gradgradcheck", "is 0.5 times finite differences of backward"),
    ("Cube", CUBE.format(cube="return CubeBackward.apply(grad_out, x)",
                         cube_backward="return grad_out * saved_grad_out * 6 * x, grad_out * 3 * x ** 2"),
     "gradgradcheck", "are swapped: CubeBackward.backward must return its gradients in the order"),
    ("Sinh", SINH.format(body="return grad_out * (expx - expnegx) / 2 + grad_out_exp * expx - "
                              "grad_out_negexp * expnegx"),
     "gradient", "has the term exp(-x) / 2 with the wrong sign"),
    ("Sinh", SINH.format(body="return grad_out * (expx + expnegx) / 2 + grad_out_exp * expx + "
                              "grad_out_negexp * expnegx"),
     "gradcheck", "backward adds the term of grad_out_negexp"),
    # Inputs a careful teaching assistant tries.
    ("LinearFunction", LINEAR.format(body="if ctx.needs_input_grad[0]:\n            grad_input = "
                                          "grad_output.mm(weight)\n        if ctx.needs_input_grad[0]:\n     "
                                          "       grad_weight = grad_output.t().mm(input)\n        if bias "
                                          "is not None and ctx.needs_input_grad[2]:\n            grad_bias = "
                                          "grad_output.sum(0)"),
     "needs_input_grad", "backward returned None for weight, which needs a gradient"),
    ("LinearFunction", LINEAR.format(body="grad_input = grad_output.mm(weight)\n        grad_weight = "
                                          "grad_output.t().mm(input)\n        if ctx.needs_input_grad[2]:\n  "
                                          "          grad_bias = grad_output.sum(0)"),
     "gradient", "(if bias is not None and ctx.needs_input_grad[2])"),
    ("Softplus", SOFTPLUS.format(forward="torch.log(1 + torch.exp(x))", derivative="torch.sigmoid(x)"),
     "forward", "(inf where x is 1000): exp overflows"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.exp(x) / (1 + torch.exp(x))"),
     "gradient", "(NaN where x is 1000)"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(-x)"),
     "gradient", "is the derivative at -x instead of at x"),
]

# Right, if unusual: each must keep full marks (an observation that changes no result costs nothing).
RIGHT = [
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n        return input.clamp(min=0)",
                             backward="input, = ctx.saved_tensors\n        return torch.where(input > 0, "
                                      "grad_output, 0.0)")),
    ("MyReLU", MYRELU.format(forward="output = input.clamp(min=0)\n        ctx.save_for_backward(output)\n"
                                     "        return output",
                             backward="output, = ctx.saved_tensors\n"
                                      "        return grad_output * (output > 0)")),
    ("LinearFunction", LINEAR.format(body="if ctx.needs_input_grad[0]:\n            grad_input = "
                                          "grad_output.mm(weight)\n        if ctx.needs_input_grad[1]:\n"
                                          "            grad_weight = grad_output.t().mm(input)\n"
                                          "        if bias is not None and ctx.needs_input_grad[2]:\n"
                                          "            grad_bias = grad_output.sum(0, keepdim=True)  # "
                                          "shaped (1, out)")),
    ("LinearFunction", LINEAR.format(body="needs = ctx.needs_input_grad\n        if needs[0]:\n"
                                          "            grad_input = (grad_output.float() @ weight.float())"
                                          ".double()  # float32\n        if needs[1]:\n"
                                          "            grad_weight = grad_output.t().mm(input)\n"
                                          "        if bias is not None and needs[2]:\n"
                                          "            grad_bias = grad_output.sum(0)")),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "uv = input1 * input2\n        s = torch.where(uv > 0, 1.0, "
                                   "torch.where(uv < 0, -1.0, 0.0))\n"
                                   "        return grad_output * s * input2, grad_output * s * input1")),
    # The value at the kinks the exercise states (0), written three more ways.
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = torch.sign(input1 * input2)\n"
                                   "        return grad_output * s * input2, grad_output * s * input1")),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "return grad_output * input1.sign() * input2.abs(), \\\n"
                                   "               grad_output * input1.abs() * input2.sign()")),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "g1 = grad_output * input2.abs() * torch.sgn(input1)\n"
                                   "        g2 = grad_output * input1.abs() * torch.sgn(input2)\n"
                                   "        return g1, g2")),
    ("KillHead", KILLHEAD_ANY.format(forward="mask = torch.ones_like(input)\n        mask[:, :n] = 0\n"
                                             "        return input * mask",
                                     backward="mask = torch.ones_like(grad_output)\n        mask[:, :ctx.n] "
                                              "= 0\n        return grad_output * mask, None")),
    ("Sinh", SINH.format(body="return grad_out * (expx + expnegx) / 2 + grad_out_exp * expx - "
                              "grad_out_negexp * expnegx")),
    ("Cube", CUBE.format(cube="return CubeBackward.apply(grad_out, x)", cube_backward=CUBE_BACKWARD_RIGHT)),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)")),
    # issue 22: the input saved and exp recomputed in backward (twice differentiable all the same), and a
    # mask made float32 (multiplied into float64, it stays exact).
    ("Exp", EXP.format(forward="ctx.save_for_backward(x)\n        return x.exp()",
                       backward="x, = ctx.saved_tensors\n        return grad_output * x.exp()")),
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n        return input.clamp(min=0)",
                             backward="input, = ctx.saved_tensors\n"
                                      "        return grad_output * (input > 0).float()")),
    # The other conventions at ReLU's kink the exercise allows (any value from 0 to 1): 1/2, and 1 with >=.
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output * (input.sign() + 1) / 2")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output * (input >= 0)")),
    ("SoftmaxCrossEntropy", SOFTMAX_CE.format(forward=CE_STABLE, backward=CE_GRAD)),
]

# float32 in a backward that is differentiated again: too rough for finite differences, as for gradgradcheck.
CASES.append(("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n"
                                        "        return result",
                                backward="result, = ctx.saved_tensors\n"
                                         "        return (grad_output.float() * result.float()).double()"),
              "gradgradcheck", "Your backward computes in float32"))

# Words a cause must never use for these mistakes (the wrong advice the old messages gave).
NEVER = [
    (SINH.format(body="return grad_out * (expx + expnegx) / 2"), "Sinh", "no autograd history"),
    (SINH_NUMPY, "Sinh", "detach().numpy() instead"),
    (SINH_BAD, "Sinh", "instead of save_for_backward"),
]


# -- issue 22: what learners wrote, where the old sentence named the wrong cause or none -----------------

LAYERNORM_EPS_OUTSIDE = '''
class LayerNorm(Function):
    @staticmethod
    def forward(ctx, input, eps=1e-5):
        mean = input.mean(-1, keepdim=True)
        std = ((input - mean) ** 2).mean(-1, keepdim=True).sqrt()
        rstd = 1 / (std + eps)  # eps outside the square root
        normalised = (input - mean) * rstd
        ctx.save_for_backward(normalised, rstd)
        return normalised

    @staticmethod
    def backward(ctx, grad_output):
        normalised, rstd = ctx.saved_tensors
        g = grad_output
        return ''' + LN_GRAD + "\n"

SINH_NON_DIFFERENTIABLE = '''
class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        ctx.mark_non_differentiable(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2 + _grad_out_exp * expx - _grad_out_negexp * expnegx


def sinh(x):
    return Sinh.apply(x)[0]
'''

TANH_CTX_AND_SETUP = '''
class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (1 - y * y)

    @staticmethod
    def jvp(ctx, x_t):
        y, = ctx.saved_tensors
        return x_t * (1 - y * y)
'''

SOFTPLUS_NUMPY = '''
class Softplus(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.from_numpy(np.logaddexp(0, x.detach().numpy()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)
'''

SOFTSIGN_IN_PLACE = '''
@torch.library.custom_op("course22::softsign", mutates_args=())
def softsign(x: torch.Tensor) -> torch.Tensor:
    return x.div_(1 + x.abs())  # in place: the op returns its own input


@softsign.register_fake
def _(x):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _bw(ctx, g):
    x, = ctx.saved_tensors
    return g / (1 + x.abs()) ** 2


softsign.register_autograd(_bw, setup_context=_setup)
'''

SOFTSIGN_FAKE_ALIAS = SOFTSIGN_IN_PLACE.replace("course22::", "course22b::").replace(
    "x.div_(1 + x.abs())  # in place: the op returns its own input", "x / (1 + x.abs())").replace(
    "return torch.empty_like(x)", "return x  # the fake returns its input")

ISSUE22 = [
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.amax(dim=0, keepdim=True)\n"
                                           "        result = m.squeeze(0) + (input - m).exp().sum(0).log()",
                                   backward="return grad_output.unsqueeze(0) * "
                                            "(input - result.unsqueeze(0)).exp()"),
     "forward", "it looks reduced over dimension 0 of input"),
    ("LayerNorm", LAYERNORM_EPS_OUTSIDE, "forward", "eps is added outside the square root"),
    ("Sinh", SINH_NON_DIFFERENTIABLE, "gradcheck", "forward marks it with ctx.mark_non_differentiable"),
    ("Cube", CUBE.format(cube="return CubeBackward.apply(grad_out, x.detach())",
                         cube_backward=CUBE_BACKWARD_RIGHT),
     "companion used", "but with x.detach(), a copy without autograd history"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD.replace("None", "0.0")),
     "backward returns", "backward returned a float for eps, which is a number, not a tensor: return None"),
    ("Tanh", TANH_CTX_AND_SETUP, "forward",
     "Tanh defines setup_context, so PyTorch calls forward without ctx"),
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n        return input.clamp_(min=0)",
                             backward="input, = ctx.saved_tensors\n        grad_input = grad_output.clone()\n"
                                      "        grad_input[input < 0] = 0\n        return grad_input"),
     "gradient", "forward saves input with ctx.save_for_backward and then changes it in place"),
    ("Cube", CUBE.format(cube="return CubeBackward.apply(grad_out, x)",
                         cube_backward="return grad_out * saved_grad_out * 6 * x"),
     "gradgradcheck", "but CubeBackward.forward takes 2 input(s) (grad_out, x)"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "uv = (input1 * input2).abs()\n"
                                   "        return grad_output * uv / input1, grad_output * uv / input2"),
     "gradient", "contains NaN or infinity (NaN where input1 is 0): a division by an input"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = torch.where(input1 * input2 >= 0, 1.0, -1.0)\n"
                                   "        return grad_output * s * input2, grad_output * s * input1"),
     "gradient", "is wrong only where input1 is exactly 0"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = torch.where(input1 * input2 > 0, 1.0, -1.0)\n"
                                   "        return grad_output * s * input2, grad_output * s * input1"),
     "gradient", "is wrong only where input1 is exactly 0"),
    ("LinearFunction", LINEAR.format(body="grad_input = (grad_output.mm(weight)).numpy()\n"
                                          "        grad_weight = grad_output.t().mm(input)\n"
                                          "        grad_bias = None if bias is None else grad_output.sum(0)"),
     "backward returns", "backward returned a numpy.ndarray as the gradient for input"),
    ("LinearFunction", LINEAR.format(body="grad_input = grad_output.mm(weight)\n        grad_weight = "
                                          "grad_output.t().mm(input)\n        grad_bias = None if bias is "
                                          "None else grad_output.sum(0)").replace("input.mm(weight.t())",
                                                                                  "input.mm(weight)"),
     "forward", "weight.t() (3×2) fits"),
    ("Softplus", SOFTPLUS_NUMPY, "vmap",
     "under torch.func.vmap (and torch.func.grad), forward receives batched tensors"),
    ("softsign", SOFTSIGN_IN_PLACE, "forward", "the custom op softsign returns its own input"),
    ("softsign", SOFTSIGN_FAKE_ALIAS, "opcheck",
     "softsign's fake (the function given to register_fake) returns its input itself"),
]

# More of what learners write, in the same spirit (a tutor's list), each with its cause.
TANH_MODERN = TANH_CTX_AND_SETUP.replace("def forward(ctx, x)", "def forward(x)")
ISSUE22 += [
    ("Tanh", TANH_MODERN.replace(TANH_MODERN[TANH_MODERN.index("    @staticmethod\n    def jvp"):], ""),
     "forward mode", "Tanh has no jvp staticmethod"),
    ("Tanh", TANH_MODERN.replace("ctx.save_for_backward(output)", "ctx.save_for_backward(inputs)"),
     "forward", "setup_context's inputs is the tuple of forward's arguments: unpack it"),
    ("Tanh", TANH_MODERN.replace("        ctx.save_for_forward(output)\n", ""),
     "forward mode", "holds only the tensors setup_context passed to ctx.save_for_forward"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)").replace(
        "    generate_vmap_rule = True\n", ""), "vmap", "set generate_vmap_rule = True"),
    ("KillHead", KILLHEAD_ANY.format(forward="result = input.clone()\n        result[:, :n] = 0\n"
                                             "        return result",
                                     backward=KILLHEAD_RIGHT_BACKWARD).replace("        ctx.n = n\n", ""),
     "gradient", "backward reads ctx.n, which forward never set"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n"
                               "        return result",
                       backward="result, = ctx.saved_tensors\n        return grad_output * result.item()"),
     "gradient", "turns a tensor of 9 entries into one number"),
    # ReLU at its kink, 0, where the exercise allows any derivative from 0 to 1: NaN or a value outside.
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output * input.clamp(min=0) / input  # relu(x) / x is 1 or 0"),
     "gradient", "is wrong only where input is exactly 0 (3 of the 7 entries), MyReLU's kink"),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output * torch.heaviside(input, torch.tensor(-1.0).double())"),
     "gradient", "the derivative (gradient / grad_output) is -1, and the exercise allows any value from 0"),
]

CASES += ISSUE22

# What the old sentences said for issue 22's attempts, each the wrong way: none may appear for any of them.
MISLEADING = ("malformed vector-Jacobian product", "Make sure it returns plain float64 tensors",
              "autograder/", "ran in float32", "backward ignores", "computes it itself",
              "it returned a tensor there", "(if eps is not None", "With ctx of shape",
              "is grad_output times 1",
              "forward takes 2 input(s) (x)", "raised RuntimeError: expected Variable",
              "raised RuntimeError: mat1 and mat2", "raised RuntimeError: Cannot access data pointer",
              "fails: When comparing the output")

# An instructor's own problem (docs/authoring.md): Swish, x * sigmoid(x), twice differentiable. Its wrong
# Function saves sigmoid(x) computed in forward: an intermediate without history, so the second derivatives
# through it are missing (not zero: x, also saved, still has its history).
SWISH = '''
class Swish(Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + x * s * (1 - s))
'''
SWISH_RIGHT = SWISH.replace("        x, s = ctx.saved_tensors\n",
                            "        x, _ = ctx.saved_tensors\n        s = torch.sigmoid(x)\n")


# -- Lesson 6's batch norm (the tutorial's: unbiased sigma, eps outside the square root) ------------------

BATCHNORM = '''
from torch.autograd.function import once_differentiable


def unsqueeze_all(t):
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, mean, sqrt_var, eps):
    N = X.numel() // X.size(1)
    denom = unsqueeze_all(sqrt_var + eps)
    centred = X - unsqueeze_all(mean)
    g_mean = unsqueeze_all(grad_out.mean(dim=(0, 2, 3)))
    grad_sqrt_var = -(grad_out * centred).sum(dim=(0, 2, 3)) / (sqrt_var + eps) ** 2
    return {backward}


class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        mean = X.mean(dim=(0, 2, 3))
        sqrt_var = {sqrt_var}
        ctx.save_for_backward(X, mean, sqrt_var)
        ctx.eps = eps
        return (X - unsqueeze_all(mean)) / {denominator}

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, mean, sqrt_var = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, mean, sqrt_var, ctx.eps), None
'''
BN_STD = "X.var(dim=(0, 2, 3), unbiased=True).sqrt()"
BN_DENOMINATOR = "unsqueeze_all(sqrt_var + eps)"
BN_SIGMA_PATH = "centred * unsqueeze_all(grad_sqrt_var / ((N - 1) * sqrt_var))"
BN_GRAD = "(grad_out - g_mean) / denom + " + BN_SIGMA_PATH


def batch_norm(backward=BN_GRAD, sqrt_var=BN_STD, denominator=BN_DENOMINATOR):
    return BATCHNORM.format(backward=backward, sqrt_var=sqrt_var, denominator=denominator)


# The statistics with keepdim=True over {dims}, without unsqueeze_all; backward in the same style.
BATCHNORM_KEEPDIM = '''
class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        var, mean = torch.var_mean(X, dim={dims}, correction=1, keepdim=True)
        std = var.sqrt()
        ctx.save_for_backward(X, mean, std)
        ctx.eps = eps
        return (X - mean) / (std + eps)

    @staticmethod
    def backward(ctx, grad_out):
        X, mean, std = ctx.saved_tensors
        dims, n = {dims}, X.numel() // X.size(1)
        centred, denom = X - mean, std + ctx.eps
        # through the variance: dL/dvar = dL/dstd / (2 std), dvar/dX = 2 (X - mean) / (n - 1)
        grad_var = -(grad_out * centred).sum(dims, keepdim=True) / denom ** 2 / (2 * std)
        return (grad_out - grad_out.mean(dims, keepdim=True)) / denom + grad_var * 2 * centred / (n - 1), None
'''

CASES += [
    ("BatchNorm", batch_norm(backward="grad_out / denom + " + BN_SIGMA_PATH), "gradient",
     "the path through the mean is left out"),
    ("BatchNorm", batch_norm(backward="(grad_out - g_mean) / denom"), "gradient",
     "the path through the standard deviation is left out"),
    ("BatchNorm", batch_norm(backward="grad_out / denom"), "gradient",
     "both the path through the mean and the one through the standard deviation are left out"),
    ("BatchNorm", batch_norm(backward=BN_GRAD.replace("(N - 1)", "N")), "gradient",
     "the derivative of sigma divides by N"),
    ("BatchNorm", batch_norm(sqrt_var="X.var(dim=(0, 2, 3), unbiased=False).sqrt()"), "forward",
     "the variance is the biased one, dividing by N"),
    ("BatchNorm", batch_norm(denominator="unsqueeze_all((sqrt_var ** 2 + eps).sqrt())"), "forward",
     "eps is added inside the square root"),
    # the standard batch norm's backward (eps inside the square root) on this lesson's forward
    ("BatchNorm", batch_norm(backward="(grad_out - g_mean) * unsqueeze_all((sqrt_var ** 2 + eps).rsqrt()) - "
                                      "centred * unsqueeze_all((sqrt_var ** 2 + eps).rsqrt() ** 3 * "
                                      "(grad_out * centred).sum(dim=(0, 2, 3)) / (N - 1))"),
     "gradient", "the derivative taken is that of the batch norm with eps inside"),
    ("BatchNorm", BATCHNORM_KEEPDIM.format(dims="(2, 3)"), "forward",
     "the statistics are taken over each image's pixels, dim=(2, 3)"),
    ("BatchNorm", BATCHNORM_KEEPDIM.format(dims="(0, 1, 2, 3)"), "forward",
     "the statistics are taken over every entry at once"),
]

RIGHT += [
    ("BatchNorm", batch_norm()),
    # keepdim statistics from torch.var_mean, no decorator, the sigma path through the variance
    ("BatchNorm", BATCHNORM_KEEPDIM.format(dims="(0, 2, 3)")),
    # sigma from the sum of squares, written out
    ("BatchNorm", batch_norm(sqrt_var="((X - unsqueeze_all(mean)) ** 2).sum(dim=(0, 2, 3)).div("
                                      "X.numel() // X.size(1) - 1).sqrt()")),
]



# -- a learner's and a tutor's list (issue 22, continued): more slips on every graded problem -------------
# Each wrong one fails its check with a sentence of ours that names the cause in the learner's names; each
# right one, however unusual (NumPy in forward, no @staticmethod, a None too many), keeps full marks.

L_KILLHEAD = "result = input.clone()\n        result[:, :n] = 0\n        return result"
L_EXP = "result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return result"
L_EXP_BACKWARD = "result, = ctx.saved_tensors\n        return grad_output * result"
L_LINEAR = ("grad_input = grad_output.mm(weight) if ctx.needs_input_grad[0] else None\n"
            "        grad_weight = grad_output.t().mm(input) if ctx.needs_input_grad[1] else None\n"
            "        grad_bias = None if bias is None else grad_output.sum(0) if ctx.needs_input_grad[2] "
            "else None")
L_SQUARE = "ctx.save_for_backward(x)\n        return x ** 2"
L_SOFTPLUS = SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)")
L_TANH_SAVED = "ctx.save_for_backward(output)\n        ctx.save_for_forward(output)"
L_SOFTSIGN = SOFTSIGN_IN_PLACE.replace("x.div_(1 + x.abs())  # in place: the op returns its own input",
                                       "x / (1 + x.abs())")
L_CONV = SCIPY_CONV.format(grad_input=CONV_GRAD_INPUT, grad_filter=CONV_GRAD_FILTER)
L_CUBE = CUBE.format(cube="return CubeBackward.apply(grad_out, x)", cube_backward=CUBE_BACKWARD_RIGHT)


def _softsign(name: str, old: str, new: str) -> str:
    """softsign with one change, as its own custom op (an op's name is registered once per process)."""
    return L_SOFTSIGN.replace("course22::", f"learner_{name}::").replace(old, new)


LEARNER = [
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=KILLHEAD_RIGHT_BACKWARD.replace(
        "result, None", "result, 0")),
     "backward returns", "backward returned a gradient for n (= 2), which is not a tensor"),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD.replace("[:, :n]", "[:n]"),
                                     backward=KILLHEAD_RIGHT_BACKWARD.replace("[:, 0:ctx.n]", "[:ctx.n]")),
     "forward", "the first n rows are zeroed instead of the first n columns"),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward="return grad_output, None"),
     "gradient", "is grad_output times 1 (it returns grad_output unchanged)"),
    ("KillHead", KILLHEAD_ANY.format(forward="ctx.save_for_backward(n)\n        " + L_KILLHEAD,
                                     backward="n, = ctx.saved_tensors\n        result = grad_output.clone()\n"
                                              "        result[:, :n] = 0\n        return result, None"),
     "forward", "given an int as its argument 1"),
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n        return torch.max(input, 0)",
                             backward=MYRELU_LOADED + "return grad_output * (input > 0)"),
     "forward", "torch.max(x, dim), which returns (values, indices)"),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + "grad_input = grad_output.data\n"
                             "        grad_input[input.data < 0] = 0\n        return grad_input"),
     "grad_output unchanged", "backward changed grad_output in place"),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "grad_input = grad_output.clone()\n"
                             "        grad_input[grad_output < 0] = 0\n        return grad_input"),
     "gradient", "the derivative taken at grad_output instead of at input"),
    ("Exp", EXP.format(forward="ctx.save_for_backward(torch.exp(x))\n        return torch.exp(x)",
                       backward=L_EXP_BACKWARD),
     "gradgradcheck", "an intermediate result has no autograd history"),
    ("Exp", "import math\n" + EXP.format(forward="ctx.save_for_backward(x)\n        return x.exp()",
                                         backward="x, = ctx.saved_tensors\n"
                                                  "        return grad_output * math.exp(x)"),
     "gradient", "to math.exp, which takes one Python number: use torch.exp"),
    ("Exp", EXP.format(forward=L_EXP, backward="result = ctx.saved_tensors\n"
                                               "        return grad_output * result"),
     "gradient", "ctx.saved_tensors is a tuple even when one tensor was saved"),
    ("Exp", EXP.format(forward=L_EXP + ",", backward=L_EXP_BACKWARD),
     "forward", "a trailing comma (return result,) makes a tuple"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.sum(0)", "grad_output.sum(1)")),
     "backward returns", "backward returned a gradient of shape [4] for bias"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.mm(weight)",
                                                           "grad_output.mm(weight.t())")),
     "gradient", "(3×2) is weight.t(): use weight itself there"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR).replace(
        "        if bias is not None:\n            output = output + bias\n",
        "        output = output + bias\n"),
     "forward", "bias is None here (LinearFunction.apply was called without it)"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("None if bias is None else grad_output.sum(0)",
                                                           "grad_output.sum(0) if ctx.needs_input_grad[3] "
                                                           "else None")),
     "gradient", "bias's is ctx.needs_input_grad[2]"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.sum(0)", "grad_output.mean(0)")),
     "gradient", "is there a .mean() where the derivative has a .sum()?"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "return grad_output * input2.abs(), grad_output * input1.abs()"),
     "gradient", "lacks a factor input1.sign()"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "if input1 * input2 > 0:\n"
                                   "            return grad_output * input2, grad_output * input1\n"
                                   "        return -grad_output * input2, -grad_output * input1"),
     "gradient", "as one True or False (a Python if"),
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.amax(dim=-1, keepdim=True)\n"
                                           "        result = m + (input - m).exp().sum(-1, keepdim=True)"
                                           ".log()",
                                   backward="return grad_output * (input - result).exp()"),
     "forward", "the reduced dimension is still there, of size 1 (keepdim=True keeps it)"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE,
                                   backward="return grad_output.unsqueeze(-1) * torch.softmax(input, 0)"),
     "gradient", "the softmax is normalised over dimension 0 instead of the last"),
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.max(-1, keepdim=True)\n"
                                           "        result = m.squeeze(-1) + (input - m).exp().sum(-1).log()",
                                   backward=LSE_GRAD),
     "forward", "max returns a pair (values, indices): take its .values"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD).replace(
        "input.mean(-1, keepdim=True)", "input.mean(0, keepdim=True)"),
     "forward", "the mean is taken over dimension 0"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward="rstd * (g - normalised * (g * normalised)"
                                                                  ".mean(-1, keepdim=True)), None"),
     "gradient", "the path through the mean is left out"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD).replace(
        "ctx.save_for_backward(normalised, rstd)", "ctx.save_for_backward(normalised, rstd, eps)").replace(
        "normalised, rstd = ctx.saved_tensors", "normalised, rstd, eps = ctx.saved_tensors"),
     "forward", "keep other values as attributes of ctx (ctx.eps = eps)"),
    ("ScipyConv2dFunction", L_CONV.replace("return input.new(result)", "return result"),
     "forward", "returned an ndarray, not a Tensor: NumPy's result must become"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input=CONV_GRAD_INPUT,
                                              grad_filter=CONV_GRAD_FILTER.replace("'valid'", "'full'")),
     "backward returns", "gradient of shape [7, 7] for filter"),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return grad_out * 2 * x.detach()"),
     "gradgradcheck", "only through values autograd cannot follow"),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return grad_out * x.mul_(2)"),
     "gradient", "a tensor saved for backward was changed in place"),
    ("Square", SQUARE.format(forward="y = x ** 2\n        ctx.save_for_backward(y)\n        return y",
                             backward="y, = ctx.saved_tensors\n        return grad_out * 2 * y.sqrt()"),
     "gradient", "lacks a factor x.sign()"),
    ("Sinh", SINH.format(body="return grad_out * (expx + expnegx) / 2, grad_out_exp * expx, "
                              "-grad_out_negexp * expnegx"),
     "backward returns", "backward returned 3 value(s) but forward takes 1 input(s) (x)"),
    ("Cube", L_CUBE.replace("CubeBackward.apply(grad_out, x)", "CubeBackward.apply(x, grad_out)"),
     "gradient", "the right formula with x and grad_out exchanged"),
    ("Cube", L_CUBE.replace("x, saved_grad_out = ctx.saved_tensors", "saved_grad_out, x = ctx.saved_tensors"),
     "gradgradcheck", ("its x is the tensor saved as grad_out. ctx.saved_tensors gives the tensors back "
                       "in the order save_for_backward received them: write x, saved_grad_out = "
                       "ctx.saved_tensors.")),
    ("LinearFunction", LINEAR.format(body=L_LINEAR).replace("input, weight, bias = ctx.saved_tensors",
                                                            "weight, input, bias = ctx.saved_tensors"),
     "gradient", ("unpacks weight, input, bias = ctx.saved_tensors, but LinearFunction saved them with "
                 "ctx.save_for_backward(input, weight, bias): its weight is the tensor saved as input.")),
    ("Sinh", SINH.format(body="return grad_out * (expx + expnegx) / 2 + grad_out_exp * expx "
                              "- grad_out_negexp * expnegx").replace("expx, expnegx = ctx.saved_tensors",
                                                                     "expnegx, expx = ctx.saved_tensors"),
     "gradcheck", "write expx, expnegx = ctx.saved_tensors."),
    ("BatchNorm", batch_norm(denominator="(sqrt_var + eps)").replace("(X - unsqueeze_all(mean))",
                                                                     "(X - mean)"),
     "forward", "keep the reduced dimensions where it is computed (keepdim=True) or put them back"),
    ("BatchNorm", batch_norm().replace("N = X.numel() // X.size(1)", "N = X.size(0)"),
     "gradient", "an inf comes from a division by zero"),
    ("Tanh", TANH_MODERN.replace(L_TANH_SAVED, "ctx.save_for_backward(inputs[0])\n"
                                               "        ctx.save_for_forward(inputs[0])"),
     "gradient", "x, the input, stands where the output belongs"),
    ("Tanh", TANH_MODERN.replace("setup_context(ctx, inputs, output)", "setup_context(ctx, inputs)").replace(
        L_TANH_SAVED, "y = torch.tanh(inputs[0])\n        ctx.save_for_backward(y)\n"
                      "        ctx.save_for_forward(y)"),
     "forward", "Write setup_context(ctx, inputs, output)"),
    ("Softplus", SOFTPLUS.format(forward="torch.log1p(torch.exp(x))", derivative="torch.sigmoid(x)"),
     "forward", "exp overflows to inf in float64"),
    ("Softplus", L_SOFTPLUS.replace("ctx.save_for_backward(inputs[0])", "ctx.x = inputs[0]").replace(
        "x, = ctx.saved_tensors", "x = ctx.x"),
     "save_for_backward", "as ctx.x, a plain attribute of ctx"),
    ("Softplus", L_SOFTPLUS.replace("ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(output)"),
     "gradient", "the derivative taken at forward's output instead of at x"),
    ("softsign", _softsign("f32", "return torch.empty_like(x)", "return torch.empty(x.shape)"),
     "opcheck", "softsign's fake returns torch.float32 where the op returns torch.float64"),
    ("softsign", _softsign("nofake", "@softsign.register_fake\ndef _(x):\n    return torch.empty_like(x)\n",
                           ""),
     "opcheck", "softsign has no fake"),
    ("softsign", _softsign("out", "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(output)"),
     "gradient", "the derivative taken at forward's output instead of at x"),
    # forward written as a method (it was told "With ctx of shape (3, 3): forward raised TypeError")
    ("Exp", EXP.format(forward=L_EXP, backward=L_EXP_BACKWARD).replace(
        "    @staticmethod\n    def forward(ctx", "    def forward(self, ctx"),
     "forward", "Exp.forward takes a parameter before ctx, as a method's self"),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return grad_out * 2 * x.numpy()"),
     "gradgradcheck", "calls .numpy() on a tensor that requires grad"),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return grad_out * 2 * x.data"),
     "gradgradcheck", "(no .detach(), .data, .item()"),
    # integer division: half the columns killed
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=KILLHEAD_RIGHT_BACKWARD.replace(
        "0:ctx.n", "0:ctx.n // 2")),
     "gradient", "There backward passes grad_output through where those entries of forward's output do not"),
]

LEARNER_RIGHT = [
    # NumPy in forward: grad mode is off there, so .numpy() works even without .detach()
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n"
                                     "        return torch.from_numpy(np.maximum(input.numpy(), 0))",
                             backward=MYRELU_LOADED + "return grad_output * (input > 0)")),
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n"
                                     "        return torch.from_numpy(np.maximum(input.detach().numpy(), 0))",
                             backward=MYRELU_LOADED + "grad_input = grad_output.clone()\n"
                                                      "        grad_input[input <= 0] = 0\n"
                                                      "        return grad_input")),
    # forward or backward without @staticmethod: autograd reads them from the class, as plain functions
    ("Exp", EXP.format(forward=L_EXP, backward=L_EXP_BACKWARD).replace(
        "    @staticmethod\n    def backward(ctx", "    def backward(ctx")),
    ("Exp", EXP.format(forward=L_EXP, backward=L_EXP_BACKWARD).replace(
        "    @staticmethod\n    def forward(ctx", "    def forward(ctx")),
    # a None beyond the inputs: autograd accepts trailing Nones
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return grad_out * 2 * x, None")),
    ("KillHead", KILLHEAD_ANY.format(forward="result = input.clone()\n        result[:, :n].zero_()\n"
                                             "        return result",
                                     backward="g = grad_output.clone()\n        g[:, :ctx.n].zero_()\n"
                                              "        return g, None")),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="1 / (1 + torch.exp(-x))")),
    ("Sinh", SINH.format(body="return grad_out * (expx + 1 / expx) / 2 + grad_out_exp * expx - "
                              "grad_out_negexp / expx")),
    ("LinearFunction", LINEAR.format(body="if ctx.needs_input_grad[0]:\n"
                                          "            grad_input = grad_output @ weight\n"
                                          "        if ctx.needs_input_grad[1]:\n"
                                          "            grad_weight = grad_output.t() @ input\n"
                                          "        if bias is not None and ctx.needs_input_grad[2]:\n"
                                          "            grad_bias = grad_output.sum(dim=0)").replace(
        "output = input.mm(weight.t())\n        if bias is not None:\n            output = output + bias",
        "output = input.mm(weight.t()) if bias is None else torch.addmm(bias, input, weight.t())")),
    ("LayerNorm", LAYERNORM.format(variance="torch.var_mean(input, -1, unbiased=False, keepdim=True)[0]",
                                   backward="(g.shape[-1] * g - g.sum(-1, keepdim=True) - normalised * "
                                            "(g * normalised).sum(-1, keepdim=True)) * rstd / g.shape[-1], "
                                            "None")),
    ("LogSumExp", LOGSUMEXP.format(forward="result = torch.logsumexp(input, dim=-1)",
                                   backward="return grad_output.unsqueeze(-1) * "
                                            "torch.softmax(input, dim=-1)")),
    ("ScipyConv2dFunction", L_CONV.replace("return input.new(result)",
                                           "return torch.from_numpy(result.copy())")
     .replace("return grad_output.new(grad_input), grad_output.new(grad_filter)",
              "return torch.from_numpy(grad_input.copy()), "
              "torch.from_numpy(np.ascontiguousarray(grad_filter))")),
    ("Cube", L_CUBE.replace("return cube_backward(grad_out, x)", "return 3 * grad_out * x * x")),
    ("Square", SQUARE.format(forward="ctx.save_for_backward(x)\n        return x * x",
                             backward="x, = ctx.saved_tensors\n        return x.mul(2).mul(grad_out)")),
]

CASES += LEARNER
RIGHT += LEARNER_RIGHT


# -- a learner's and a tutor's list, continued: slips in dims, reductions, orders, flags and saved tensors --
# Each wrong one fails its check with a sentence that names the cause in the learner's names.

L_LSE = LOGSUMEXP.format(forward=LSE_STABLE, backward="{backward}")
L_LN = LAYERNORM.format(variance=LN_VARIANCE, backward="{backward}")
L_BACKWARD_RIGHT = "return grad_out * 3 * x ** 2, grad_out * saved_grad_out * 6 * x"
L_SINH_RIGHT = "return grad_out * (expx + expnegx) / 2 + grad_out_exp * expx - grad_out_negexp * expnegx"

LEARNER2 = [
    # KillHead: the complement of the columns, a bound off by one, the values in the wrong order
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=KILLHEAD_RIGHT_BACKWARD.replace(
        "0:ctx.n", "ctx.n:")),
     "gradient", "inverted (for example a slice [:, n:] where [:, :n] is meant)"),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD.replace("[:, :n]", "[:, :n - 1]"),
                                     backward=KILLHEAD_RIGHT_BACKWARD),
     "forward", "is a slice's bound off by one ([:, :n - 1] or [:, :n + 1] where [:, :n] is meant)?"),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=KILLHEAD_RIGHT_BACKWARD.replace(
        "result, None", "None, result")),
     "backward returns", ("another order than forward takes its inputs (input, n): it returned None in "
                          "input's "
                         "place. Return one value per input, in forward's order: return grad_input, None.")),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward="result = torch.zeros_like(grad_output)\n"
                                     "        result[:, :ctx.n] = grad_output[:, :ctx.n]\n        "
                                     "return result, None"),
     "gradient", "the condition that chooses the entries is inverted"),
    # MyReLU: the output where the mask belongs, a mask returned without grad_output
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output * input.clamp(min=0)"),
     "gradient", "has an extra factor input"),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + "return input > 0"),
     "gradient", "it never uses grad_output"),
    # Exp: exp of the saved output, @ for *, grad_output changed in place, a detached output saved
    ("Exp", EXP.format(forward=L_EXP, backward="result, = ctx.saved_tensors\n"
                                               "        return grad_output * torch.exp(result)"),
     "gradient", "the derivative taken at forward's output instead of at x"),
    ("Exp", EXP.format(forward=L_EXP, backward="result, = ctx.saved_tensors\n        return grad_output "
                                               "@ result"),
     "backward returns", "@ between two vectors (as torch.dot) adds their products up into one number"),
    ("Exp", EXP.format(forward=L_EXP, backward="result, = ctx.saved_tensors\n        "
                                               "grad_output.mul_(result)\n"
                                               "        return grad_output"),
     "gradgradcheck", ("backward changes grad_output in place (grad_output.mul_(result)), a tensor that "
                       "requires "
                      "grad. When backward is differentiated again")),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result.detach())\n"
                               "        return result", backward=L_EXP_BACKWARD),
     "gradgradcheck", ("backward computes with the 1st tensor passed to save_for_backward, a detached copy "
                       "of forward's output")),
    # LinearFunction: weight's gradient transposed or multiplied the wrong way, bias summed over all,
    # the flags shifted by one
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.t().mm(input)",
                                                           "input.t().mm(grad_output)")),
     "backward returns", "for weight, whose shape is [2, 3]: it looks transposed"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.t().mm(input)",
                                                           "grad_output.mm(input.t())")),
     "gradient", ("A product that fits and gives a gradient's shape is grad_output.t() @ input, shaped like "
                 "weight.")),
    ("LinearFunction", LINEAR.format(body="if ctx.needs_input_grad[1]:\n            grad_input = "
                                          "grad_output.mm(weight)\n        if ctx.needs_input_grad[2]:\n"
                                          "            grad_weight = grad_output.t().mm(input)\n"
                                          "        if bias is not None:\n            grad_bias = "
                                          "grad_output.sum(0)"),
     "gradient", ("backward computes grad_input under ctx.needs_input_grad[1], weight's flag: input's is "
                 "ctx.needs_input_grad[0]")),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.sum(0)", "grad_output.sum()")),
     "backward returns", "Sum grad_output only over the dimensions bias does not have: grad_output.sum(0)."),
    # Something: a factor or the other input forgotten
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = (input1 * input2).sign()\n        return grad_output * s, "
                                   "grad_output * s"),
     "gradient", "lacks a factor input2"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = (input1 * input2).sign()\n"
                                   "        return grad_output * s * input2.abs(), grad_output * s * "
                                   "input1.abs()"),
     "gradient", "lacks a factor input2.sign()"),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = (input1 * input2).sign()\n"
                                   "        return grad_output * s * input1, grad_output * s * input2"),
     "gradient", "are swapped"),
    # LogSumExp: divided by the result, a dim dropped, log_softmax for softmax
    ("LogSumExp", L_LSE.format(backward="return grad_output.unsqueeze(-1) * input.exp() / "
                                        "result.unsqueeze(-1)"),
     "gradient", "backward divides by the output (the log of the sum) where the sum of the exponentials"),
    ("LogSumExp", L_LSE.format(backward="return grad_output.unsqueeze(-1) * (input - result).exp()"),
     "gradient", "grad_output.unsqueeze(dim)"),
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.amax(dim=-1)\n"
                                           "        result = m + (input - m).exp().sum(-1).log()",
                                   backward=LSE_GRAD),
     "forward", "keep the reduced dimensions where it is computed (keepdim=True)"),
    ("LogSumExp", L_LSE.format(backward="return grad_output.unsqueeze(-1) * torch.log_softmax(input, -1)"),
     "gradient", "the weights of grad_output are torch.log_softmax(input, -1), the log of the softmax"),
    # LayerNorm: sums for means, rstd forgotten, keepdim forgotten in backward, no centring
    ("LayerNorm", L_LN.format(backward="rstd * (g - g.sum(-1, keepdim=True) - normalised * (g * normalised)"
                                       ".sum(-1, keepdim=True)), None"),
     "gradient", "backward sums over the last dimension where the derivative takes means"),
    ("LayerNorm", L_LN.format(backward="g - g.mean(-1, keepdim=True) - normalised * (g * normalised)"
                                       ".mean(-1, keepdim=True), None"),
     "gradient", "one over the standard deviation of its row of input, entry by entry: a factor rstd"),
    ("LayerNorm", L_LN.format(backward=LN_GRAD.replace("g.mean(-1, keepdim=True)", "g.mean(-1)")),
     "gradient", ("the reduction is backward's own: a .mean() or .sum() over a dimension drops it unless "
                 "keepdim=True, and then no longer lines up with grad_output. Write "
                 "g.mean(-1, keepdim=True).")),
    ("LayerNorm", L_LN.format(backward=LN_GRAD).replace("(input - mean) * rstd", "input * rstd"),
     "forward", "the same all along each row and changes from one to the next: a term computed per row"),
    # ScipyConv2dFunction: 'valid' where 'full' belongs, the gradients returned in the wrong order
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input=CONV_GRAD_INPUT.replace("'full'", "'valid'"),
                                              grad_filter=CONV_GRAD_FILTER),
     "backward returns", "mode='valid' where mode='full' is meant"),
    ("ScipyConv2dFunction", L_CONV.replace("grad_output.new(grad_input), grad_output.new(grad_filter)",
                                           "grad_output.new(grad_filter), grad_output.new(grad_input)"),
     "backward returns", "return grad_input, grad_filter."),
    # Square: the output saved and used as x, the function where its derivative belongs, no grad_out
    ("Square", SQUARE.format(forward="y = x ** 2\n        ctx.save_for_backward(y)\n        return y",
                             backward="y, = ctx.saved_tensors\n        return grad_out * 2 * y"),
     "gradient", "the derivative taken at forward's output instead of at x"),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n        return "
                                                        "grad_out * x ** 2"),
     "gradient", "is grad_out times forward's output, which is not the derivative here"),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n        return 2 * x"),
     "gradient", "it never uses grad_out"),
    # Sinh: the / 2 forgotten, the wrong output taken, a term with the wrong saved tensor
    ("Sinh", SINH.format(body=L_SINH_RIGHT.replace("(expx + expnegx) / 2", "(expx + expnegx)")),
     "gradient", "2 times the right one"),
    ("Sinh", SINH.format(body=L_SINH_RIGHT).replace("Sinh.apply(x)[0]", "Sinh.apply(x)[1]"),
     "forward", "sinh returns output 1 of Sinh.apply(x), exp(x): sinh(x) is output 0, Sinh.apply(x)[0]"),
    ("Sinh", SINH.format(body=L_SINH_RIGHT.replace("- grad_out_negexp * expnegx",
                                                   "+ grad_out_negexp * expx")),
     "gradcheck", "backward's term of grad_out_negexp"),
    # Cube: CubeBackward's second gradient without saved_grad_out, saving too few, without grad_out
    ("Cube", L_CUBE.replace("grad_out * saved_grad_out * 6 * x", "grad_out * 6 * x"),
     "gradgradcheck", "The second derivative with respect to x lacks a factor grad_out: CubeBackward"),
    ("Cube", L_CUBE.replace("ctx.save_for_backward(x, grad_out)", "ctx.save_for_backward(x)"),
     "gradgradcheck", ("CubeBackward.backward unpacks 2 tensors (x, saved_grad_out = ctx.saved_tensors), but "
                      "CubeBackward saved 1 with ctx.save_for_backward(x)")),
    ("Cube", L_CUBE.replace(L_BACKWARD_RIGHT, "return grad_out * 3 * x ** 2, saved_grad_out * 6 * x"),
     "gradgradcheck", "CubeBackward.backward returns the same gradient for x whatever gradient it is given"),
    # BatchNorm: no None for eps, the mean's path with the wrong sign
    ("BatchNorm", batch_norm().replace("return batch_norm_backward(grad_out, X, mean, sqrt_var, "
                                       "ctx.eps), None",
                                       "return batch_norm_backward(grad_out, X, mean, sqrt_var, ctx.eps)"),
     "backward returns", "backward returned 1 value(s) but forward takes 2 input(s) (X, eps)"),
    ("BatchNorm", batch_norm(backward=BN_GRAD.replace("grad_out - g_mean", "grad_out + g_mean")),
     "gradient", "a term computed per channel (such as a mean, subtracted) is missing, extra"),
    # Tanh: tanh of the output, a jvp times the output, (1 - y) ** 2
    ("Tanh", TANH_MODERN.replace("return grad_output * (1 - y * y)",
                                 "return grad_output * (1 - torch.tanh(y) ** 2)"),
     "gradient", "the derivative taken at forward's output instead of at x"),
    ("Tanh", TANH_MODERN.replace("return x_t * (1 - y * y)", "return x_t * y"),
     "forward mode", "jvp returns the tangent times forward's output."),
    ("Tanh", TANH_MODERN.replace("return grad_output * (1 - y * y)", "return grad_output * (1 - y) ** 2"),
     "gradient", "the derivative is taken as (1 - y) ** 2, squaring 1 - y where it squares y alone"),
    # Softplus: the second derivative, exp(x) without its denominator
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x) * (1 - torch.sigmoid(x))"),
     "gradient", "is the second derivative of Softplus (the derivative of its derivative)"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.exp(x)"),
     "gradient", "the derivative is taken as exp(x), that of the exponential alone: the chain rule through"),
    # lesson 7 and NumPy: a Python if on the whole tensor, an attribute for save_for_backward, NumPy on a
    # 0-dimensional tensor, a jvp with a None for the input, the input clamped in forward
    ("Softplus", SOFTPLUS.format(forward="x if bool(x.min() > 20) else torch.log1p(torch.exp(x))",
                                 derivative="torch.sigmoid(x)"),
     "forward", "exp overflows to inf in float64"),
    ("Tanh", TANH_MODERN.replace("ctx.save_for_backward(output)", "ctx.y = output").replace(
        "y, = ctx.saved_tensors\n        return grad_output", "y = ctx.y\n        return grad_output"),
     "save_for_backward", "setup_context keeps its output as ctx.y, a plain attribute of ctx"),
    ("Exp", EXP.format(forward="result = torch.from_numpy(np.exp(x.numpy()))\n"
                               "        ctx.save_for_backward(result)\n        return result",
                       backward=L_EXP_BACKWARD),
     "forward", "torch.from_numpy was given a NumPy number, not an array"),
    ("Tanh", TANH_MODERN.replace("return x_t * (1 - y * y)", "return x_t * (1 - y * y), None"),
     "forward mode", "jvp returned 2 values where forward has 1 output(s)"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)").replace(
        "def forward(x):", "def forward(x):\n        x = x.clone()\n        x[x > 20] = 20"),
     "forward", "It is wrong where x is 40, 1000, above every x where it is right: is there a clamp"),
    # softsign: the abs forgotten
    ("softsign", _softsign("l2abs", "return g / (1 + x.abs()) ** 2", "return g / (1 + x) ** 2"),
     "gradient", "right wherever x is positive and wrong wherever it is negative"),
]

LEARNER2_RIGHT = [
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output.masked_fill(input <= 0, 0)")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + "return grad_output * "
                                                                            "(input > 0), None")),
    # a bias gradient left unsummed: autograd sums it down (a note, no cost)
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.sum(0)", "grad_output"))),
    ("LinearFunction", LINEAR.format(body="if ctx.needs_input_grad[0]:\n            grad_input = "
                                          "torch.einsum('no,oi->ni', grad_output, weight)\n"
                                          "        if ctx.needs_input_grad[1]:\n            grad_weight = "
                                          "torch.einsum('no,ni->oi', grad_output, input)\n"
                                          "        if bias is not None and ctx.needs_input_grad[2]:\n"
                                          "            grad_bias = grad_output.sum(dim=0)")
     .replace("output = input.mm(weight.t())\n        if bias is not None:\n            output = output "
              "+ bias",
              "output = torch.nn.functional.linear(input, weight, bias)")),
    ("Softplus", SOFTPLUS.format(forward="torch.where(x > 20, x, torch.log1p(torch.exp(x)))",
                                 derivative="torch.sigmoid(x)")),
    ("Softplus", L_SOFTPLUS.replace("ctx.save_for_backward(inputs[0])",
                                    "ctx.save_for_backward(output)").replace(
        "x, = ctx.saved_tensors\n        return grad_output * torch.sigmoid(x)",
        "y, = ctx.saved_tensors\n        return grad_output * -torch.expm1(-y)")),
    ("Tanh", TANH_MODERN.replace(L_TANH_SAVED, "ctx.save_for_backward(inputs[0])\n"
                                               "        ctx.save_for_forward(inputs[0])")
     .replace("return grad_output * (1 - y * y)", "return grad_output / torch.cosh(y) ** 2")
     .replace("return x_t * (1 - y * y)", "return x_t * (1 - torch.tanh(y) ** 2)")),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward="zeros = grad_output.new_zeros("
                                                                  "grad_output.shape[0], ctx.n)\n"
                                     "        return torch.cat([zeros, grad_output[:, ctx.n:]], dim=1), "
                                     "None")),
    ("LogSumExp", L_LSE.format(backward="return grad_output[..., None] * (input - result[..., None]).exp()")),
    ("LayerNorm", '''
class LayerNorm(Function):
    @staticmethod
    def forward(ctx, input, eps=1e-5):
        ctx.save_for_backward(input)
        ctx.eps = eps
        return torch.nn.functional.layer_norm(input, input.shape[-1:], eps=eps)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        mean = input.mean(-1, keepdim=True)
        rstd = (input.var(-1, unbiased=False, keepdim=True) + ctx.eps).rsqrt()
        xhat = (input - mean) * rstd
        g = grad_output
        return rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True)), None
'''),
    ("BatchNorm", batch_norm(sqrt_var="X.std(dim=(0, 2, 3))")),
    ("Sinh", SINH.format(body="cosh = (expx + expnegx).div(2)\n"
                              "        return grad_out * cosh + grad_out_exp * expx - grad_out_negexp * "
                              "expnegx")),
    ("Cube", L_CUBE.replace(L_BACKWARD_RIGHT, "gx = 6 * x * grad_out * saved_grad_out\n"
                                              "        return 3 * x.pow(2) * grad_out, gx")),
    ("Exp", EXP.format(forward="result = x.exp()\n        ctx.save_for_backward(result)\n        return "
                               "result",
                       backward="result, = ctx.saved_tensors\n        return result.mul(grad_output)")),
    ("softsign", _softsign("l2out", "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(output)")
     .replace("return g / (1 + x.abs()) ** 2", "return g * (1 - x.abs()) ** 2")),  # (1 - |y|)², y the output
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return grad_out * 2 * x.clone()")),
    ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n        return input * (input > 0)",
                             backward=MYRELU_LOADED + "return grad_output * (input > 0).to("
                                                      "grad_output.dtype)")),
]

CASES += LEARNER2
RIGHT += LEARNER2_RIGHT

# A custom op's backward returning a None too many: torch accepted it before 2.15, and refuses it since.
_EXTRA_NONE = _softsign("l2ret", "return g / (1 + x.abs()) ** 2", "return g / (1 + x.abs()) ** 2, None")
if tuple(int(n) for n in torch.__version__.split(".")[:2]) < (2, 15):
    RIGHT.append(("softsign", _EXTRA_NONE))
else:
    CASES.append(("softsign", _EXTRA_NONE, "backward returns", "return one value per input"))

# The wrong way four of them were once sent: none of these words may appear for them.
_ORDER, _MATMUL, _FLAGS, _KEEPDIM = (next(c[1] for c in LEARNER2 if words in c[3]) for words in (
    "it returned None in input's place", "grad_output.t() @ input", "weight's flag", "Write g.mean(-1"))
NEVER += [(_ORDER, "KillHead", "which is not a tensor"),
          (_MATMUL, "LinearFunction", "use input itself there"),
          (_FLAGS, "LinearFunction", "Test the argument first"),
          (_KEEPDIM, "LayerNorm", "When forward reduces a dimension")]


# -- right but unusual, a third list: other names, other APIs, other valid conventions --------------------
# Each keeps full marks: nothing the exercise states is broken, only written another way.

L3_MODERN = '''
class {name}(Function):
    @staticmethod
    def forward({args}):
        return {forward}

    @staticmethod
    def setup_context(ctx, inputs, output):
        {setup}

    @staticmethod
    def backward(ctx, {grads}):
        {backward}
'''
L3_SCIPY = SCIPY_CONV.format(grad_input="{grad_input}", grad_filter="{grad_filter}")

LEARNER3_RIGHT = [
    # KillHead: a column mask from arange, index_fill, torch.cat in forward
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=(
        "keep = (torch.arange(grad_output.shape[1]) >= ctx.n).to(grad_output.dtype)\n"
        "        return grad_output * keep, None"))),
    ("KillHead", KILLHEAD_ANY.format(forward="return input.index_fill(1, torch.arange(n), 0)", backward=(
        "return grad_output.index_fill(1, torch.arange(ctx.n), 0), None"))),
    ("KillHead", KILLHEAD_ANY.format(forward="return torch.cat([torch.zeros_like(input[:, :n]), input[:, "
                                             "n:]], "
                                             "dim=1)",
                                     backward="out = torch.zeros_like(grad_output)\n"
                                              "        out[:, ctx.n:] = grad_output[:, ctx.n:]\n"
                                              "        return out, None")),
    # MyReLU: torch.where keeping grad_output at 0, F.relu with the output saved, setup_context, no_grad
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + (
        "return torch.where(input < 0, torch.zeros_like(grad_output), grad_output)"))),
    ("MyReLU", "import torch.nn.functional as F\n" + MYRELU.format(
        forward="out = F.relu(input)\n        ctx.save_for_backward(out)\n        return out",
        backward="out, = ctx.saved_tensors\n        return grad_output * out.gt(0).type_as(grad_output)")),
    ("MyReLU", L3_MODERN.format(name="MyReLU", args="x", forward="torch.maximum(x, torch.zeros_like(x))",
                                setup="x, = inputs\n        ctx.save_for_backward(x)", grads="g",
                                backward="x, = ctx.saved_tensors\n        return g.mul(x >= 0)")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + (
        "if not ctx.needs_input_grad[0]:\n            return None\n        with torch.no_grad():\n"
        "            return grad_output * (input > 0)"))),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + (
        "grad_input = torch.empty_like(grad_output)\n        grad_input.copy_(grad_output)\n"
        "        grad_input.mul_((input > 0).double())\n        return grad_input"))),
    # Exp: setup_context saving the output, needs_input_grad, torch.mul
    ("Exp", L3_MODERN.format(name="Exp", args="x", forward="torch.exp(x)",
                             setup="ctx.save_for_backward(output)", grads="grad_output",
                             backward="y, = ctx.saved_tensors\n        return grad_output * y")),
    ("Exp", EXP.format(forward=L_EXP, backward="if ctx.needs_input_grad[0]:\n            result, = "
                                               "ctx.saved_tensors\n            return torch.mul(grad_output, "
                                               "result)\n        return None")),
    # LinearFunction: @ and .mT, a flag for the bias on ctx, setup_context, F.linear with einsum for bias
    ("LinearFunction", '''
class LinearFunction(Function):
    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        y = x @ w.mT
        if b is not None:
            y += b  # in place, on a tensor forward itself made
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        db = dy.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return (dy @ w if ctx.needs_input_grad[0] else None, dy.mT @ x if ctx.needs_input_grad[1] else None,
                db)
'''),
    ("LinearFunction", '''
class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias=None):
        return torch.nn.functional.linear(input, weight, bias)

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, *rest = inputs
        ctx.save_for_backward(input, weight)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        grad_bias = None
        if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
            grad_bias = torch.einsum("no->o", grad_output)
        grad_input, grad_weight = (torch.matmul(grad_output, weight) if ctx.needs_input_grad[0] else None,
                                   torch.matmul(grad_output.t(), input) if ctx.needs_input_grad[1] else None)
        return grad_input, grad_weight, grad_bias
'''),
    # Something: the sign of the product, saved output, setup_context, needs_input_grad
    ("Something", SOMETHING.format(forward="out = (input1 * input2).abs()\n        "
                                           "ctx.save_for_backward(input1, input2)\n        return out",
                                   backward=SOMETHING_LOADED + "g = grad_output * torch.sign(input1) * "
                                   "torch.sign(input2)\n        return g * input2, g * input1")),
    ("Something", L3_MODERN.format(name="Something", args="u, v", forward="torch.abs(u * v)",
                                   setup="ctx.save_for_backward(*inputs)", grads="g",
                                   backward="u, v = ctx.saved_tensors\n        du = dv = None\n"
                                            "        if ctx.needs_input_grad[0]:\n"
                                            "            du = g * v.abs() * u.sign()\n"
                                            "        if ctx.needs_input_grad[1]:\n"
                                            "            dv = g * u.abs() * v.sign()\n"
                                            "        return du, dv")),
    # LogSumExp: max via .values and unsqueeze, softmax in backward from the saved input alone
    ("LogSumExp", '''
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x):
        m = x.max(dim=-1).values
        ctx.save_for_backward(x)
        return m + torch.log(torch.sum(torch.exp(x - m.unsqueeze(-1)), dim=-1))

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g.unsqueeze(-1) * torch.nn.functional.softmax(x, dim=-1)
'''),
    ("LogSumExp", L_LSE.format(backward="p = torch.exp(input - result.unsqueeze(-1))\n"
                                        "        return p.mul_(grad_output.unsqueeze(-1))")),
    ("LogSumExp", LOGSUMEXP.format(forward="result = torch.logsumexp(input, dim=-1, "
                                           "keepdim=True).squeeze(-1)",
                                   backward="return torch.einsum('...,...i->...i', grad_output, "
                                            "(input - result[..., None]).exp())")),
    # LayerNorm: the standard deviation saved in place of its reciprocal, var with correction=0
    ("LayerNorm", '''
class LayerNorm(Function):
    @staticmethod
    def forward(ctx, input, eps=1e-5):
        mu = input.mean(dim=-1, keepdim=True)
        sigma = torch.sqrt(input.var(dim=-1, correction=0, keepdim=True) + eps)
        xhat = (input - mu) / sigma
        ctx.save_for_backward(xhat, sigma)
        return xhat

    @staticmethod
    def backward(ctx, dy):
        xhat, sigma = ctx.saved_tensors
        n = xhat.shape[-1]
        dx = (n * dy - dy.sum(-1, keepdim=True) - xhat * (dy * xhat).sum(-1, keepdim=True)) / (n * sigma)
        return dx, None
'''),
    ("LayerNorm", LAYERNORM.format(variance="(input - mean).pow(2).mean(-1).unsqueeze(-1)",
                                   backward="rstd * (g - g.mean(-1, keepdim=True) - normalised * "
                                            "torch.mean(g * normalised, dim=-1, keepdim=True))")
     .replace("        return rstd", "        return rstd").replace(
        "keepdim=True))\n", "keepdim=True)), None\n")),
    # ScipyConv2dFunction: np.flip and the flipped grad_output, torch.as_tensor / torch.tensor
    ("ScipyConv2dFunction", L3_SCIPY.format(
        grad_input="correlate2d(grad_output.numpy(), np.flip(filter.numpy()), mode='full')",
        grad_filter="convolve2d(input.numpy(), grad_output.numpy()[::-1, ::-1], mode='valid')")),
    ("ScipyConv2dFunction", L_CONV.replace("return input.new(result)",
                                           "return torch.as_tensor(result, dtype=input.dtype)")
     .replace("return grad_output.new(grad_input), grad_output.new(grad_filter)",
              "return torch.tensor(grad_input), torch.tensor(grad_filter.copy())")),
    # Square: setup_context, x + x, needs_input_grad
    ("Square", L3_MODERN.format(name="Square", args="x", forward="x.square()",
                                setup="ctx.save_for_backward(inputs[0])", grads="grad_out",
                                backward="x, = ctx.saved_tensors\n"
                                         "        return torch.mul(grad_out, x + x)")),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        if not ctx.needs_input_grad[0]:\n"
                                                       "            return None\n"
                                                       "        return 2.0 * x * grad_out")),
    # Sinh: cosh of the saved input, exp(-x) as 1 / exp(x), the wrapper unpacking the three outputs
    ("Sinh", SINH.format(body="return grad_out * torch.cosh(x) + grad_out_exp * expx - grad_out_negexp * "
                              "expnegx").replace("ctx.save_for_backward(expx, expnegx)",
                                                 "ctx.save_for_backward(x, expx, expnegx)")
     .replace("expx, expnegx = ctx.saved_tensors", "x, expx, expnegx = ctx.saved_tensors")),
    ("Sinh", SINH.format(body=L_SINH_RIGHT).replace("expx, expnegx = torch.exp(x), torch.exp(-x)",
                                                    "expx = torch.exp(x)\n        expnegx = 1 / expx")
     .replace("return Sinh.apply(x)[0]", "out, _, _ = Sinh.apply(x)\n    return out")),
    ("Sinh", SINH.format(body="cosh = 0.5 * (expx + expnegx)\n        grad_x = grad_out * cosh\n"
                              "        if grad_out_exp is not None:\n            grad_x = grad_x + "
                              "grad_out_exp * expx\n"
                              "        if grad_out_negexp is not None:\n"
                              "            grad_x = grad_x - grad_out_negexp * expnegx\n        return "
                              "grad_x")),
    # Cube: CubeBackward in PyTorch, its tensors saved in the other order, the gradients named
    ("Cube", L_CUBE.replace("return cube_backward(grad_out, x)", "return grad_out * 3 * x.pow(2)")
     .replace("ctx.save_for_backward(x, grad_out)", "ctx.save_for_backward(grad_out, x)")
     .replace("x, saved_grad_out = ctx.saved_tensors", "saved_grad_out, x = ctx.saved_tensors")),
    ("Cube", L_CUBE.replace(L_BACKWARD_RIGHT, "d_grad = 3 * grad_out * x * x\n"
                                              "        d_x = 6 * grad_out * saved_grad_out * x\n"
                                              "        return d_grad, d_x")
     .replace("x, = ctx.saved_tensors\n        return CubeBackward",
              "(x,) = ctx.saved_tensors\n        return CubeBackward")),
    ("Cube", L_CUBE.replace("return x ** 3", "return x * x * x")
     .replace("x, = ctx.saved_tensors\n        return CubeBackward.apply(grad_out, x)",
              "x, = ctx.saved_tensors\n        grad_x = CubeBackward.apply(grad_out, x)\n        return "
              "grad_x")),
    # BatchNorm: std via torch.std and view, the sigma path written through sigma itself
    ("BatchNorm", '''
class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        C = X.shape[1]
        mean = X.mean(dim=(0, 2, 3)).view(1, C, 1, 1)
        std = torch.std(X, dim=(0, 2, 3), correction=1).view(1, C, 1, 1)
        ctx.save_for_backward(X, mean, std)
        ctx.eps = eps
        return (X - mean) / (std + eps)

    @staticmethod
    def backward(ctx, grad_out):
        X, mean, std = ctx.saved_tensors
        n = X.numel() // X.shape[1]
        xc = X - mean
        d = std + ctx.eps
        dstd = -(grad_out * xc).sum(dim=(0, 2, 3), keepdim=True) / d ** 2
        dX = (grad_out - grad_out.mean(dim=(0, 2, 3), keepdim=True)) / d + dstd * xc / ((n - 1) * std)
        return dX, None
'''),
    ("BatchNorm", batch_norm(sqrt_var="torch.sqrt(X.var(dim=(0, 2, 3), correction=1))",
                             denominator="(sqrt_var + eps)[None, :, None, None]")),
    # Tanh: the input saved and tanh recomputed, the jvp through cosh
    ("Tanh", TANH_MODERN.replace(L_TANH_SAVED, "x, = inputs\n        ctx.save_for_backward(x)\n"
                                               "        ctx.save_for_forward(x)")
     .replace("return grad_output * (1 - y * y)", "return grad_output * (1 - torch.tanh(y).pow(2))")
     .replace("return x_t * (1 - y * y)", "return x_t / torch.cosh(y).square()")),
    ("Tanh", TANH_MODERN.replace("return torch.tanh(x)", "return x.tanh()")
     .replace("return grad_output * (1 - y * y)", "return grad_output - grad_output * y ** 2")
     .replace("return x_t * (1 - y * y)", "return x_t.mul(1 - y.square())")),
    # Softplus: logaddexp, relu + log1p, expit
    ("Softplus", SOFTPLUS.format(forward="torch.logaddexp(torch.zeros_like(x), x)",
                                 derivative="torch.special.expit(x)")),
    ("Softplus", SOFTPLUS.format(forward="torch.relu(x) + torch.log1p(torch.exp(-torch.abs(x)))",
                                 derivative="torch.exp(-torch.nn.functional.softplus(-x))")),
    # softsign: another fake, the square written as a product, the input saved under another name
    ("softsign", _softsign("l3fake", "return torch.empty_like(x)", "return x.new_empty(x.shape)")),
    ("softsign", _softsign("l3prod", "return g / (1 + x.abs()) ** 2",
                           "d = 1 + x.abs()\n    return g / (d * d)")
     .replace("x / (1 + x.abs())", "x / (x.abs() + 1)")),
]

# Modern PyTorch too: an in-place exp on a fresh copy, set_materialize_grads(False), once_differentiable
# on first-order problems, a float32 mask, no_grad in a first-order backward, the variance saved for BatchNorm
LEARNER3_RIGHT += [
    ("Exp", EXP.format(forward="result = x.clone()\n        result.exp_()  # in place, on a fresh copy\n"
                               "        ctx.save_for_backward(result)\n        return result",
                       backward=L_EXP_BACKWARD)),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(x, result)\n        "
                               "return result",
                       backward="_, result = ctx.saved_tensors\n        return grad_output * result")),
    ("Exp", EXP.format(forward="ctx.set_materialize_grads(False)\n        result = torch.exp(x)\n"
                               "        ctx.save_for_backward(result)\n        return result",
                       backward="if grad_output is None:\n            return None\n"
                                "        result, = ctx.saved_tensors\n        return grad_output * result")),
    ("MyReLU", "from torch.autograd.function import once_differentiable\n" + MYRELU.format(
        forward=MYRELU_SAVED, backward=MYRELU_LOADED + "return grad_output * (input >= 0)").replace(
        "    @staticmethod\n    def backward", "    @staticmethod\n    @once_differentiable\n    def "
                                               "backward")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output.clone().masked_fill_(input < 0, 0)")),
    ("KillHead", KILLHEAD_ANY.format(forward="mask = torch.ones(input.shape[1])  # float32\n"
                                             "        mask[:n] = 0\n        return input * mask",
                                     backward="mask = torch.ones(grad_output.shape[1])\n"
                                              "        mask[:ctx.n] = 0\n        return grad_output * "
                                              "mask, None")),
    ("KillHead", KILLHEAD_ANY.format(forward="ctx.set_materialize_grads(False)\n        " + L_KILLHEAD,
                                     backward="if grad_output is None:\n            return None, None\n"
                                              "        " + KILLHEAD_RIGHT_BACKWARD)),
    ("LinearFunction", LINEAR.format(body="input_needed, weight_needed = ctx.needs_input_grad[:2]\n"
                                          "        if input_needed:\n            grad_input = "
                                          "grad_output.mm(weight)\n        if weight_needed:\n"
                                          "            grad_weight = input.t().mm(grad_output).t()\n"
                                          "        if bias is not None and ctx.needs_input_grad[2]:\n"
                                          "            grad_bias = grad_output.sum(0)").replace(
        "output = output + bias", "output = output + bias.unsqueeze(0).expand_as(output)")),
    ("LinearFunction", "from torch.autograd.function import once_differentiable\n"
     + LINEAR.format(body=L_LINEAR)
     .replace("    @staticmethod\n    def backward", "    @staticmethod\n    @once_differentiable\n    "
                                                     "def backward")),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "with torch.no_grad():\n            s = torch.sign(input1 * input2)\n"
                                   "            return grad_output * s * input2, grad_output * s * input1")),
    ("LayerNorm", '''
class LayerNorm(Function):
    @staticmethod
    def forward(ctx, input, eps=1e-5):
        ctx.save_for_backward(input)
        ctx.eps = eps
        mean = input.mean(-1, keepdim=True)
        var = ((input - mean) ** 2).mean(-1, keepdim=True)
        return (input - mean) / torch.sqrt(var + eps)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        n = input.shape[-1]
        mean = input.mean(-1, keepdim=True)
        var = ((input - mean) ** 2).mean(-1, keepdim=True)
        inv = 1.0 / torch.sqrt(var + ctx.eps)
        xhat = (input - mean) * inv
        dxhat = grad_output
        dvar = (dxhat * (input - mean)).sum(-1, keepdim=True) * -0.5 * inv ** 3
        dmean = -(dxhat * inv).sum(-1, keepdim=True) + dvar * (-2.0 * (input - mean)).mean(-1, keepdim=True)
        return dxhat * inv + dvar * 2.0 * (input - mean) / n + dmean / n, None
'''),
    ("LogSumExp", "from torch.autograd.function import once_differentiable\n" + LOGSUMEXP.format(
        forward="result = torch.logsumexp(input, -1)", backward=LSE_GRAD).replace(
        "    @staticmethod\n    def backward", "    @staticmethod\n    @once_differentiable\n    def "
                                               "backward")),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n        g = "
                                                        "grad_out.clone()\n"
                                                       "        g.mul_(x)\n        g.mul_(2)\n        "
                                                       "return g")),
    ("Square", SQUARE.format(forward="ctx.save_for_backward(x)\n        return torch.pow(x, 2)",
                             backward="(x,) = ctx.saved_tensors\n        return grad_out * x * 2")),
    ("Sinh", SINH.format(body="cosh = (expx + expnegx) / 2\n        grad = grad_out * cosh if grad_out "
                              "is not None "
                              "else torch.zeros_like(expx)\n"
                              "        if grad_out_exp is not None:\n            grad = grad + "
                              "grad_out_exp * expx\n"
                              "        if grad_out_negexp is not None:\n            grad = grad - "
                              "grad_out_negexp * expnegx\n"
                              "        return grad").replace("        ctx.save_for_backward(expx, expnegx)\n",
                                                          "        ctx.save_for_backward(expx, expnegx)\n"
                                                          "        ctx.set_materialize_grads(False)\n")),
    ("Cube", L_CUBE.replace('''    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
''', '''    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
''')),
    ("Cube", L_CUBE.replace("return grad_out * 3 * x ** 2, grad_out * saved_grad_out * 6 * x",
                            "if not any(ctx.needs_input_grad):\n            return None, None\n"
                            "        return grad_out * 3 * x ** 2, grad_out * saved_grad_out * 6 * x")),
    ("BatchNorm", '''
class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        dims = (0, 2, 3)
        mean = X.mean(dim=dims, keepdim=True)
        var = ((X - mean) ** 2).sum(dim=dims, keepdim=True) / (X.numel() // X.shape[1] - 1)
        ctx.save_for_backward(X, mean, var)
        ctx.eps = eps
        return (X - mean) / (var.sqrt() + eps)

    @staticmethod
    def backward(ctx, grad_out):
        X, mean, var = ctx.saved_tensors
        dims, n = (0, 2, 3), X.numel() // X.shape[1]
        std = var.sqrt()
        xc, d = X - mean, std + ctx.eps
        dvar = -(grad_out * xc).sum(dims, keepdim=True) / d ** 2 / (2 * std)
        return (grad_out - grad_out.mean(dims, keepdim=True)) / d + dvar * 2 * xc / (n - 1), None
'''),
    ("Tanh", TANH_MODERN.replace(L_TANH_SAVED, "ctx.save_for_backward(output)\n        "
                                               "ctx.save_for_forward(inputs[0])")
     .replace("return x_t * (1 - y * y)", "return x_t * (1 - torch.tanh(y) ** 2)  # y is x here")),
    ("Tanh", TANH_MODERN.replace("return torch.tanh(x)", "return torch.tanh(x.double()).to(x.dtype)")),
    ("Softplus", SOFTPLUS.format(forward="torch.where(x > 0, x + torch.log1p(torch.exp(-x)), "
                                         "torch.log1p(torch.exp(x)))",
                                 derivative="torch.where(x >= 0, 1 / (1 + torch.exp(-x)), torch.exp(x) / "
                                            "(1 + torch.exp(x)))")),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)").replace(
        "ctx.save_for_backward(inputs[0])", "x, = inputs\n        ctx.save_for_backward(x)")),
    # (softsign keeping x as ctx.x in its setup_context is wrong, as in a Function: WAYS_WRONG below)
    ("softsign", '''
@torch.library.custom_op("learner_b2api::softsign", mutates_args=())
def softsign(x: torch.Tensor) -> torch.Tensor:
    return x / (1 + torch.abs(x))


torch.library.register_fake("learner_b2api::softsign")(lambda x: torch.empty_like(x))


def backward(ctx, grad):
    x, = ctx.saved_tensors
    return grad * torch.reciprocal((1 + x.abs()) ** 2)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


torch.library.register_autograd("learner_b2api::softsign", backward, setup_context=setup_context)
'''),
    ("ScipyConv2dFunction", L_CONV.replace("result = correlate2d(input.numpy(), filter.numpy(), "
                                           "mode='valid')",
                                           "result = correlate2d(input.detach().numpy(), "
                                           "filter.detach().numpy())")),
]

# A float64 mask, heaviside's 1/2 at the kink, setup_context for KillHead, a zero gradient nobody needs, as
# many gradients as inputs, F.conv2d, a fake that computes, a 1-tuple, companion calls wrapped or aliased
LEARNER3_RIGHT += [
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + "return grad_output * (input "
                                                                            "> 0).double()")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                             "return grad_output * torch.heaviside(input, torch.tensor(0.5, "
                             "dtype=input.dtype))")),
    ("KillHead", '''
class KillHead(Function):
    @staticmethod
    def forward(input, n):
        out = input.clone()
        out[:, :n] = 0
        return out

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, ctx.n = inputs

    @staticmethod
    def backward(ctx, grad_output):
        grad_output = grad_output.clone()
        grad_output[:, :ctx.n] = 0
        return grad_output, None
'''),
    ("LinearFunction", LINEAR.format(body=L_LINEAR).replace("        return grad_input, grad_weight, "
                                                            "grad_bias",
        "        grads = (grad_input, grad_weight, grad_bias)\n        return "
        "grads[:len(ctx.needs_input_grad)]")),
    ("ScipyConv2dFunction", '''
import torch.nn.functional as F


class ScipyConv2dFunction(Function):
    @staticmethod
    def forward(ctx, input, filter):
        ctx.save_for_backward(input, filter)
        return F.conv2d(input[None, None], filter[None, None])[0, 0]

    @staticmethod
    def backward(ctx, grad_output):
        input, filter = ctx.saved_tensors
        grad_input = F.conv_transpose2d(grad_output[None, None], filter[None, None])[0, 0]
        grad_filter = F.conv2d(input[None, None], grad_output[None, None])[0, 0]
        return grad_input, grad_filter
'''),
    ("softsign", _softsign("b3fake", "return torch.empty_like(x)", "return x / (1 + x.abs())")),
    ("softsign", _softsign("b3tuple", "return g / (1 + x.abs()) ** 2", "return (g / (1 + x.abs()) ** 2,)")),
    ("softsign", _softsign("b3list", "mutates_args=()", "mutates_args=[]")),
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.max(-1, keepdim=True)[0]\n"
                                           "        result = (m + torch.log(torch.exp(input - m).sum(-1, "
                                           "keepdim=True))).squeeze(-1)",
                                   backward="e = torch.exp(input - input.max(-1, keepdim=True)[0])\n"
                                            "        return grad_output.unsqueeze(-1) * e / e.sum(-1, "
                                            "keepdim=True)")),
    ("Exp", EXP.format(forward=L_EXP, backward="result, = ctx.saved_tensors\n        return (grad_output "
                                               "* result,)")),
    ("Sinh", SINH.format(body="return (grad_out * (expx + expnegx) / 2 + grad_out_exp * expx - "
                              "grad_out_negexp * expnegx,)")),
    ("Cube", L_CUBE.replace("return CubeBackward.apply(grad_out, x)", "return "
                                                                      "CubeBackward.apply(grad_out, x) * "
                                                                      "1.0")),
    ("Cube", L_CUBE.replace("return CubeBackward.apply(grad_out, x)", "apply = CubeBackward.apply\n      "
                                                                      "  return apply(grad_out, x)")),
    ("Square", SQUARE.format(forward="y = x * x\n        ctx.save_for_backward(x, y)\n        return y",
                             backward="x, _ = ctx.saved_tensors\n        return 2 * x * grad_out")),
    ("Something", SOMETHING.format(forward="ctx.save_for_backward(input2, input1)\n        return "
                                           "(input1 * input2).abs()",
                                   backward="v, u = ctx.saved_tensors\n        s = (u * v).sign()\n"
                                            "        return grad_output * s * v, grad_output * s * u")),
    ("Tanh", TANH_MODERN.replace(L_TANH_SAVED, "y = output\n        ctx.save_for_backward(y)\n        "
                                               "ctx.save_for_forward(y)")
     .replace("return x_t * (1 - y * y)", "out = x_t.clone()\n        out.mul_(1 - y * y)\n        "
                                          "return out")),
    ("Softplus", SOFTPLUS.format(forward="torch.nn.functional.softplus(x)", derivative="torch.sigmoid(x)")),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.exp(x - (x.clamp(min=0) + "
                                                            "torch.log1p(torch.exp(-x.abs()))))")),
    ("BatchNorm", batch_norm().replace("ctx.eps = eps", "ctx.eps = float(eps)\n        ctx.shape = X.shape")),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD).replace(
        "rstd = (", "rstd = 1 / torch.sqrt(").replace(").rsqrt()", ")")),
]

# Other names for ctx and the gradients, a base class with the backward, sinh as a lambda, a helper
# that calls the companion
LEARNER3_RIGHT += [
    ("Exp", '''
class Exp(torch.autograd.Function):
    """exp, its output saved."""

    @staticmethod
    def forward(context, x):
        y = x.exp()
        context.save_for_backward(y)
        return y

    @staticmethod
    def backward(context, dy):
        (y,) = context.saved_tensors
        return Exp._scale(dy, y)

    @staticmethod
    def _scale(a, b):
        return a * b
'''),
    ("MyReLU", '''
class _Elementwise(Function):
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * ctx.derivative(x)


class MyReLU(_Elementwise):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        ctx.derivative = lambda t: (t > 0).to(t.dtype)
        return input.clamp(min=0)
'''),
    ("Sinh", SINH.format(body=L_SINH_RIGHT).replace("def sinh(x):\n    return Sinh.apply(x)[0]",
                                                    "sinh = lambda x: Sinh.apply(x)[0]  # noqa")),
    ("Sinh", SINH.format(body=L_SINH_RIGHT).replace("return Sinh.apply(x)[0]", "y, *_ = Sinh.apply(x)\n  "
                                                                               "  return y")),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n        return grad_out "
                                                        "* 2 * x")
     .replace("class Square(Function)", "class Square(torch.autograd.Function)")),
    ("Cube", L_CUBE.replace("return CubeBackward.apply(grad_out, x)", "return _cube_grad(grad_out, x)")
     + "\n\ndef _cube_grad(g, x):\n    return CubeBackward.apply(g, x)\n"),
    ("LogSumExp", L_LSE.format(backward="w = torch.softmax(input, dim=input.dim() - 1)\n"
                                        "        return w * grad_output.reshape(*grad_output.shape, 1)")),
    ("LayerNorm", '''
class LayerNorm(Function):
    @staticmethod
    def forward(x, eps=1e-5):
        mu = x.mean(-1, keepdim=True)
        return (x - mu) * torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x = inputs[0]
        eps = inputs[1] if len(inputs) > 1 else 1e-5
        ctx.save_for_backward(output, torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps))

    @staticmethod
    def backward(ctx, g):
        y, r = ctx.saved_tensors
        return r * (g - g.mean(-1, keepdim=True) - y * (g * y).mean(-1, keepdim=True)), None
'''),
    ("Tanh", TANH_MODERN.replace("class Tanh(Function)", "class Tanh(torch.autograd.Function)")
     .replace("def backward(ctx, grad_output)", "def backward(c, gy)").replace("return grad_output * (1 "
                                                                               "- y * y)", "return gy * "
                                                                                           "(1 - y * y)")
     .replace("def jvp(ctx, x_t)", "def jvp(c, tangent)").replace("return x_t * (1 - y * y)", "return "
                                                                                              "tangent * "
                                                                                              "(1 - y * y)")
     .replace("y, = ctx.saved_tensors", "y, = c.saved_tensors")),
    ("KillHead", KILLHEAD_ANY.format(forward="result = input.detach().clone()\n        result[:, :n] = "
                                             "0\n        return result",
                                     backward=KILLHEAD_RIGHT_BACKWARD)),
    ("BatchNorm", batch_norm(backward="(grad_out - g_mean) / denom + centred * unsqueeze_all("
                                      "grad_sqrt_var) / ((N - 1) * unsqueeze_all(sqrt_var))")),
]

# the Function under another name, bound to the graded one (the batch grader looks Exp up in the notebook)
LEARNER3_RIGHT.append(("Exp", EXP.format(forward=L_EXP, backward=L_EXP_BACKWARD).replace(
    "class Exp(Function)", "class ExpFunction(Function)") + "\n\nExp = ExpFunction\n"))

# A non-contiguous output, autograd inside a first-order backward, the statistics of a reshape, torch.ops's
# op defined with torch.library.define, a companion that calls itself, Exp.apply in Exp's own backward
LEARNER3_RIGHT += [
    ("LinearFunction", LINEAR.format(body=L_LINEAR).replace("output = input.mm(weight.t())",
                                                            "output = weight.mm(input.t()).t()  # not "
                                                            "contiguous")),
    ("MyReLU", MYRELU.format(forward="out = input.relu()\n        ctx.save_for_backward(out)\n        "
                                     "return out",
                             backward="out, = ctx.saved_tensors\n        return grad_output * out.sign()")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + (
        "with torch.enable_grad():\n            x = input.detach().requires_grad_()\n"
        "            return torch.autograd.grad(x.clamp(min=0), x, grad_output)[0]"))),
    ("BatchNorm", '''
class BatchNorm(Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        C = X.shape[1]
        flat = X.transpose(0, 1).reshape(C, -1)
        mean, std = flat.mean(1), flat.std(1)
        ctx.save_for_backward(X)
        ctx.eps = eps
        return (X - mean.view(1, C, 1, 1)) / (std.view(1, C, 1, 1) + eps)

    @staticmethod
    def backward(ctx, grad_out):
        X, = ctx.saved_tensors
        C = X.shape[1]
        flat = X.transpose(0, 1).reshape(C, -1)
        n = flat.shape[1]
        mean, std = flat.mean(1).view(1, C, 1, 1), flat.std(1).view(1, C, 1, 1)
        xc, d = X - mean, std + ctx.eps
        s = (grad_out * xc).sum((0, 2, 3), keepdim=True)
        g_mean = grad_out.mean((0, 2, 3), keepdim=True)
        return (grad_out - g_mean) / d - xc * s / (d * d * std * (n - 1)), None
'''),
    ("LogSumExp", LOGSUMEXP.format(forward="result = torch.special.logsumexp(input, -1)", backward=LSE_GRAD)),
    ("Sinh", SINH.format(body="return grad_out * torch.cosh(x) + grad_out_exp * expx - grad_out_negexp * "
                              "expnegx")
     .replace("return (expx - expnegx) / 2, expx, expnegx", "return torch.sinh(x), expx, expnegx")
     .replace("ctx.save_for_backward(expx, expnegx)", "ctx.save_for_backward(x, expx, expnegx)")
     .replace("expx, expnegx = ctx.saved_tensors", "x, expx, expnegx = ctx.saved_tensors")),
    ("Cube", L_CUBE.replace("return x ** 3", "return x.pow(3)").replace(
        "return CubeBackward.apply(grad_out, x)", "grad, = (CubeBackward.apply(grad_out, x),)\n        "
                                                  "return grad")),
    ("Exp", EXP.format(forward="out = torch.empty_like(x)\n        torch.exp(x, out=out)\n"
                               "        ctx.save_for_backward(out)\n        return out",
                       backward="return grad_output * ctx.saved_tensors[0]")),
    ("softsign", _softsign("l3dev", "mutates_args=()", 'mutates_args=(), device_types="cpu"')),
    ("softsign", '''
torch.library.define("learner_l3def::softsign", "(Tensor x) -> Tensor")


@torch.library.impl("learner_l3def::softsign", "default")
def _impl(x):
    return x / (1 + x.abs())


@torch.library.register_fake("learner_l3def::softsign")
def _fake(x):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _bw(ctx, g):
    x, = ctx.saved_tensors
    return g / (1 + x.abs()) ** 2


torch.library.register_autograd("learner_l3def::softsign", _bw, setup_context=_setup)
softsign = torch.ops.learner_l3def.softsign
'''),
    ("Softplus", SOFTPLUS.format(forward="torch.where(x < -30, torch.exp(x), x.clamp(min=0) + "
                                         "torch.log1p(torch.exp(-x.abs())))",
                                 derivative="torch.sigmoid(x)")),
    ("KillHead", KILLHEAD_ANY.format(forward="mask = torch.ones(input.shape[1], dtype=torch.long)\n      "
                                             "  mask[:n] = 0\n"
                                             "        return input * mask",
                                     backward="return grad_output * (torch.arange(grad_output.shape[1]) "
                                              ">= ctx.n), None")),
    ("Tanh", TANH_MODERN.replace("return torch.tanh(x)", "e = torch.exp(-2 * x.abs())\n        return "
                                                         "torch.sign(x) * (1 - e) / (1 + e)")),
]
LEARNER3_RIGHT += [
    ("Cube", L_CUBE.replace(L_BACKWARD_RIGHT, "return CubeBackward.apply(grad_out, x), grad_out * "
                                              "saved_grad_out * 6 * x")),
    ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                       "        return "
                                                       "torch.addcmul(torch.zeros_like(x), grad_out, x, "
                                                       "value=2)")),
    ("Exp", EXP.format(forward="ctx.save_for_backward(x)\n        return torch.exp(x)",
                       backward="x, = ctx.saved_tensors\n        return grad_output * Exp.apply(x)")),
]

# Backward (or jvp) partly in float32 on first-order problems: within gradcheck's tolerance, a note at most,
# in forward mode and under torch.func.grad as in the gradient check
LEARNER3_RIGHT += [
    ("LogSumExp", L_LSE.format(backward="return (grad_output.unsqueeze(-1).float() * "
                                        "torch.softmax(input.float(), -1)).double()")),
    ("LayerNorm", L_LN.format(backward="(rstd.float() * (g.float() - g.float().mean(-1, keepdim=True) - "
                                       "normalised.float() * (g.float() * normalised.float()).mean(-1, "
                                       "keepdim=True))).to(g.dtype), None")),
    ("BatchNorm", batch_norm().replace("return batch_norm_backward(grad_out, X, mean, sqrt_var, "
                                       "ctx.eps), None",
                                       "g = batch_norm_backward(grad_out.float(), X.float(), "
                                       "mean.float(), sqrt_var.float(), ctx.eps)\n        return "
                                       "g.to(X.dtype), None")),
    ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                   "s = torch.sign(input1 * input2).float()\n"
                                   "        return (grad_output.float() * s * input2.float()).double(), "
                                   "(grad_output.float() * s * input1.float()).double()")),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input="convolve2d(grad_output.numpy().astype(np.float32), "
                                                         "filter.numpy().astype(np.float32), mode='full')",
                                              grad_filter="correlate2d(input.numpy().astype(np.float32), "
                                                          "grad_output.numpy().astype(np.float32), "
                                                          "mode='valid')")
     .replace("return grad_output.new(grad_input), grad_output.new(grad_filter)",
              "return torch.from_numpy(grad_input).to(grad_output.dtype), "
              "torch.from_numpy(grad_filter).to(grad_output.dtype)")),
    ("Tanh", TANH_MODERN.replace("return grad_output * (1 - y * y)", "return (grad_output.float() * (1 - "
                                                                     "y.float() ** 2)).to(y.dtype)")
     .replace("return x_t * (1 - y * y)", "return (x_t.float() * (1 - y.float() ** 2)).to(y.dtype)")),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x.float()).to(x.dtype)")),
    ("softsign", _softsign("l3f32", "return g / (1 + x.abs()) ** 2", "return (g.float() / (1 + "
                                                                     "x.float().abs()) ** 2).to(g.dtype)")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + "return (grad_output.float() "
                                                                            "* (input > "
                                                                            "0)).to(grad_output.dtype)")),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward="g = grad_output.float().clone()\n     "
                                                                  "   g[:, :ctx.n] = 0\n        return "
                                                                  "g.to(grad_output.dtype), None")),
]

# A constant on ctx under vmap, CubeBackward's needs_input_grad, grad_output returned as it is when nothing is
# killed, weight.t() saved, rot90 for the flip, Sinh recomputing the exponentials from a saved x
LEARNER3_RIGHT += [
    ("Softplus", SOFTPLUS.format(forward="torch.maximum(x, torch.zeros((), dtype=x.dtype)) + "
                                         "torch.log1p(torch.exp(-x.abs()))",
                                 derivative="torch.sigmoid(x) * ctx.scale").replace(
        "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(inputs[0])\n        ctx.scale = 1.0")),
    ("Cube", L_CUBE.replace(L_BACKWARD_RIGHT, "g_grad = grad_out * 3 * x ** 2 if ctx.needs_input_grad[0] "
                                              "else None\n"
                                              "        g_x = grad_out * saved_grad_out * 6 * x if "
                                              "ctx.needs_input_grad[1] else None\n"
                                              "        return g_grad, g_x")),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward="if ctx.n == 0:\n            return "
                                                                  "grad_output, None\n"
                                     "        " + KILLHEAD_RIGHT_BACKWARD)),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("grad_output.mm(weight)",
                                                           "grad_output.mm(wt.t())"))
     .replace("ctx.save_for_backward(input, weight, bias)", "ctx.save_for_backward(input, weight.t(), bias)")
     .replace("input, weight, bias = ctx.saved_tensors", "input, wt, bias = ctx.saved_tensors")),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input="correlate2d(grad_output.numpy(), "
                                                         "np.rot90(filter.numpy(), 2), mode='full')",
                                              grad_filter=CONV_GRAD_FILTER)),
    ("Sinh", SINH.format(body="x, = ctx.saved_tensors\n        e, en = torch.exp(x), torch.exp(-x)\n"
                              "        return grad_out * (e + en) / 2 + grad_out_exp * e - "
                              "grad_out_negexp * en")
     .replace("ctx.save_for_backward(expx, expnegx)", "ctx.save_for_backward(x)")
     .replace("        expx, expnegx = ctx.saved_tensors\n", "")),
    ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + "return "
                                                                            "grad_output.where(input >= "
                                                                            "0, 0.0)")),
]

RIGHT += LEARNER3_RIGHT


# -- issue 32: sentences that sent the learner the wrong way, and gradients told only by where -------------
# Each wrong one fails its check with its real cause; NEVER holds the misleading sentence it once got.

SINH_DETACHED = SINH.format(body="return grad_out * (expx + expnegx) / 2 + grad_out_exp * expx - "
                                 "grad_out_negexp * expnegx").replace(
    "ctx.save_for_backward(expx, expnegx)", "ctx.save_for_backward(expx.detach(), expnegx.detach())")
SINH_ONE_DETACHED = SINH_DETACHED.replace("expnegx.detach())", "expnegx)")
# the mean kept without its dimensions for backward, where `X - mean` lines it up with the last one
BATCHNORM_FLAT_MEAN = BATCHNORM_KEEPDIM.format(dims="(0, 2, 3)").replace(
    "var, mean = torch.var_mean(X, dim=(0, 2, 3), correction=1, keepdim=True)",
    "var, mean = torch.var_mean(X, dim=(0, 2, 3), correction=1)\n        var = var[None, :, None, None]"
).replace("return (X - mean) / (std + eps)", "return (X - mean[None, :, None, None]) / (std + eps)")
BATCHNORM_FLAT_MEAN_FORWARD = BATCHNORM_KEEPDIM.format(dims="(0, 2, 3)").replace(
    "var, mean = torch.var_mean(X, dim=(0, 2, 3), correction=1, keepdim=True)",
    "var, mean = torch.var_mean(X, dim=(0, 2, 3), correction=1)\n        var = var[None, :, None, None]")
RELU_TIMES_SIGN = MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                                "return grad_output * torch.sign(input)")
LN_BOTH_PATHS = L_LN.format(backward="g * rstd, None")

EXP_MARKED_NON_DIFFERENTIABLE = """
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        ctx.mark_non_differentiable(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result
"""

SOFTSIGN_SETUP_ABS = SOFTSIGN_IN_PLACE.replace("course22::", "course33::").replace(
    "x.div_(1 + x.abs())  # in place: the op returns its own input", "x / (1 + x.abs())").replace(
    "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(output.abs_())  # backward needs |y|").replace(
    "x, = ctx.saved_tensors\n    return g / (1 + x.abs()) ** 2",
    "a, = ctx.saved_tensors\n    return g * (1 - a) ** 2")

SOFTPLUS_VMAP_UNBATCHED = """
class Softplus(Function):
    @staticmethod
    def forward(x):
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)

    @staticmethod
    def vmap(info, in_dims, x):
        return Softplus.apply(x), None
"""

SOFTMAX_CE_NO_GRAD_OUTPUT = """
class SoftmaxCrossEntropy(Function):
    @staticmethod
    def forward(ctx, logits, target):
        shifted = logits - logits.amax(dim=1, keepdim=True)
        log_softmax = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
        ctx.save_for_backward(log_softmax, target)
        return -log_softmax.gather(1, target.unsqueeze(1)).mean()

    @staticmethod
    def backward(ctx, grad_output):
        log_softmax, target = ctx.saved_tensors
        grad = log_softmax.exp()
        grad[torch.arange(len(target)), target] -= 1
        return grad / len(target), None
"""

ISSUE32_WORDS = [
    # a scalar loss: a grad_output of exactly ±1 would hide a backward that ignores it
    ("SoftmaxCrossEntropy", SOFTMAX_CE_NO_GRAD_OUTPUT, "gradient", "it never uses grad_output"),
    ("Softplus", SOFTPLUS_VMAP_UNBATCHED, "vmap", "its out_dims say it does not (None)"),
    # setup_context changing the output in place: the values alone point at a clamp; the cells show why
    ("softsign", SOFTSIGN_SETUP_ABS, "forward", "setup_context changes output, the output forward returned"),
    # a Function's output loses its grad_fn only through mark_non_differentiable, not through .detach()
    ("Exp", EXP_MARKED_NON_DIFFERENTIABLE, "gradient",
     "forward marks it with ctx.mark_non_differentiable, which is only for outputs that have no derivative"),
    ("Sinh", SINH_DETACHED, "gradgradcheck",
     "a detached copy of output 1 of Sinh.forward (.detach() gives the same values without autograd"),
    ("Sinh", SINH_ONE_DETACHED, "gradgradcheck",
     "Drop the .detach(): pass output 1 of Sinh.forward itself to save_for_backward."),
    ("BatchNorm", BATCHNORM_FLAT_MEAN, "gradient",
     "`centred, denom = X - mean, std + ctx.eps` (in backward) combines tensors whose shapes do not"),
    ("BatchNorm", BATCHNORM_FLAT_MEAN_FORWARD, "forward",
     "`return (X - mean) / (std + eps)` (in forward) combines tensors whose shapes do not broadcast"),
    ("MyReLU", RELU_TIMES_SIGN, "gradient",
     ("is grad_output times input.sign(): the sign is the mistake. torch.sign(input) is -1 where input is "
      "negative, where the derivative is 0")),
    # gradients once told only by where they go wrong, while gradcheck pointed at them for the cause
    ("LayerNorm", LN_BOTH_PATHS, "gradient",
     "both the path through the mean and the one through the variance are left out"),
    ("LayerNorm", L_LN.format(backward="rstd * (g - g.mean(-1, keepdim=True) + normalised * (g * normalised)"
                                       ".mean(-1, keepdim=True)), None"),
     "gradient", "the term of the variance path has the wrong sign"),
    ("LayerNorm", L_LN.format(backward="rstd * (g - g.mean(-1, keepdim=True)) - normalised * (g * normalised)"
                                       ".mean(-1, keepdim=True), None"),
     "gradient", "is not multiplied by rstd: rstd multiplies every term"),
    ("LayerNorm", L_LN.format(backward="rstd * (g - g.mean(-1, keepdim=True) - (g * normalised).mean(-1, "
                                       "keepdim=True)), None"),
     "gradient", "the variance term lacks its factor normalised"),
    ("LayerNorm", L_LN.format(backward="rstd * (g - g.mean(-1, keepdim=True) - normalised * g.mean(-1, "
                                       "keepdim=True)), None"),
     "gradient", "the variance term takes the mean of grad_output where the mean of grad_output *"),
    ("BatchNorm", batch_norm(backward="(grad_out - g_mean) / denom - " + BN_SIGMA_PATH), "gradient",
     "the term of the path through the standard deviation has the wrong sign"),
    ("BatchNorm", batch_norm(backward="(grad_out - g_mean) + " + BN_SIGMA_PATH), "gradient",
     "grad_out - its mean is not divided by sigma + eps"),
    ("LogSumExp", L_LSE.format(backward="return grad_output.unsqueeze(-1) * torch.exp(result.unsqueeze(-1) - "
                                        "input)"),
     "gradient", "the weights of grad_output are exp(result - input), one over the softmax"),
]
CASES += ISSUE32_WORDS

# Not a Function class at all: every check fails for one cause, said once with what to write instead
EXP_CUSTOM_OP = """
@torch.library.custom_op("catalogue_not_a_function::exp", mutates_args=())
def Exp(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x)


@Exp.register_fake
def _(x):
    return torch.empty_like(x)


def setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return grad * y


Exp.register_autograd(backward, setup_context=setup)
"""

EXP_MODULE = """
class Exp(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x)
"""

EXP_INSTANCE = """
class ExpFunction(Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


Exp = ExpFunction()
"""

EXP_TENSOR = EXP_INSTANCE.replace("Exp = ExpFunction()", "Exp = ExpFunction.apply(torch.linspace(-1, 1, 5))")
EXP_NUMBER = EXP_INSTANCE.replace("Exp = ExpFunction()", "Exp = 2.718")

NOT_A_FUNCTION = [
    ("Exp", EXP_CUSTOM_OP, "is a Function", "a torch.library custom operator, say"),
    ("Exp", EXP_MODULE, "is a Function", "is a class, but not a subclass of torch.autograd.Function"),
    ("Exp", EXP_INSTANCE, "is a Function", "is an instance of a Function class (Exp = SomeFunction())"),
    # the Function's result bound to the name, and a number: neither is an instance of the Function
    ("Exp", EXP_TENSOR, "is a Function",
     "Exp is a tensor, not a class: it holds a result, as Exp = SomeFunction.apply(x) would"),
    ("Exp", EXP_NUMBER, "is a Function",
     "Exp is an object of type float, not a class: bind Exp to the Function class (write `class Exp("),
]
CASES += NOT_A_FUNCTION

NEVER += [
    (SINH_DETACHED, "Sinh", "extra output of forward"),
    (SINH_ONE_DETACHED, "Sinh", "extra output of forward"),
    (BATCHNORM_FLAT_MEAN, "BatchNorm", "the reduction is backward's own"),
    (RELU_TIMES_SIGN, "MyReLU", "is an .abs() or a sign missing"),
    (LN_BOTH_PATHS, "LayerNorm", "where it goes wrong is shown under gradient"),
]

# Issue 32: slips that hide where the inputs are exactly 0 (KillHead killing by value, a derivative read
# from the output or through x / x.abs(), the stable Softplus differentiated term by term) and
# LinearFunction's gradients computed for an input that needs none; with right answers that skip the work
# another way or kill by position another way, which keep full marks.
_KH_SAVED_OUTPUT = KILLHEAD_ANY.format(forward="result = input.clone()\n        result[:, :n] = 0\n"
                                               "        ctx.save_for_backward(result)\n        return result",
                                       backward="result, = ctx.saved_tensors\n{kill}")
_LIN_ALWAYS = LINEAR.format(body="grad_input = grad_output.mm(weight)\n        grad_weight = "
                                 "grad_output.t().mm(input)\n        if bias is not None:\n"
                                 "            grad_bias = grad_output.sum(0)")
_SQUARE_OVER_X = SQUARE.format(forward="y = x ** 2\n        ctx.save_for_backward(x, y)\n        return y",
                               backward="x, y = ctx.saved_tensors\n        return grad_out * 2 * y / x")
ISSUE32 = [
    ("KillHead", _KH_SAVED_OUTPUT.format(kill="        grad_input = grad_output.clone()\n"
                                              "        grad_input[result == 0] = 0\n"
                                              "        return grad_input, None"),
     "gradient", "the gradient is zeroed wherever a value is 0 (forward's output, or its input)"),
    ("KillHead", _KH_SAVED_OUTPUT.format(kill="        return grad_output * (result != 0), None"),
     "gradient", "the gradient is zeroed wherever a value is 0 (forward's output, or its input)"),
    ("KillHead", KILLHEAD_ANY.format(forward="ctx.save_for_backward(input)\n        result = input.clone()\n"
                                             "        result[:, :n] = 0\n        return result",
                                     backward="input, = ctx.saved_tensors\n"
                                              "        grad_input = grad_output.clone()\n"
                                              "        grad_input[:, :ctx.n] = 0\n"
                                              "        grad_input[input == 0] = 0  # none through a 0\n"
                                              "        return grad_input, None"),
     "gradient", "which takes in the entries of the kept columns whose input is 0"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="((x > 0).double() - x.sign() "
                                                            "* torch.exp(-x.abs()) "
                                                            "/ (1 + torch.exp(-x.abs())))"),
     "gradient", "wrong only where x is exactly 0"),
    ("softsign", _softsign("i32q", "return g / (1 + x.abs()) ** 2",
                           "return g * (1 + x.abs() - x * (x / x.abs())) / (1 + x.abs()) ** 2"),
     "gradient", "a division by an input that is 0 there"),
    ("Square", _SQUARE_OVER_X, "gradient", "(as output / x, or x / x.abs() as a sign)"),
    ("Cube", L_CUBE.replace("return CubeBackward.apply(grad_out, x)",
                            "return CubeBackward.apply(grad_out, x)  # as the lesson's")
     .replace("ctx.save_for_backward(x)\n        return x ** 3",
              "y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y")
     .replace("x, = ctx.saved_tensors\n        return CubeBackward",
              "x, y = ctx.saved_tensors\n        return grad_out * 3 * y / x  # CubeBackward"),
     "gradient", "a division by an input that is 0 there"),
    # the maximum of every entry subtracted, not each row's: rows a thousand apart lose the lower one
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.max()\n"
                                           "        result = m + (input - m).exp().sum(-1).log()",
                                   backward=LSE_GRAD),
     "forward", "the maximum subtracted is input.max(), the largest entry of the whole tensor"),
    # every gradient computed whatever ctx.needs_input_grad says, or computed and then dropped
    ("LinearFunction", _LIN_ALWAYS, "needs_input_grad", "although ctx.needs_input_grad[0] is False"),
    ("LinearFunction", LINEAR.format(body="grad_input = grad_output.mm(weight)  # computed although not "
                                          "always needed\n        grad_weight = grad_output.t().mm(input)\n  "
                                          "      grad_bias = None if bias is None else grad_output.sum(0)"),
     "needs_input_grad", "compute grad_input only under `if ctx.needs_input_grad[0]:`"),
    ("LinearFunction", LINEAR.format(body="grad_input = grad_output.mm(weight) if ctx.needs_input_grad[0] "
                                          "else torch.zeros_like(input)  # a zero is not \"no gradient\"\n"
                                          "        grad_weight = grad_output.t().mm(input) if "
                                          "ctx.needs_input_grad[1] else None\n"
                                          "        if bias is not None and ctx.needs_input_grad[2]:\n"
                                          "            grad_bias = grad_output.sum(0)"),
     "needs_input_grad", "backward returns a gradient for input, although ctx.needs_input_grad[0] is False"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace("if ctx.needs_input_grad[2] else None", "")),
     "needs_input_grad", "backward returns a gradient for bias, although ctx.needs_input_grad[2] is False"),
    ("LinearFunction", _LIN_ALWAYS.replace(
        "        return grad_input, grad_weight, grad_bias",
        "        grads = (grad_input, grad_weight, grad_bias)\n"
        "        return tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad))"),
     "needs_input_grad", "but computes its gradient all the same"),
    ("LinearFunction", LINEAR.format(body=L_LINEAR.replace(
        "grad_input = grad_output.mm(weight) if ctx.needs_input_grad[0] else None",
        "grad_input = grad_output.mm(weight)\n        if not ctx.needs_input_grad[0]:\n"
        "            grad_input = None")),
     "needs_input_grad", "returns None for input, as ctx.needs_input_grad[0] is False, but computes"),
]
ISSUE32_RIGHT = [
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD,
                                     backward="keep = (torch.arange(grad_output.shape[1]) >= ctx.n)\n"
                                              "        return grad_output * keep, None")),
    ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD,
                                     backward="return torch.cat((torch.zeros_like(grad_output[:, :ctx.n]), "
                                              "grad_output[:, ctx.n:]), dim=1), None")),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.where(x >= 0, 1 / (1 + torch.exp(-x)), "
                                                            "torch.exp(x) / (1 + torch.exp(x)))")),
    ("softsign", _softsign("i32r", "return g / (1 + x.abs()) ** 2",
                           "y = x / (1 + x.abs())\n    return g * (1 - y.abs()) ** 2")),
    ("LogSumExp", LOGSUMEXP.format(forward="m = input.max(dim=-1, keepdim=True).values  # ties: one\n"
                                           "        result = (m + (input - m).exp().sum(-1, keepdim=True)"
                                           ".log()).squeeze(-1)",
                                   backward="return grad_output.unsqueeze(-1) * torch.softmax(input, -1)")),
    ("Square", SQUARE.format(forward="ctx.save_for_backward(x)\n        return x * x",
                             backward="x, = ctx.saved_tensors\n        return grad_out * (x + x)")),
    # needs_input_grad read another way: a conditional expression, the flags unpacked, a loop over
    # lambdas, an early return when nothing is needed
    ("LinearFunction", LINEAR.format(body="need_input, need_weight, *need_bias = ctx.needs_input_grad\n"
                                          "        if need_input:\n            grad_input = "
                                          "grad_output.mm(weight)\n        if need_weight:\n"
                                          "            grad_weight = grad_output.t().mm(input)\n"
                                          "        if need_bias and need_bias[0]:\n"
                                          "            grad_bias = grad_output.sum(0)")),
    ("LinearFunction", LINEAR.format(body="").replace(
        "        return grad_input, grad_weight, grad_bias",
        "        compute = (lambda: grad_output.mm(weight), lambda: grad_output.t().mm(input),\n"
        "                   lambda: grad_output.sum(0))\n"
        "        return tuple(f() if need else None for f, need in zip(compute, ctx.needs_input_grad))")),
    ("LinearFunction", LINEAR.format(body="if not any(ctx.needs_input_grad):\n"
                                          "            return None, None, None\n        " + L_LINEAR)),
]
CASES += ISSUE32
RIGHT += ISSUE32_RIGHT

# -- issue 32: every rule on every way of writing a Function (tests/judge/test_rule_matrix.py) ------------
# Keyed by name, the matrix's cells refer to them; each wrong one is in CASES too (the check it fails and
# words of its cause), each right one in RIGHT.

# setup_context, a forward without ctx: the lesson 7 style
W_SETUP = '''
class {name}(Function):
    @staticmethod
    def forward({args}):
        {forward}

    @staticmethod
    def setup_context(ctx, inputs, output):
        {setup}

    @staticmethod
    def backward(ctx, {grads}):
        {backward}
'''
# Softplus with a vmap staticmethod of its own instead of generate_vmap_rule (lesson 7 teaches both)
W_SOFTPLUS_VMAP = '''
class Softplus(Function):
    @staticmethod
    def forward(x):
        return x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(x)

    @staticmethod
    def vmap(info, in_dims, x):
        {rule}
'''
W_CUBE_SETUP = CUBE.replace('''    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3
''', '''    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
''')

WAYS_WRONG = {
    # inputs unchanged
    "inputs/ctx": ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input.clone())\n"
                                                   "        return input.clamp_(min=0)",
                                           backward=MYRELU_LOADED + "return grad_output * (input > 0)"),
                   "inputs unchanged", "forward changed input in place"),
    "inputs/setup_context": ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="s").replace(
        "ctx.save_for_backward(inputs[0])", "x, = inputs\n        ctx.save_for_backward(x.sigmoid_())  # all "
                                            "backward needs").replace("x, = ctx.saved_tensors", "s, = "
                                                                                                "ctx.saved_tensors"),
        "inputs unchanged", "forward or setup_context changed x in place"),
    "inputs/jvp": ("Tanh", TANH_MODERN.replace("ctx.save_for_forward(output)",
                                       "ctx.save_for_forward(inputs[0])")
                   .replace("        y, = ctx.saved_tensors\n        return x_t * (1 - y * y)",
                            "        x, = ctx.saved_tensors\n        return x_t * (1 - x.tanh_() ** 2)"),
                   "forward mode", "forward mode changes x in place"),
    "inputs/vmap": ("Softplus", W_SOFTPLUS_VMAP.format(
        rule="return torch.log1p(torch.exp(-x.abs())) + x.clamp_(min=0), in_dims[0]"),
        "inputs unchanged", "under torch.func.vmap, the vmap rule (or forward on the batch) changed x"),
    "inputs/custom_op": ("softsign", L_SOFTSIGN.replace("course22::", "ways_abs::").replace(
        "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(inputs[0].abs_())  # backward needs |x| "
                                            "only")
        .replace("x, = ctx.saved_tensors", "a, = ctx.saved_tensors")
        .replace("return g / (1 + x.abs()) ** 2", "return g / (1 + a) ** 2"),
        "inputs unchanged", "mutates_args says it changes nothing"),
    # grad_output unchanged, and its twin of forward mode, tangent unchanged
    "grad/ctx": ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                                         "grad_output[input < 0] = 0\n        return grad_output"),
                 "grad_output unchanged", "backward changed grad_output in place"),
    "grad/setup_context": ("Exp", W_SETUP.format(name="Exp", args="x", forward="return torch.exp(x)",
                                                 setup="ctx.save_for_backward(output)",
                                                 grads="grad_output",
                                                 backward="y, = ctx.saved_tensors\n"
                                                          "        return grad_output.mul_(y)"),
                           "grad_output unchanged", "backward changed grad_output in place"),
    "grad/jvp": ("Tanh", TANH_MODERN.replace("return x_t * (1 - y * y)", "return x_t.mul_(1 - y * y)"),
                 "tangent unchanged", "jvp changed x_t, the tangent it is given, in place"),
    "grad/custom_op": ("softsign", L_SOFTSIGN.replace("course22::", "ways_gdiv::").replace(
        "return g / (1 + x.abs()) ** 2", "return g.div_((1 + x.abs()) ** 2)"),
        "grad_output unchanged", "changed grad_output in place"),
    # save_for_backward, not attributes of ctx
    "ctx/ctx": ("MyReLU", MYRELU.format(forward="ctx.input = input\n        return input.clamp(min=0)",
                                        backward="return grad_output * (ctx.input > 0)"),
                "save_for_backward", "forward keeps input, one of its inputs, as ctx.input"),
    "ctx/setup_context": ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)")
                          .replace("ctx.save_for_backward(inputs[0])", "ctx.x = inputs[0]")
                          .replace("x, = ctx.saved_tensors", "x = ctx.x"),
                          "save_for_backward", "setup_context keeps x, one of its inputs, as ctx.x"),
    "ctx/jvp": ("Tanh", TANH_MODERN.replace("ctx.save_for_forward(output)", "ctx.y = output  # for jvp")
                .replace("        y, = ctx.saved_tensors\n        return x_t", "        y = ctx.y\n"
                                                                                "        return x_t"),
                "save_for_backward", "through ctx.save_for_forward"),
    "ctx/custom_op": ("softsign", L_SOFTSIGN.replace("course22::", "ways_ctx::").replace(
        "ctx.save_for_backward(inputs[0])", "ctx.x = inputs[0]")
        .replace("x, = ctx.saved_tensors", "x = ctx.x"),
        "save_for_backward", "setup_context keeps x, one of its inputs, as ctx.x"),
    # needs_input_grad: the flags read for the wrong input
    "needs/ctx": ("Something", SOMETHING.format(forward=SOMETHING_SAVED, backward=SOMETHING_LOADED +
                                                "s = torch.sign(input1 * input2)\n        du = dv = None\n"
                                                "        if ctx.needs_input_grad[1]:\n"
                                                "            du = grad_output * s * input2\n"
                                                "        if ctx.needs_input_grad[0]:\n"
                                                "            dv = grad_output * s * input1\n"
                                                "        return du, dv"),
                  "needs_input_grad", "backward returned None for input1, which needs a gradient"),
    "needs/setup_context": ("Something", W_SETUP.format(
        name="Something", args="u, v", forward="return (u * v).abs()", setup="ctx.save_for_backward(*inputs)",
        grads="g", backward="u, v = ctx.saved_tensors\n        du = dv = None\n"
                            "        if ctx.needs_input_grad[1]:\n            du = g * v.abs() * u.sign()\n"
                            "        if ctx.needs_input_grad[0]:\n            dv = g * u.abs() * v.sign()\n"
                            "        return du, dv"),
        "needs_input_grad", "backward returned None for u, which needs a gradient"),
    # grad mode in backward: a backward that must be differentiated cuts its graph with no_grad
    "gradmode/ctx": ("Square", SQUARE.format(forward=L_SQUARE, backward="x, = ctx.saved_tensors\n"
                                                                       "        with torch.no_grad():\n"
                                                                       "            return 2 * x * grad_out"),
                     "gradgradcheck", "no_grad"),
    "gradmode/setup_context": ("Exp", W_SETUP.format(name="Exp", args="x", forward="return torch.exp(x)",
                                                     setup="ctx.save_for_backward(output)",
                                                     grads="grad_output",
                                                     backward="y, = ctx.saved_tensors\n"
                                                              "        with torch.no_grad():\n"
                                                              "            return grad_output * y"),
                               "gradgradcheck", "no_grad"),
    # the companion used
    "companion/ctx": ("Cube", CUBE.format(cube="return grad_out * 3 * x ** 2",
                                          cube_backward=CUBE_BACKWARD_RIGHT),
                      "companion used", "does not go through CubeBackward"),
    "companion/setup_context": ("Cube", W_CUBE_SETUP.format(cube="return grad_out * 3 * x ** 2",
                                                            cube_backward=CUBE_BACKWARD_RIGHT),
                                "companion used", "does not go through CubeBackward"),
    # None for a non-tensor argument
    "none/ctx": ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=KILLHEAD_RIGHT_BACKWARD.replace(
        "result, None", "result, 0")), "backward returns", "which is not a tensor"),
    "none/setup_context": ("LayerNorm", W_SETUP.format(
        name="LayerNorm", args="x, eps=1e-5",
        forward="mu = x.mean(-1, keepdim=True)\n"
                "        return (x - mu) * torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + eps)",
        setup="x = inputs[0]\n        eps = inputs[1] if len(inputs) > 1 else 1e-5\n"
              "        ctx.save_for_backward(output, torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + "
              "eps))",
        grads="g", backward="y, r = ctx.saved_tensors\n"
                            "        return r * (g - g.mean(-1, keepdim=True) - y * (g * y).mean(-1, "
                            "keepdim=True)), 0.0"),
        "backward returns", "backward returned a gradient for eps"),
}

WAYS_RIGHT = {
    "inputs/ctx": ("MyReLU", MYRELU.format(forward="ctx.save_for_backward(input)\n"
                                                   "        out = input.clone()\n"
                                                   "        out.clamp_(min=0)  # in place, on a fresh copy\n"
                                                   "        return out",
                                           backward=MYRELU_LOADED + "return grad_output * (input > 0)")),
    "inputs/setup_context": ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="s").replace(
        "ctx.save_for_backward(inputs[0])", "x, = inputs\n        ctx.save_for_backward(x.sigmoid())")
        .replace("x, = ctx.saved_tensors", "s, = ctx.saved_tensors")),
    "inputs/jvp": ("Tanh", TANH_MODERN.replace("ctx.save_for_forward(output)",
                                       "ctx.save_for_forward(inputs[0])")
                   .replace("        y, = ctx.saved_tensors\n        return x_t * (1 - y * y)",
                            "        x, = ctx.saved_tensors\n        return x_t * (1 - x.tanh() ** 2)")),
    "inputs/vmap": ("Softplus", W_SOFTPLUS_VMAP.format(rule="return Softplus.apply(x), in_dims[0]")),
    "inputs/custom_op": ("softsign", L_SOFTSIGN.replace("course22::", "ways_absr::").replace(
        "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(inputs[0].abs())")
        .replace("x, = ctx.saved_tensors", "a, = ctx.saved_tensors")
        .replace("return g / (1 + x.abs()) ** 2", "return g / (1 + a) ** 2")),
    "grad/ctx": ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + (
        "grad_input = grad_output.clone()\n        grad_input[input < 0] = 0\n        return grad_input"))),
    "grad/setup_context": ("Exp", W_SETUP.format(name="Exp", args="x", forward="return torch.exp(x)",
                                                 setup="ctx.save_for_backward(output)",
                                                 grads="grad_output",
                                                 backward="y, = ctx.saved_tensors\n"
                                                          "        return grad_output.clone().mul_(y)")),
    "grad/jvp": ("Tanh", TANH_MODERN.replace("return x_t * (1 - y * y)",
                                             "return x_t.clone().mul_(1 - y * y)")),
    "grad/custom_op": ("softsign", L_SOFTSIGN.replace("course22::", "ways_gdivr::").replace(
        "return g / (1 + x.abs()) ** 2", "return g.div((1 + x.abs()) ** 2)")),
    "ctx/ctx": ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED +
                                        "return grad_output * (input > 0)")),
    "ctx/setup_context": ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)")
                          .replace("ctx.save_for_backward(inputs[0])",
                                   "x, = inputs\n        ctx.save_for_backward(x)\n        ctx.big = 20.0")),
    "ctx/jvp": ("Tanh", TANH_MODERN),
    "ctx/custom_op": ("softsign", L_SOFTSIGN.replace("course22::", "ways_ctxr::").replace(
        "ctx.save_for_backward(inputs[0])", "x, = inputs\n    ctx.save_for_backward(x)\n"
                                            "    ctx.shape = x.shape")),
    "needs/ctx": ("LinearFunction", LINEAR.format(body=L_LINEAR)),
    "needs/setup_context": ("Something", W_SETUP.format(
        name="Something", args="u, v", forward="return (u * v).abs()", setup="ctx.save_for_backward(*inputs)",
        grads="g", backward="u, v = ctx.saved_tensors\n        du = dv = None\n"
                            "        if ctx.needs_input_grad[0]:\n            du = g * v.abs() * u.sign()\n"
                            "        if ctx.needs_input_grad[1]:\n            dv = g * u.abs() * v.sign()\n"
                            "        return du, dv")),
    # a first-order backward may compute without recording (no_grad), or with autograd itself
    "gradmode/ctx": ("MyReLU", MYRELU.format(forward=MYRELU_SAVED, backward=MYRELU_LOADED + (
        "with torch.enable_grad():\n            x = input.detach().requires_grad_()\n"
        "            return torch.autograd.grad(x.clamp(min=0), x, grad_output)[0]"))),
    "gradmode/setup_context": ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="s").replace(
        "x, = ctx.saved_tensors\n", "x, = ctx.saved_tensors\n        with torch.no_grad():\n"
                                    "            s = torch.sigmoid(x)\n")),
    "companion/ctx": ("Cube", L_CUBE),
    "companion/setup_context": ("Cube", W_CUBE_SETUP.format(cube="return CubeBackward.apply(grad_out, x)",
                                                            cube_backward=CUBE_BACKWARD_RIGHT)),
    "none/ctx": ("KillHead", KILLHEAD_ANY.format(forward=L_KILLHEAD, backward=KILLHEAD_RIGHT_BACKWARD)),
    "none/setup_context": ("KillHead", W_SETUP.format(
        name="KillHead", args="input, n", forward=L_KILLHEAD, setup="_, ctx.n = inputs", grads="grad_output",
        backward=KILLHEAD_RIGHT_BACKWARD)),
}

CASES += list(WAYS_WRONG.values())
RIGHT += list(WAYS_RIGHT.values())

# More of the same cells, written otherwise (each in CASES or RIGHT, outside the matrix)
CASES += [
    ("Tanh", TANH_MODERN.replace("ctx.save_for_forward(output)", "ctx.save_for_forward(inputs[0])").replace(
        "        y, = ctx.saved_tensors\n        return x_t * (1 - y * y)",
        "        x, = ctx.saved_tensors\n        x.data.tanh_()  # the derivative needs tanh(x)\n"
        "        return x_t * (1 - x ** 2)"),
     "inputs unchanged", "jvp, in forward mode, changed x in place"),
    ("Tanh", TANH_MODERN.replace("return x_t * (1 - y * y)", "x_t *= 1 - y * y\n        return x_t"),
     "tangent unchanged", "jvp changed x_t, the tangent it is given, in place"),
    ("softsign", L_SOFTSIGN.replace("course22::", "ways_more1::").replace(
        "return g / (1 + x.abs()) ** 2", "g /= (1 + x.abs()) ** 2\n    return g"),
     "grad_output unchanged", "changed grad_output in place"),
    ("Softplus", SOFTPLUS.format(forward=STABLE, derivative="torch.sigmoid(x)").replace(
        "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(inputs[0])\n        ctx.out = output"),
     "save_for_backward", "setup_context keeps its output as ctx.out"),
]
RIGHT += [
    ("Tanh", TANH_MODERN.replace("return x_t * (1 - y * y)", "return torch.mul(x_t, 1 - y * y)")),
    ("Tanh", TANH_MODERN.replace("ctx.save_for_backward(output)\n        ctx.save_for_forward(output)",
                                 "ctx.save_for_backward(inputs[0])\n        ctx.save_for_forward(output)")
     .replace("y, = ctx.saved_tensors\n        return grad_output * (1 - y * y)",
              "x, = ctx.saved_tensors\n        return grad_output * (1 - torch.tanh(x) ** 2)")),
    ("softsign", L_SOFTSIGN.replace("course22::", "ways_more2::").replace(
        "ctx.save_for_backward(inputs[0])", "ctx.save_for_backward(*inputs)")),
    ("Softplus", W_SOFTPLUS_VMAP.format(rule="x = x.movedim(in_dims[0], 0) if in_dims[0] is not None else x\n"
                                             "        return Softplus.apply(x), 0")),
]

# A learner's jvp squaring the output it saved in place: the Jacobian is right, the output the caller of
# make_dual gets is tanh(x) squared (a false pass until forward mode compared the primal with forward's)
TANH_JVP_SQUARES_OUTPUT = '''
class Tanh(Function):
    @staticmethod
    def forward(x):
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (1 - y * y)

    @staticmethod
    def jvp(ctx, x_t):
        y, = ctx.saved_tensors
        return x_t * (1 - y.pow_(2))
'''
CASES += [("Tanh", TANH_JVP_SQUARES_OUTPUT, "forward mode",
           "the output the caller gets differs from forward's: jvp changed a tensor in place")]

CASES += [
    # the exercise's own intermediates kept on ctx: the feedback asks to save them, as the exercise does
    ("BatchNorm", batch_norm().replace("ctx.save_for_backward(X, mean, sqrt_var)",
                                       "ctx.save_for_backward(X)\n"
                                       "        ctx.mean, ctx.sqrt_var = mean, sqrt_var")
     .replace("X, mean, sqrt_var = ctx.saved_tensors", "(X,) = ctx.saved_tensors\n        mean, sqrt_var = "
              "ctx.mean, ctx.sqrt_var"),
     "save_for_backward", "intermediates such as a mean"),
]

# -- Lesson 5's second derivatives in practice: a gradient penalty and a Hessian-vector product --------

SIGMOID_GP = '''
from torch.autograd.function import once_differentiable


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, z):
        s = torch.sigmoid(z)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    {decorator}
    def backward(ctx, grad_out):
        (s,) = ctx.saved_tensors
        return grad_out * {slope}


def gradient_penalty(x, w):
    scores = Sigmoid.apply(x @ w)
    (grad_x,) = torch.autograd.grad(scores.{reduce}(), x, create_graph=True)
    return ((grad_x.{norm} - 1) ** 2).mean()
'''


def penalty(decorator="", slope="s * (1 - s)", reduce="sum", norm="norm(dim=1)"):
    return SIGMOID_GP.format(decorator=decorator or "# differentiable", slope=slope, reduce=reduce, norm=norm)


LOGCOSH_HVP = '''
class LogCosh(Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return torch.log(torch.cosh(z))

    @staticmethod
    def backward(ctx, grad_out):
        (z,) = ctx.saved_tensors
        return grad_out * {derivative}


def hvp(A, x, v):
    loss = LogCosh.apply(A @ x).sum()
    (g,) = torch.autograd.grad(loss, x, create_graph=True)
    (hv,) = torch.autograd.grad({second}, create_graph=True)
    return hv
'''


def hessian_vector(derivative="torch.tanh(z)", second="g, x, grad_outputs=v"):
    return LOGCOSH_HVP.format(derivative=derivative, second=second)


CASES += [
    ("GradientPenalty", penalty(decorator="@once_differentiable"), "gradient",
     "the derivative in Sigmoid.backward has no autograd history"),
    ("GradientPenalty", penalty(slope="s.detach() * (1 - s.detach())"), "gradient",
     "the derivative in Sigmoid.backward has no autograd history"),
    ("GradientPenalty", penalty(norm="norm()"), "forward", "the norm is taken over the whole batch"),
    ("GradientPenalty", penalty(reduce="mean"), "forward", "the critic's scores are averaged"),
    ("GradientPenalty", penalty(norm="pow(2).sum(dim=1)"), "forward", "uses the squared norm"),
    ("HessianVectorProduct", hessian_vector(second="g.sum(), x"), "forward", "H times a vector of ones"),
    ("HessianVectorProduct", hessian_vector(derivative="(1 - torch.tanh(z) ** 2)"), "forward",
     "the second derivative of log(cosh(z))"),
    ("HessianVectorProduct", hessian_vector(derivative="torch.sinh(z)"), "forward",
     "without the chain rule through the logarithm"),
]
RIGHT += [("GradientPenalty", penalty()), ("HessianVectorProduct", hessian_vector()),
          ("HessianVectorProduct", hessian_vector(second="(g * v).sum(), x"))]
