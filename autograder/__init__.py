"""autograd-course's autograder: the inline check() of the notebooks and the batch grader.

Imports are lazy so that `from autograder import check` stays cheap inside a grading worker.
"""

__all__ = ["check", "draw"]


def __getattr__(name):
    if name == "check":
        from autograder.inline import check

        return check
    if name == "draw":
        from autograder.graphs import draw

        return draw
    raise AttributeError(name)
