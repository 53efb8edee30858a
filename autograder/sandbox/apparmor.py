"""The AppArmor profile that lets the grader's Python make user namespaces where Ubuntu (23.10 and later)
restricts them to programs a profile allows (kernel.apparmor_restrict_unprivileged_userns=1), written the
way Ubuntu writes its own for browsers: a profile that confines nothing (`flags=(unconfined)`) and only
allows `userns,`. `python -m autograder apparmor-profile` prints it.

AppArmor attaches a profile to the file a process runs, symbolic links followed: the profile names the
real path of the interpreter, which a virtual environment's `python` is a link to unless it was made with
`python -m venv --copies`.
"""

from __future__ import annotations

import os
import sys
import textwrap

NAME = "autograder-python"
FILE = f"/etc/apparmor.d/{NAME}"
INSTALL = f"sudo tee {FILE}"
LOAD = f"sudo apparmor_parser -r {FILE}"
_SPECIAL = '\\"*?[]{}^'  # AppArmor's glob characters and its quoting: written escaped in a path


def interpreter(executable: str | None = None) -> str:
    """The file the kernel runs for this Python (`executable`: sys.executable), links followed."""
    return os.path.realpath(executable or sys.executable)


def shared(executable: str | None = None) -> bool:
    """Whether this Python is a link to another file (a virtual environment made without --copies): a
    profile for it then reaches every environment made from that interpreter, and the interpreter itself."""
    executable = os.path.abspath(executable or sys.executable)
    return interpreter(executable) != executable


def attachment(path: str) -> str:
    """A path as a profile's attachment: quoted, AppArmor's special characters escaped."""
    return '"' + "".join("\\" + c if c in _SPECIAL else c for c in path) + '"'


def reach(executable: str | None = None) -> str:
    """One honest sentence on what the profile allows beyond the grader."""
    executable = executable or sys.executable
    if shared(executable):
        return (f"Every Python program run with {interpreter(executable)} may then make user namespaces, "
                f"from any virtual environment made from it (yours is a link to it): a virtual environment "
                f"for grading made with `python -m venv --copies` has a Python of its own, and the profile "
                f"its Python prints reaches that copy alone.")
    return "Every Python program run with this copy of Python may then make user namespaces, and no other."


def profile(executable: str | None = None) -> str:
    """The profile's text, for /etc/apparmor.d/autograder-python."""
    executable = executable or sys.executable
    about = (f"AppArmor profile for the autograder's Python ({executable}): it lets this interpreter make "
             f"the user namespaces the grader builds each submission's container from, where AppArmor "
             f"restricts them (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later). It "
             f"confines nothing else. {reach(executable)}")
    return f"""\
{_comment(about)}
#
# Install: {executable} -m autograder apparmor-profile | {INSTALL}
# Load:    {LOAD}
# Remove:  sudo apparmor_parser -R {FILE} && sudo rm {FILE}

abi <abi/4.0>,

profile {NAME} {attachment(interpreter(executable))} flags=(unconfined) {{
  userns,
}}
"""


def _comment(text: str) -> str:
    return textwrap.fill(text, 100, initial_indent="# ", subsequent_indent="# ", break_long_words=False,
                         break_on_hyphens=False)
