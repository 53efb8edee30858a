"""check() reads the rules in the cells the kernel ran, as the batch grader reads the submitted notebook:
the newest cell defining a name stands for it (autograder/notebook_source.py)."""

from autograder.notebook_source import cells_run

WRONG = "class Exp(Function):\n    pass  # first try\n"
RIGHT = "class Exp(Function):\n    pass  # run again, edited\n"


def test_the_newest_definition_wins_and_reruns_count_once():
    history = ["", "import torch", WRONG, "x = 1", RIGHT, "check(Exp)", RIGHT]
    assert cells_run({"In": history}, "Exp") == ["import torch", "x = 1", "check(Exp)", RIGHT]


def test_magics_are_left_out_and_other_names_kept():
    history = ["%matplotlib inline", "def helper(x):\n    return x", WRONG]
    assert cells_run({"In": history}, "Exp") == ["def helper(x):\n    return x", WRONG]


def test_nothing_outside_ipython_or_where_no_cell_defines_the_name():
    assert cells_run({}, "Exp") == []
    assert cells_run({"In": "not a list"}, "Exp") == []
    assert cells_run({"In": ["from helpers import Exp", "x = 1"]}, "Exp") == []
