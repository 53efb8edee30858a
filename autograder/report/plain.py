"""Text from a class made safe where the grader puts it: in its files and on the instructor's terminal.

What a worker printed or raised, the messages of its measurements and the names of files and zip
entries are untrusted text. Two hazards, each handled in one place:

- a lone surrogate (a cell's `ValueError('\\ud800')`, or a file name's undecodable bytes, which Python
  reads as surrogates) cannot be written as UTF-8: `valid` makes it U+FFFD, and report/files.py writes
  every file through it (write_atomic, and write_results for JSON), so no file of the grader fails on it;
- a control character (an escape sequence in a file named "\\x1b]0;pwned\\x07.py") would reach the
  instructor's terminal raw and set its title or clear it: `shown` writes it as an escape (`\\x1b`), and
  every line the command line prints about the class goes through `say` or `shown`.
"""

from __future__ import annotations

import re
import sys

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 but newline and tab, DEL, C1, lone surrogates, and the bidirectional controls that reorder what a
# terminal shows (the "Trojan Source" characters).
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def valid(text: str) -> str:
    """text with every lone surrogate replaced by U+FFFD, so that it can be written as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def valid_json(value):
    """A JSON document (dicts, lists, strings, numbers) whose strings and keys are all valid()."""
    if isinstance(value, str):
        return valid(value)
    if isinstance(value, dict):
        return {valid_json(k): valid_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_json(v) for v in value]
    return value


def shown(text: str) -> str:
    """text as the terminal may show it: control characters and lone surrogates as Python escapes."""
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"),
                        str(text))


def say(text: str) -> None:
    """One line for the instructor, on stderr."""
    print("autograder: " + shown(text), file=sys.stderr)
