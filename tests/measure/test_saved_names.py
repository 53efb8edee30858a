"""Are the names a Function saves and unpacks read from its code as written, and is an order that differs
told with the fix, while anything the code does not say plainly (branches, *args, repeated names) is
left unsaid?"""

import linecache

import pytest
import torch

from autograder.judge.saved_order import unpack_order
from autograder.measure.saved_names import saved_names, unpacked_names


def function_class(source: str):
    """The class `F` defined by `source` in a cell-like file, as a notebook defines it."""
    filename = f"<cell {abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - the test's own fixture
    return namespace["F"]


def names(saving: str, unpacking: str, setup_context: bool = False):
    forward = f"    def forward(ctx, x, y):\n        {saving}\n        return x * y\n"
    if setup_context:
        forward = (f"    def forward(x, y):\n        return x * y\n\n    @staticmethod\n"
                   f"    def setup_context(ctx, inputs, output):\n        x, y = inputs\n        {saving}\n")
    source = (f"class F(torch.autograd.Function):\n    @staticmethod\n{forward}\n    @staticmethod\n"
              f"    def backward(ctx, g):\n        {unpacking}\n        return g * y, g * x\n")
    cls = function_class(source)
    return saved_names(cls, torch.autograd.Function), unpacked_names(cls)


@pytest.mark.parametrize(("saving", "unpacking", "setup_context", "expected"), [
    ("ctx.save_for_backward(x, y)", "y, x = ctx.saved_tensors", False, (["x", "y"], ["y", "x"])),
    ("ctx.save_for_backward(x, y)", "x, y = ctx.saved_tensors", True, (["x", "y"], ["x", "y"])),
    ("ctx.save_for_backward(x.exp(), y)", "[e, y] = ctx.saved_tensors", False, (["", "y"], ["e", "y"])),
    ("ctx.save_for_backward(*(x, y))", "x, y = ctx.saved_tensors", False, (None, ["x", "y"])),
    ("ctx.save_for_backward(x, y) if x.sum() > 0 else ctx.save_for_backward(y, x)",
     "x, y = ctx.saved_tensors", False, (None, ["x", "y"])),
    ("ctx.save_for_backward(x, y)", "x = ctx.saved_tensors[0]; y = ctx.saved_tensors[1]", False,
     (["x", "y"], None)),
])
def test_names_are_read_as_written(saving, unpacking, setup_context, expected):
    assert names(saving, unpacking, setup_context) == expected


def test_a_class_without_source_gives_no_names():
    cls = type("F", (torch.autograd.Function,), {"forward": staticmethod(eval("lambda ctx, x: x"))})
    assert saved_names(cls, torch.autograd.Function) is None and unpacked_names(cls) is None


@pytest.mark.parametrize(("saved", "unpacked", "words"), [
    (["x", "grad_out"], ["saved_grad_out", "x"],
     ("its x is the tensor saved as grad_out. ctx.saved_tensors gives the tensors back in the order "
      "save_for_backward received them: write x, saved_grad_out = ctx.saved_tensors.")),
    (["input", "weight", "bias"], ["weight", "input", "bias"], "write input, weight, bias = ctx.saved"),
    (["", "y"], ["y", "e"], "ctx.save_for_backward(..., y): its y is the 1st tensor saved. ctx.saved"),
])
def test_an_order_that_differs_is_told_with_the_fix(saved, unpacked, words):
    assert words in unpack_order(saved, unpacked, "F")


@pytest.mark.parametrize(("saved", "unpacked"), [
    (["x", "y"], ["x", "y"]),  # the same order
    (["x", "y"], ["a", "b"]),  # other names: nothing to compare
    (["x", "y"], ["y"]),  # another count: PyTorch's own error says it
    (["x", "x"], ["x", "y"]),  # a name saved twice
    (None, ["y", "x"]),
])
def test_nothing_is_said_where_the_code_does_not_say_it(saved, unpacked):
    assert unpack_order(saved, unpacked, "F") is None


def test_another_count_is_told_with_both_lines():
    from autograder.judge.saved_order import unpack_count

    said = unpack_count(["x"], ["x", "saved_grad_out"], "CubeBackward")
    assert "unpacks 2 tensors (x, saved_grad_out = ctx.saved_tensors), but CubeBackward saved 1 with " \
           "ctx.save_for_backward(x)" in said
    assert unpack_count(["x", "y"], ["x", "y"], "F") is None and unpack_count(None, ["x"], "F") is None


@pytest.mark.parametrize(("body", "expected"), [
    (("if ctx.needs_input_grad[1]:\n            grad_x = g * y\n        if ctx.needs_input_grad[0]:\n"
     "            grad_y = g * x"), ["1:grad_x", "0:grad_y"]),
    ("if y is not None and ctx.needs_input_grad[1]:\n            grad_y = g * x", ["1:grad_y"]),
    ("if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:\n            grad_x = g * y", None),  # two flags
    ("grad_x = g * y", None),
])
def test_what_each_flag_guards_is_read_as_written(body, expected):
    from autograder.measure.saved_names import guarded_names

    source = ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n"
              "        return x * y\n\n    @staticmethod\n    def backward(ctx, g):\n"
              f"        grad_x = grad_y = None\n        {body}\n        return grad_x, grad_y\n")
    assert guarded_names(function_class(source)) == expected


def test_names_are_read_from_the_parsed_cell_not_by_tokenizing_each_function(monkeypatch):
    """A worker reads eight functions' names: inspect.getsource tokenizes each in Python (about 0.5 ms a
    function); the cell is parsed once instead, and each def found by its first line and name, in the
    class that defines it even where another class of the cell has the same methods."""
    import inspect

    source = ("class G(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, b):\n"
              "        ctx.save_for_backward(b, a)\n        return a * b\n\n    @staticmethod\n"
              "    def backward(ctx, g):\n        b, a = ctx.saved_tensors\n        return g * b, g * a\n\n\n"
              "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, y):\n"
              "        ctx.save_for_backward(x, y)\n        return x * y\n\n    @staticmethod\n"
              "    @torch.autograd.function.once_differentiable\n    def backward(ctx, g):\n"
              "        y, x = ctx.saved_tensors\n        return g * y, g * x\n")
    cls = function_class(source)

    def tokenizing(*args, **kwargs):
        raise AssertionError("the source was tokenized")

    monkeypatch.setattr(inspect, "getsource", tokenizing)
    assert (saved_names(cls, torch.autograd.Function), unpacked_names(cls)) == (["x", "y"], ["y", "x"])
