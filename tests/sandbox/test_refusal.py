"""Where the kernel refuses the grader its container, does the message name the cause it finds and that
cause's fix only, narrowest first, grading as root where root is not refused too, --no-isolation last?
And does `python -m autograder apparmor-profile` print a profile for the interpreter's real file?

Each cause is simulated: the readers of /proc (refusal._read, refusal._exists) answer from a made-up
machine, the effective user id is set, and unshare() fails with the cause's errno; the message is the one
the grader prints (container.outer_namespaces() as the clean parent runs it, parent.unavailable_message).
The profile is parsed by apparmor_parser where one that knows `userns,` (AppArmor 4) is installed.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder.sandbox import Server, apparmor, container, refusal
from autograder.sandbox.parent import ContainerUnavailable, unavailable_message
from tests.conftest import autograder

# What each cause's fix says, and nothing else does: a message names its own and none of the others.
FIXES = {"apparmor": "-m autograder apparmor-profile | sudo tee /etc/apparmor.d/autograder-python",
         "clone": "sudo sysctl kernel.unprivileged_userns_clone=1",
         "max": "sudo sysctl user.max_user_namespaces=",
         "none": "Grade on a machine whose kernel has them",
         "container": "--security-opt seccomp=unconfined",
         "filter": "Run the grader outside it"}
ROOT_FIX = "Or grade as root"
PLAIN = {"/proc/sys/user/max_user_namespaces": "63000", "/proc/self/ns/user": "",
         "/proc/self/status": "Name:\tpython\nSeccomp:\t0\nSeccomp_filters:\t0", "/proc/1/cgroup": "0::/\n",
         refusal.LABEL: "unconfined"}
# cause: (unshare's errno, the machine's files beyond PLAIN (None: absent), euid, what names the cause)
CAUSES = {
    "apparmor": (errno.EPERM, {refusal.APPARMOR: "1\n"}, 1000,
                 "kernel.apparmor_restrict_unprivileged_userns=1"),
    "clone": (errno.EPERM, {refusal.CLONE: "0\n"}, 1000, "kernel.unprivileged_userns_clone=0"),
    "max": (errno.ENOSPC, {refusal.MAX: "0\n"}, 1000, "user.max_user_namespaces=0"),
    "none": (errno.EINVAL, {refusal.USER_NS: None, refusal.MAX: None}, 1000, "CONFIG_USER_NS"),
    "container": (errno.EPERM, {"/.dockerenv": "", "/proc/self/status": "Seccomp:\t2\n"}, 0, "(/.dockerenv)"),
    "filter": (errno.EPERM, {"/proc/self/status": "Seccomp:\t2\n"}, 1000, "Seccomp: 2"),
}


def simulate(monkeypatch, files: dict, euid: int) -> None:
    """The machine refusal.py reads: PLAIN's files updated by `files` (None: absent), this effective uid."""
    fake = {**PLAIN, **files}
    monkeypatch.setattr(refusal, "_read", lambda path: None if fake.get(path) is None else fake[path].strip())
    monkeypatch.setattr(refusal, "_exists", lambda path: fake.get(path) is not None)
    monkeypatch.setattr(refusal.os, "geteuid", lambda: euid)


def refused(monkeypatch, error: int) -> str:
    """The grader's message when unshare() fails with `error` in the clean parent's first process."""
    def unshare(flags: int) -> None:
        raise container.ContainerError(error, os.strerror(error))

    monkeypatch.setattr(container, "unshare", unshare)
    with pytest.raises(container.ContainerError) as caught:
        container.outer_namespaces()
    return unavailable_message(caught.value.strerror)


@pytest.mark.parametrize("cause", CAUSES)
def test_the_message_names_the_cause_and_its_fix_only(monkeypatch, cause):
    error, files, euid, named = CAUSES[cause]
    simulate(monkeypatch, files, euid)
    message = refused(monkeypatch, error)
    assert named in message
    assert FIXES[cause] in message
    assert [other for other, fix in FIXES.items() if fix in message] == [cause]
    # root is offered only where root is not refused too (AppArmor's and Debian's restrictions)
    assert (ROOT_FIX in message) == (cause in ("apparmor", "clone"))
    # --no-isolation last, after the cause's fix (and root)
    assert message.index(FIXES[cause]) < message.index("--no-isolation")
    assert "--no-isolation" not in message[:message.index("Last resort")]


def test_apparmor_names_the_real_interpreter_and_the_profiles_reach(monkeypatch, tmp_path):
    """The profile must name the file the kernel runs: a virtual environment's python is a link."""
    simulate(monkeypatch, {refusal.APPARMOR: "1"}, 1000)
    link = tmp_path / "venv" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(sys.executable)
    message = refusal.explain(errno.EPERM, executable=str(link))
    real = os.path.realpath(sys.executable)
    assert f"this Python ({real})" in message
    assert f"{link} -m autograder apparmor-profile" in message
    assert "sudo apparmor_parser -r /etc/apparmor.d/autograder-python" in message
    assert "python -m venv --copies" in message  # a link: the profile reaches every environment made so
    copy = tmp_path / "copied" / "python"
    copy.parent.mkdir()
    shutil.copy(real, copy)
    message = refusal.explain(errno.EPERM, executable=str(copy))
    assert f"this Python ({copy})" in message and "--copies" not in message
    assert "this copy of Python" in message


def test_as_root_apparmor_and_debian_do_not_refuse(monkeypatch):
    """With CAP_SYS_ADMIN neither restriction applies: their fixes would not help, and root is no way out."""
    simulate(monkeypatch, {refusal.APPARMOR: "1", refusal.CLONE: "0"}, 0)
    message = refused(monkeypatch, errno.EPERM)
    assert not [cause for cause, fix in FIXES.items() if fix in message]
    assert ROOT_FIX not in message and "as root" not in message
    assert "neither /proc/sys nor a container explains why" in message and "on Gradescope" in message


def test_a_limit_reached_is_raised_not_lowered(monkeypatch):
    simulate(monkeypatch, {refusal.MAX: "5000"}, 1000)
    message = refused(monkeypatch, errno.ENOSPC)
    assert "the limit on user namespaces is reached (user.max_user_namespaces=5000" in message
    assert "sudo sysctl user.max_user_namespaces=10000" in message


def test_a_container_under_apparmor_needs_both_options(monkeypatch):
    simulate(monkeypatch, {"/run/.containerenv": "", "/proc/self/status": "Seccomp:\t2",
                           refusal.LABEL: "docker-default (enforce)", refusal.APPARMOR: "1"},
             1000)
    message = refused(monkeypatch, errno.EPERM)
    assert "(/run/.containerenv) under a system-call filter and the AppArmor profile docker-default" \
        in message
    assert "`--security-opt seccomp=unconfined` and `--security-opt apparmor=unconfined`" in message
    assert FIXES["apparmor"] not in message and ROOT_FIX not in message


def test_a_container_seen_from_its_cgroup(monkeypatch):
    simulate(monkeypatch, {"/proc/1/cgroup": "0::/system.slice/docker-4f2a.scope\n",
                           refusal.LABEL: "docker-default (enforce)"}, 1000)
    message = refused(monkeypatch, errno.EACCES)
    assert "(/proc/1/cgroup) under the AppArmor profile docker-default, which refuses" in message
    assert "`--security-opt apparmor=unconfined`" in message and "seccomp=unconfined" not in message


def test_a_container_that_refuses_nothing_is_not_blamed(monkeypatch):
    """/.dockerenv alone (this very machine may have one) with no filter or profile: not the cause."""
    simulate(monkeypatch, {"/.dockerenv": "", refusal.APPARMOR: "1"}, 1000)
    assert FIXES["apparmor"] in refused(monkeypatch, errno.EPERM)


def test_a_later_step_refused_in_a_confined_container(monkeypatch):
    """The user namespace made, a mount refused (a container with CAP_SYS_ADMIN but Docker's AppArmor
    profile): the clean parent says which step after "u"; the grader adds the container's fix."""
    simulate(monkeypatch, {"/.dockerenv": "", refusal.LABEL: "docker-default (enforce)"}, 1000)
    monkeypatch.setattr(container, "write_maps", lambda pid, ids: None)
    said = "mount tmpfs on /tmp: Permission denied"
    server = Server.__new__(Server)
    server.pid = os.getpid()
    for words, expected in ((b"x" + b"the first word", "the first word"),
                            (b"u" + b"x" + said.encode(), f"{said}; the grader runs in a container")):
        sync_r, sync_w = os.pipe()
        go_r, go_w = os.pipe()
        os.write(sync_w, words)
        with pytest.raises(ContainerUnavailable) as caught:
            server._handshake(sync_r, go_w)
        assert str(caught.value).startswith(expected)
        for fd in (sync_r, sync_w, go_r, go_w):
            os.close(fd)
    assert "`--security-opt apparmor=unconfined`" in str(caught.value)


def test_the_profile_command_prints_a_profile_for_the_real_interpreter(tmp_path):
    result = autograder("apparmor-profile")
    text = result.stdout
    real = os.path.realpath(sys.executable)
    assert "abi <abi/4.0>," in text
    header = re.search(r'^profile autograder-python "(.+)" flags=\(unconfined\) \{$', text, re.MULTILINE)
    assert header is not None and header.group(1) == real
    assert re.search(r"\{\n  userns,\n\}\n\Z", text)
    rules = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert rules == ["abi <abi/4.0>,", header.group(0), "  userns,", "}"]
    assert f"# Install: {sys.executable} -m autograder apparmor-profile | sudo tee {apparmor.FILE}" in text
    assert f"# Load:    sudo apparmor_parser -r {apparmor.FILE}" in text


def test_glob_characters_in_the_path_are_escaped():
    assert apparmor.attachment('/opt/my py[3]/bin/python*') == r'"/opt/my py\[3\]/bin/python\*"'


def _parser_knows_userns() -> str | None:
    """apparmor_parser's path when it is AppArmor 4 or later (which knows `userns,`), else None."""
    parser = shutil.which("apparmor_parser")
    if parser is None:
        return None
    version = subprocess.run([parser, "--version"], capture_output=True, text=True, check=False).stdout
    found = re.search(r"version (\d+)", version)
    return parser if found and int(found.group(1)) >= 4 else None


@pytest.mark.skipif(_parser_knows_userns() is None, reason="no apparmor_parser of AppArmor 4 or later")
@pytest.mark.parametrize("place", ["venv/bin/python", "my py[3]/{python}*"])
def test_apparmor_parser_reads_the_profile(tmp_path, place):
    """Parsed only (-Q: no kernel needed; -K: no cache), as `sudo apparmor_parser -r` would read it: for a
    virtual environment's link, and for a copy of Python in a folder whose name holds AppArmor's globs."""
    executable = tmp_path / place
    executable.parent.mkdir(parents=True)
    if place.startswith("venv"):
        executable.symlink_to(sys.executable)
    else:
        shutil.copy(os.path.realpath(sys.executable), executable)
    profile = tmp_path / "autograder-python"
    profile.write_text(apparmor.profile(str(executable)))
    assert apparmor.attachment(os.path.realpath(executable)) in profile.read_text()
    parser = _parser_knows_userns()
    parsed = subprocess.run([parser, "-Q", "-K", str(profile)], capture_output=True, text=True, check=False)
    assert parsed.returncode == 0, parsed.stderr
    profile.write_text(apparmor.profile(str(executable)).replace("userns,", "userns"))  # the test can fail
    refused = subprocess.run([parser, "-Q", "-K", str(profile)], capture_output=True, check=False)
    assert refused.returncode != 0


def test_no_isolation_records_the_cause_without_its_fix(monkeypatch):
    """--no-isolation: results.json and report.html say why there was no container, not the fix again."""
    simulate(monkeypatch, {refusal.MAX: "0"}, 1000)
    reason = refusal.explain(errno.ENOSPC)

    def start(self, fork: bool, contained: bool) -> None:
        if contained:
            raise ContainerUnavailable(reason)

    monkeypatch.setattr(Server, "_start", start)
    server = Server(fallback=True)
    assert server.isolation == ("none: the container could not be made: user namespaces are turned off for "
                                "every user, root included (user.max_user_namespaces=0).")
    with pytest.raises(ContainerUnavailable) as caught:
        Server(fallback=False)
    assert str(caught.value) == unavailable_message(reason) and "sudo sysctl" in str(caught.value)
