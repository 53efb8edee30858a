"""Does the worker's snapshot put back what a call into the submission changed in the grader, when it
compares everything in one go (views of the dicts' version tags and of the functions' code and defaults,
made once) rather than attribute by attribute?"""

import sys

import pytest

from autograder.measure import encoding, projections
from autograder.measure.snapshot import _FIELDS, _VERSION, Snapshot


@pytest.fixture(scope="module")
def snapshot():
    return Snapshot()


def test_this_interpreter_is_compared_in_one_go(snapshot):
    """On the CPython the project runs (3.11), both views are found: nothing is read attribute by
    attribute (an audited event each, in a worker) while nothing changed."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        pytest.skip("the layouts are checked on CPython 3.11")
    assert _VERSION is not None and _FIELDS is not None
    assert snapshot.hot.viewed and snapshot.hot.tagged and snapshot.all.viewed
    assert snapshot.read_back() == frozenset()


@pytest.mark.parametrize("what", ["__code__", "__defaults__", "__kwdefaults__"])
@pytest.mark.parametrize("everything", [False, True])
def test_a_function_changed_is_put_back(snapshot, what, everything):
    function = encoding.decode_args
    saved = getattr(function, what)
    replacement = {"__code__": (lambda *a, **k: None).__code__, "__defaults__": (1, 2, 3),
                   "__kwdefaults__": {"forged": 1}}[what]
    try:
        setattr(function, what, replacement)
        snapshot.restore(everything=everything)
        assert getattr(function, what) is saved
    finally:
        setattr(function, what, saved)


def test_a_function_of_the_whole_grader_is_put_back(snapshot):
    """A function only the full restore covers (torch's gradcheck): put back by it, not by guard()'s."""
    gradcheck = sys.modules["torch.autograd.gradcheck"]
    function, saved = gradcheck.gradcheck, gradcheck.gradcheck.__code__
    try:
        function.__code__ = (lambda *a, **k: True).__code__
        snapshot.restore(everything=False)
        assert function.__code__ is not saved  # not a hot one
        snapshot.restore(everything=True)
        assert function.__code__ is saved
    finally:
        function.__code__ = saved


def test_globals_and_class_attributes_changed_are_put_back_every_time(snapshot):
    """A global replaced, a builtin shadowed, a class's method replaced: put back, and again after the next
    change (the one-go comparison follows the dicts' new versions once they are put right)."""
    import torch

    saved, backward = projections.directions_of, torch.Tensor.backward
    for _ in range(3):
        projections.directions_of = lambda *a: "forged"
        encoding.__dict__["len"] = lambda x: 0
        torch.Tensor.backward = lambda *a, **k: None
        snapshot.restore(everything=False)
        assert projections.directions_of is saved
        assert "len" not in vars(encoding)
        assert torch.Tensor.backward is backward


def test_the_global_modes_a_call_changed_are_put_back_each_time(snapshot):
    """Modes a forward or backward may leave on (a default dtype, grad off, anomaly mode, another
    recursion limit) are off again after every guard, which reads each and sets only what changed."""
    import torch

    limit = sys.getrecursionlimit()
    try:
        for _ in range(2):
            torch.set_default_dtype(torch.float64)
            torch.set_grad_enabled(False)
            torch.autograd.set_detect_anomaly(True)
            sys.setrecursionlimit(limit + 100)
            snapshot.restore(everything=False)
            assert torch.get_default_dtype() is torch.float32 and torch.is_grad_enabled()
            assert not torch.is_anomaly_enabled() and sys.getrecursionlimit() == snapshot.recursion_limit
    finally:
        torch.set_default_dtype(torch.float32)
        torch.set_grad_enabled(True)
        torch.autograd.set_detect_anomaly(False)
        sys.setrecursionlimit(limit)
