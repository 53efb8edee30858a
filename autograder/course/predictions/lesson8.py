"""Lesson 8's Predict questions (autograder/course/predictions/__init__.py says how they are read)."""

from autograder.course.predictions import Question

QUESTIONS = [
    Question(
        id="8.graph",
        form="choice",
        choices=("one call of the operator", "NumPy's exp, traced", "a graph break"),
        code="""\
import sys
import types

import numpy as np

try:  # registered once per process, under a name of the question's own
    numpy_exp = torch.ops.predict8.numpy_exp
except AttributeError:
    @torch.library.custom_op("predict8::numpy_exp", mutates_args=())
    def numpy_exp(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.exp(x.numpy(force=True))).to(x.device)

    @numpy_exp.register_fake
    def _(x):
        return torch.empty_like(x)

graphs = []


def keep_graph(graph_module, example_inputs):
    graphs.append(graph_module.code)
    return graph_module.forward


def f(x):
    return numpy_exp(x.sin()) * 2


# older Dynamo (torch 2.5) reads f's globals from the module named __name__: give it one
module = types.ModuleType(__name__)
vars(module).update(globals())
sys.modules[__name__] = module
torch.compile(f, backend=keep_graph)(torch.linspace(-1, 1, 5))
del sys.modules[__name__]
("a graph break" if len(graphs) != 1 else
 "one call of the operator" if "predict8.numpy_exp" in graphs[0] else "NumPy's exp, traced")
""",
        answer="one call of the operator",
        why="""One node, a call to the operator's `default` overload (the one version with this schema),
between `sin` and the multiplication, in a single graph. No NumPy appears: Dynamo did not trace into the
body, it recorded the operator, and the fake kernel gave it the output's shape. A plain `Function` with
the same NumPy body would have been traced into instead (Lesson 7).""",
    ),
]
