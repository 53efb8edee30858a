"""expect_error(): a lesson's "what goes wrong here?" cell shows its error without stopping Run All.

    from autograder import expect_error
    with expect_error(RuntimeError):
        loss.backward()
        loss.backward()

prints `RuntimeError: Trying to backward through the graph a second time ...` (the exception's type and
message, without the traceback) and lets the next cells run. If the block raises nothing, or an error of
another type, that is no longer what the lesson says, and it propagates. A NotImplementedError also
propagates unless it is the type asked for: it is how an unwritten exercise stops the notebook.
"""

from __future__ import annotations

import textwrap
from contextlib import contextmanager

WIDTH = 100  # the site shows output lines of this width without a scroll bar


@contextmanager
def expect_error(kind: type[BaseException] = Exception, lines: int | None = None):
    """Runs the block, which must raise `kind`, and prints the error (its first `lines` lines)."""
    try:
        yield
    except kind as error:
        if isinstance(error, NotImplementedError) and kind is not NotImplementedError:
            raise  # an exercise not written yet, not the demonstration's error
        print(describe(error, lines))
    else:
        raise AssertionError(f"expected {kind.__name__}, but the block ran without an error")


def describe(error: BaseException, lines: int | None = None) -> str:
    """`Type: message`, long lines wrapped, cut after `lines` lines of the message."""
    message = str(error).strip().splitlines() or [""]
    shown = message if lines is None else message[:lines]
    shown[0] = f"{type(error).__name__}: {shown[0]}"
    text = "\n".join(textwrap.fill(line, WIDTH, subsequent_indent="  ", break_long_words=False)
                     if len(line) > WIDTH else line for line in shown)
    return text + ("\n  [...]" if len(shown) < len(message) else "")
