"""Does expect_error show an expected error as the lessons need, and let every other outcome through?"""

import pytest

from autograder import expect_error


def test_prints_the_type_and_the_message_instead_of_raising(capsys):
    with expect_error(RuntimeError):
        raise RuntimeError("Trying to backward through the graph a second time")
    assert capsys.readouterr().out == "RuntimeError: Trying to backward through the graph a second time\n"


def test_a_block_that_raises_nothing_fails():
    with (pytest.raises(AssertionError, match="expected RuntimeError, but the block ran without an error"),
          expect_error(RuntimeError)):
        pass


def test_an_error_of_another_type_propagates():
    with pytest.raises(TypeError), expect_error(RuntimeError):
        raise TypeError("not the lesson's error")


def test_an_unwritten_exercise_stops_the_notebook():
    """NotImplementedError is a RuntimeError, but it is how an unsolved exercise stops: it propagates."""
    with pytest.raises(NotImplementedError), expect_error(RuntimeError):
        raise NotImplementedError()


def test_asked_for_notimplementederror_is_shown(capsys):
    with expect_error(NotImplementedError):
        raise NotImplementedError("You must implement the jvp function")
    assert capsys.readouterr().out == "NotImplementedError: You must implement the jvp function\n"


def test_long_lines_are_wrapped_and_lines_cut(capsys):
    with expect_error(ValueError, lines=1):
        raise ValueError("word " * 40 + "\nsecond line")
    out = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in out) and out[-1] == "  [...]"
    assert "second line" not in "\n".join(out)
