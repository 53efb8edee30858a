"""Why the kernel refused the grader its container, and the least-privilege way to allow it on this machine.

The cause is read from what decides it: the errno of unshare(), the settings under /proc/sys
(kernel.apparmor_restrict_unprivileged_userns, kernel.unprivileged_userns_clone, user.max_user_namespaces),
whether the kernel has user namespaces at all, and signs of running inside a container (Docker's
/.dockerenv, Podman's /run/.containerenv, /proc/1/cgroup) under a system-call filter or an AppArmor
profile. Each cause gets its own fix, the narrowest that works, then grading as root where root is not
refused too; parent.py's message ends with --no-isolation, the weakest way.
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass

from autograder.sandbox import apparmor

APPARMOR = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
CLONE = "/proc/sys/kernel/unprivileged_userns_clone"
MAX = "/proc/sys/user/max_user_namespaces"
USER_NS = "/proc/self/ns/user"
LABEL = "/proc/self/attr/apparmor/current"  # this process's AppArmor profile (Linux 5.8 and later)
CONTAINER_FILES = ("/.dockerenv", "/run/.containerenv")
CONTAINER_CGROUPS = ("docker", "containerd", "kubepods", "libpod", "lxc")
SUGGESTED_MAX = 1024  # user namespaces: the grader makes one, and one per worker running at a time
_NO_ACCESS = (errno.EPERM, errno.EACCES)


def _read(path: str) -> str | None:
    """A file's text, stripped; None when it cannot be read (the tests replace this reader)."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _exists(path: str) -> bool:
    return os.path.lexists(path)


@dataclass(frozen=True)
class Machine:
    """What decides whether this process may make user namespaces."""
    root: bool  # with CAP_SYS_ADMIN, neither AppArmor's restriction nor Debian's applies
    apparmor_restricts: bool  # kernel.apparmor_restrict_unprivileged_userns=1
    clone_disabled: bool  # kernel.unprivileged_userns_clone=0
    max_user_namespaces: int | None  # user.max_user_namespaces (None: not readable)
    has_user_namespaces: bool  # /proc/self/ns/user: a kernel built with CONFIG_USER_NS
    container: str | None  # the sign of a container found (a file, or /proc/1/cgroup)
    seccomp: bool  # a system-call filter is on this process (Seccomp: 2 in /proc/self/status)
    apparmor_label: str | None  # this process's AppArmor profile, when one confines it


def machine() -> Machine:
    maximum = _read(MAX)
    status = _read("/proc/self/status") or ""
    seccomp = any(line.split(":")[0] == "Seccomp" and line.split()[-1] == "2" for line in status.splitlines())
    label = _read(LABEL)  # not /proc/self/attr/current, which holds SELinux's label where it rules
    label = label.removesuffix(" (enforce)").removesuffix(" (complain)") if label else None
    return Machine(root=os.geteuid() == 0, apparmor_restricts=_read(APPARMOR) == "1",
                   clone_disabled=_read(CLONE) == "0",
                   max_user_namespaces=int(maximum) if maximum and maximum.isdigit() else None,
                   has_user_namespaces=_exists(USER_NS), container=_container(), seccomp=seccomp,
                   apparmor_label=None if label in (None, "", "unconfined") else label)


def _container() -> str | None:
    for path in CONTAINER_FILES:
        if _exists(path):
            return path
    cgroups = _read("/proc/1/cgroup") or ""
    if any(name in cgroups for name in CONTAINER_CGROUPS):
        return "/proc/1/cgroup"
    return None


def cause(error: int, m: Machine) -> str:
    """The cause of a refused unshare(CLONE_NEWUSER | ...), by its errno and the machine: "max", "none",
    "container", "clone", "apparmor", "filter" or "unknown"."""
    if error == errno.ENOSPC:
        return "max"
    if error == errno.ENOSYS or (error == errno.EINVAL and not m.has_user_namespaces):
        return "none"
    if error not in _NO_ACCESS:
        return "unknown"
    if m.container and (m.seccomp or m.apparmor_label):
        return "container"
    if m.clone_disabled and not m.root:
        return "clone"
    if m.apparmor_restricts and not m.root:
        return "apparmor"
    return "filter" if m.seccomp else "unknown"


def explain(error: int, m: Machine | None = None, executable: str | None = None) -> str:
    """Why the kernel refused unshare() the user namespace (its errno), a newline, then what to do: for the
    grader's message (parent.py), which wraps the lines into one paragraph. `executable`: the grader's
    Python (sys.executable)."""
    m = m or machine()
    return "\n".join(_why(cause(error, m), error, m, executable or sys.executable))


def later(reason: str, m: Machine | None = None) -> str:
    """The same for a later step of the container (its user ids, a mount), `reason` saying which and the
    kernel's word: once the user namespace is made, only a container's own confinement is a known cause."""
    m = m or machine()
    why, fix = _why("container" if m.container and (m.seccomp or m.apparmor_label) else "step", 0, m, "")
    return f"{reason}; {why}\n{fix}"


def _why(kind: str, error: int, m: Machine, executable: str) -> tuple[str, str]:
    """The cause in words, and its fix (sentences)."""
    root = "" if m.root else " Or grade as root: root makes user namespaces without that restriction."
    keep = "and the same setting in a file under /etc/sysctl.d/ to keep it after a restart"
    if kind == "apparmor":
        why = (f"AppArmor restricts unprivileged user namespaces on this machine "
               f"(kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu's default since 24.04) and no "
               f"profile allows them to this Python ({apparmor.interpreter(executable)}).")
        fix = (f"Give it one: `{executable} -m autograder apparmor-profile | {apparmor.INSTALL}`, then "
               f"`{apparmor.LOAD}`. {apparmor.reach(executable)}{root}")
    elif kind == "clone":
        why = ("this kernel lets only root make user namespaces (kernel.unprivileged_userns_clone=0, a "
               "Debian setting).")
        fix = (f"Allow them: `sudo sysctl kernel.unprivileged_userns_clone=1`, {keep}; every user may then "
               f"make user namespaces, as on kernels without that setting.{root}")
    elif kind == "max":
        why = f"{_limit(m.max_user_namespaces)}."
        fix = (f"Allow enough: `sudo sysctl user.max_user_namespaces="
               f"{max(SUGGESTED_MAX, 2 * (m.max_user_namespaces or 0))}` (the grader makes one, and one per "
               f"worker running at a time), {keep}; every user may then make that many.")
    elif kind == "none":
        why = ("this kernel has no user namespaces (it was built without CONFIG_USER_NS: no "
               "/proc/self/ns/user).")
        fix = ("Grade on a machine whose kernel has them, as every current distribution's has, or on "
               "Gradescope.")
    elif kind == "container":
        confined = [(o, w) for o, w, on in (("seccomp", "a system-call filter", m.seccomp), (
            "apparmor", f"the AppArmor profile {m.apparmor_label}", m.apparmor_label)) if on]
        both = len(confined) > 1
        under = " and ".join(w for _, w in confined)
        options = " and ".join(f"`--security-opt {o}=unconfined`" for o, _ in confined)
        why = (f"the grader runs in a container ({m.container}) under {under}, which refuse"
               f"{'' if both else 's'} new namespaces (Docker's defaults do).")
        fix = (f"Start the container with {options}: that container alone then runs without "
               f"{'them' if both else 'it'}, gaining no capability, and the grader puts its own filter on "
               f"every worker. Or grade outside the container.")
    elif kind == "filter":
        why = ("a system-call filter on the grader refuses new namespaces (Seccomp: 2 in /proc/self/status: "
               "a systemd service with RestrictNamespaces=, a snap, a sandbox such as Flatpak or firejail).")
        fix = "Run the grader outside it, from a plain terminal."
    else:  # "unknown", or "step" (a later step, whose reason says what the kernel refused)
        why = (f"{'' if kind == 'step' else f'the kernel said {os.strerror(error)}, and '}neither /proc/sys "
               f"nor a container explains why (a security module such as SELinux may).")
        fix = f"Grade {'' if m.root else 'as root, or '}on Gradescope."
    return why, fix


def _limit(maximum: int | None) -> str:
    if maximum == 0:
        return "user namespaces are turned off for every user, root included (user.max_user_namespaces=0)"
    return (f"the limit on user namespaces is reached (user.max_user_namespaces={maximum}, counted per "
            f"user), or this process is already 32 user namespaces deep")
