"""The benchmark's nbgrader side asks our checks' questions on the same inputs (tools/bench): its hidden
tests must give every variant of the class the verdict the class's design expects, kinks included (MyReLU's
case on 0, where any derivative from 0 to 1 is right and finite differences mean nothing)."""

from __future__ import annotations

import pytest
import torch

from autograder.course import find_assignment
from autograder.judge.reference import encoded_cases
from tools.bench import ASSIGNMENT
from tools.bench.nbgrader_course import HELPERS, REFERENCES
from tools.bench.students import VARIANTS, variant_code


def hidden_test_passes(problem, variant: str) -> bool:
    namespace: dict = {"torch": torch, "Function": torch.autograd.Function}
    exec(HELPERS, namespace)  # noqa: S102 - the benchmark's own cells
    exec(variant_code(problem.name, variant), namespace)  # noqa: S102
    exec(REFERENCES[problem.name], namespace)  # noqa: S102
    kinks = [(k.at, k.low, k.high) for k in problem.kinks]
    try:
        namespace["_grade"](problem.name, namespace["_reference"], encoded_cases(problem, 0),
                            double_backward=problem.double_backward, kinks=kinks)
    except (AssertionError, RuntimeError, TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize(("variant", "right"), sorted(VARIANTS["MyReLU"].items()))
def test_the_hidden_tests_of_myrelu_agree_with_the_design_at_its_kink(variant, right):
    problem = next(p for p in find_assignment(ASSIGNMENT).problems if p.name == "MyReLU")
    assert any(0.0 in a["values"] for case in encoded_cases(problem, 0) for a in case if isinstance(a, dict))
    assert hidden_test_passes(problem, variant) == right


DESIGN = [(p, v, ok) for p, variants in sorted(VARIANTS.items()) for v, ok in variants.items()]


@pytest.mark.parametrize(("problem", "variant", "right"), DESIGN)
def test_check_gives_every_variant_the_verdict_of_the_design(problem, variant, right):
    """Our own checks agree with the class's design too (a variant designed right that our rules fail,
    such as a LinearFunction that never skips the work ctx.needs_input_grad allows, breaks the bench's
    comparison)."""
    from autograder import check

    namespace: dict = {"torch": torch, "Function": torch.autograd.Function}
    exec(compile(variant_code(problem, variant), "<cell 1>", "exec"), namespace)  # noqa: S102
    assert check(namespace[problem]).passed == right
