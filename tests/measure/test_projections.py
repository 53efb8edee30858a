"""Do the random projections that decide the gradient checks catch what a whole Jacobian would, and
are they drawn the same in the worker that measures and in the grader that judges?"""

import subprocess
import sys

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.measure import projections
from autograder.measure.projections import EPS, all_close, blind, directions, gradcheck_agrees

sizes = st.lists(st.integers(1, 6), min_size=1, max_size=3)


def vjps(jacobians: list[torch.Tensor], d: projections.Directions) -> list[list[list[float]]]:
    """vᵀJ and v2ᵀJ, one list per input, as the probe measures them."""
    return [[(torch.tensor(v, dtype=torch.float64) @ j).tolist() for j in jacobians] for v in (d.v, d.v2)]


@given(seed=st.integers(0, 10**6), case=st.integers(0, 20), outputs=st.integers(1, 30), inputs=sizes)
def test_directions_are_unit_vectors_exact_in_float32_and_never_zero(seed, case, outputs, inputs):
    """Is every vector about unit length, with entries that float32 holds exactly, none of them zero and
    none far smaller than the others?"""
    d = directions(seed, case, outputs, tuple(inputs))
    for vector in [d.v, d.v2, d.uv, *([x for v in vs for x in v] for vs in (d.u, d.w, d.ux))]:
        if len(vector) == 1:  # a scalar: not ±1 (see the next test), half to one in size
            assert 0.5 <= abs(vector[0]) <= 1 + 2**-12
            continue
        assert abs(sum(x * x for x in vector) ** 0.5 - 1) < 1e-2 * len(vector)
        assert all(x != 0 and float(torch.tensor(x, dtype=torch.float32)) == x for x in vector)
        assert min(abs(x) for x in vector) >= 0.4 * max(abs(x) for x in vector) - 2**-12
    assert [len(u) for u in d.u] == [len(w) for w in d.w] == [len(u) for u in d.ux] == inputs


def test_a_scalar_output_gets_two_cotangents_of_different_sizes():
    """Is a scalar loss's grad_output not ±1, and v2 another size than v, so that a backward ignoring
    grad_output cannot look right (with v = 1) and shows the same gradient for two grad_outputs?"""
    for seed in range(50):
        d = directions(seed, 0, 1, (3,))
        assert abs(d.v[0]) != 1 and abs(d.v[0]) != abs(d.v2[0])


def test_directions_are_the_same_in_another_process():
    """Does a fresh interpreter (another hash seed, another import order) draw the very same vectors,
    as a worker and the grader must?"""
    here = directions(3, 1, 4, (2, 3))
    code = "from autograder.measure.projections import directions; print(repr(directions(3, 1, 4, (2, 3))))"
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"}).stdout.strip()
    assert there == repr(here)
    assert directions(4, 1, 4, (2, 3)) != here and directions(3, 2, 4, (2, 3)) != here


@settings(max_examples=200)
@given(seed=st.integers(0, 10**6), rows=st.integers(1, 6), cols=st.integers(1, 6), data=st.data())
def test_any_wrong_entry_shows_in_the_vector_jacobian_products(seed, rows, cols, data):
    """Whatever the Jacobian and whichever single entry of it is off (by 1e-4 or more), do the two
    vector-Jacobian products differ from the right ones, as the whole matrix would?"""
    right = torch.tensor(data.draw(st.lists(st.floats(-2, 2), min_size=rows * cols, max_size=rows * cols)),
                         dtype=torch.float64).reshape(rows, cols)
    i, j = data.draw(st.integers(0, rows - 1)), data.draw(st.integers(0, cols - 1))
    delta = data.draw(st.floats(1e-4, 1)) * data.draw(st.sampled_from([-1, 1]))
    wrong = right.clone()
    wrong[i, j] += delta
    d = directions(seed, 0, rows, (cols,))
    assert all_close(vjps([right], d), vjps([right], d))
    assert not all_close(vjps([wrong], d), vjps([right], d))


def finite_differences(f, x: torch.Tensor, u: list[float]) -> list[float]:
    step = torch.tensor(u, dtype=torch.float64).reshape(x.shape) * EPS
    return ((f(x + step) - f(x - step)) / (2 * EPS)).reshape(-1).tolist()


@given(seed=st.integers(0, 10**6), factor=st.sampled_from([0.0, -1.0, 2.0, 0.5]))
def test_gradcheck_projections_pass_the_derivative_and_fail_a_wrong_factor(seed, factor):
    """For f(x) = sin(Ax), do backward's projections agree with finite differences when backward is
    right, and disagree when it is off by a factor (zero, the sign, 2, 1/2), whatever the seed?"""
    generator = torch.Generator().manual_seed(seed)
    a = torch.rand(4, 3, generator=generator, dtype=torch.float64) * 2 - 1
    x = torch.rand(3, generator=generator, dtype=torch.float64)

    def f(t):
        return torch.sin(a @ t)

    jacobian = torch.cos(a @ x)[:, None] * a
    d = directions(seed, 0, 4, (3,))
    fd = finite_differences(f, x, d.u[0])
    assert gradcheck_agrees(vjps([jacobian], d), fd, d)
    assert not gradcheck_agrees(vjps([factor * jacobian], d), fd, d)


def test_second_derivatives_autograd_cannot_see_are_blind():
    """Are second derivatives of zero through autograd, where finite differences of backward move, called
    blind (backward used values autograd cannot see); and are the right ones not?"""
    d = directions(0, 0, 2, (2,))
    moving = {"hvp": [[0.0, 0.0], [0.5, 0.5]], "fd_x": [[0.3, -0.1]], "fd_v": [[0.5, 0.5]]}
    assert blind(moving, d)
    assert not blind(dict(moving, hvp=[[0.3, -0.1], [0.5, 0.5]]), d)
    assert not blind(dict(moving, fd_x=[[0.0, 0.0]]), d)
