"""Wrong Functions, one per mistake the grader must diagnose, shared by the tests.

Each entry: (problem, source defining the student's code, the check that must fail, a phrase its
diagnosis must contain). The sources are what students really write.
"""

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
LSE_STABLE = "m = input.amax(dim=-1, keepdim=True)\n        result = m.squeeze(-1) + (input - m).exp().sum(-1).log()"
LSE_GRAD = "return grad_output.unsqueeze(-1) * (input - result.unsqueeze(-1)).exp()"

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
    ("KillHead", KILLHEAD.format(cols="1:ctx.n + 1", returns="result, None"), "gradient", "in columns 0, 2 of x"),
    ("KillHead", KILLHEAD.format(cols="0:ctx.n", returns="result"), "backward returns",
     "backward returned 1 value(s) but forward takes 2 input(s)"),
    ("KillHead", KILLHEAD.format(cols="0:ctx.n", returns="result, torch.zeros(1)"), "backward returns",
     "which is not a tensor"),
    ("MyReLU", RELU_SIGN, "gradient", "wrong sign"),
    ("Something", SOMETHING_SWAPPED, "gradient", "are swapped"),
    ("LinearFunction", LINEAR_TRANSPOSED, "gradient", "looks transposed"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return result",
                       backward="result, = ctx.saved_tensors\n        return 2 * grad_output * result"),
     "gradient", "2 times the right one"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.result = result.detach()\n        return result",
                       backward="return grad_output * ctx.result"),
     "gradgradcheck", "values autograd cannot see"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(x)\n        return result",
                       backward="x, = ctx.saved_tensors\n        return grad_output * torch.from_numpy(np.exp(x.detach().numpy()))"),
     "gradgradcheck", "values autograd cannot see"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return result",
                       backward="result, = ctx.saved_tensors\n        with torch.no_grad():\n            return grad_output * result"),
     "gradgradcheck", "values autograd cannot see"),
    ("Exp", EXP.format(forward="result = torch.exp(x.float()).double()\n        ctx.save_for_backward(result)\n        return result",
                       backward="result, = ctx.saved_tensors\n        return grad_output * result"),
     "forward", "float32"),
    ("Exp", EXP.format(forward="result = torch.exp(x)\n        ctx.save_for_backward(result)\n        return result",
                       backward="result, = ctx.saved_tensors\n        result.mul_(grad_output)  # in place\n        return result"),
     "gradient", "changed in place"),
    ("Square", SQUARE.format(forward="ctx.save_for_backward(x)\n        return x ** 2",
                             backward="x, = ctx.saved_tensors\n        return grad_out * x"),
     "gradient", "0.5 times the right one"),
    ("Sinh", SINH_BAD, "gradgradcheck", "values autograd cannot see"),
    ("Sinh", SINH_TUPLE, "forward", "not a Tensor"),
    ("KillHead", "def KillHead(x, n):\n    return x\n", "is a Function", "subclass of torch.autograd.Function"),
    ("KillHead", "class KillHead(Function):\n    @staticmethod\n    def forward(ctx, input, n):\n"
                 "        raise NotImplementedError()\n", "forward", "not written yet"),
    # Lesson 4's derived backwards: one mistake each, as students make them.
    ("LogSumExp", LOGSUMEXP.format(forward="result = input.exp().sum(-1).log()  # overflows", backward=LSE_GRAD),
     "forward", "NaN or infinity"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE,
                                   backward="return grad_output * (input - result.unsqueeze(-1)).exp()"),
     "gradient", "grad_output.unsqueeze(dim)"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE,
                                   backward="return grad_output.unsqueeze(-1) * input.exp() / input.exp().sum(-1, keepdim=True)"),
     "gradient", "NaN or infinity"),
    ("LogSumExp", LOGSUMEXP.format(forward=LSE_STABLE, backward="return (input - result.unsqueeze(-1)).exp()"),
     "gradient", "differs from the right one"),
    ("LayerNorm", LAYERNORM.format(variance="input.var(-1, keepdim=True)", backward=LN_GRAD),
     "forward", "The output differs from the right one"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward="rstd * (g - g.mean(-1, keepdim=True)), None"),
     "gradient", "The gradient with respect to input differs"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward="g * rstd, None"),
     "gradcheck", "differs from the numerical one"),
    ("LayerNorm", LAYERNORM.format(variance=LN_VARIANCE, backward=LN_GRAD.replace(", None", "")),
     "backward returns", "backward returned 1 value(s) but forward takes 2 input(s)"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(  # the answer's backward as posted: both bugs
        grad_input="convolve2d(grad_output.numpy(), filter.t().numpy(), mode='full')",
        grad_filter="convolve2d(input.numpy(), grad_output.numpy(), mode='valid')"),
     "backward returns", "each gradient must have the shape of its input"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input=CONV_GRAD_INPUT,
                                              grad_filter="convolve2d(input.numpy(), grad_output.numpy(), mode='valid')"),
     "gradient", "grad_output read in reverse order"),
    ("ScipyConv2dFunction", SCIPY_CONV.format(grad_input="correlate2d(grad_output.numpy(), filter.numpy(), mode='full')",
                                              grad_filter=CONV_GRAD_FILTER),
     "gradient", "The gradient with respect to input differs"),
]
