"""Are autograd graphs read and drawn the same way on every run?"""

import torch

from autograder.graphs import Graph, graph_of, svg


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x


def draw_square():
    x = torch.tensor(1.0, requires_grad=True).clone()
    out = Square.apply(x)
    (grad_x,) = torch.autograd.grad(out, x, create_graph=True)
    return graph_of(grad_x=grad_x, x=x, out=out)


def test_same_code_same_svg():
    """Does drawing the same computation twice give the same SVG, byte for byte?"""
    assert svg(draw_square()) == svg(draw_square())


def test_nodes_name_the_backward_functions():
    """Does the graph show the custom Function's SquareBackward node and the named tensors?"""
    graph = draw_square()
    labels = [label for _, label, _ in graph.nodes]
    assert "SquareBackward" in labels
    assert any(label.startswith("grad_x") for label in labels)


def test_tensor_without_history_is_a_lone_node():
    """Is a tensor with no autograd history drawn alone, as the SinhBad lesson needs?"""
    graph = graph_of(c=torch.ones(2))
    assert graph.nodes == [("n0", "c\n (2)", "constant")] and graph.edges == []  # torchviz's label


def test_untrusted_graph_data_is_sanitised():
    """Does rebuilding a graph from a worker's data drop malformed nodes and dangling edges?"""
    graph = Graph.from_dict({"nodes": [["n0", "ok", "op"], ["n1", "x", "evil"], ["n2"]],
                             "edges": [["n0", "n1"], ["n0", "n0"]]})
    assert graph.nodes == [("n0", "ok", "op")] and graph.edges == [("n0", "n0", "")]
