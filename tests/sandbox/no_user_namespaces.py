"""Runs a command where the kernel refuses to make user namespaces, as on Ubuntu 24.04 (AppArmor's
default without a profile), some clusters, or with `sysctl user.max_user_namespaces=0`:

    python -m tests.sandbox.no_user_namespaces PROGRAM ARG...

As an ordinary user it makes one user namespace that maps the caller's own ids, sets the limit on user
namespaces inside it to 0 (the kernel keeps that limit per user namespace), and runs PROGRAM there, which
cannot make another. As root (whose user namespace must stay the machine's, so that workers take their
own user ids) it does what Docker's default seccomp profile does to a container, as on a Gradescope
runner without user namespaces: a seccomp filter refuses every new namespace (`unshare`, `setns`,
`clone` with a namespace flag; `clone3` answers that it does not exist), for PROGRAM and all it starts.
"""

import ctypes
import errno
import os
import sys

CLONE_NEWUSER = 0x10000000
# every CLONE_NEW* flag: time, mount, cgroup, UTS, IPC, user, PID, network
NAMESPACE_FLAGS = (0x00000080, 0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                   0x40000000)


def refuse_namespaces() -> None:
    import pyseccomp

    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for call in ("unshare", "setns"):
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), call)
    for flag in NAMESPACE_FLAGS:
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), "clone",
                       pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    rules.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()


def main() -> None:
    if os.geteuid() == 0:
        refuse_namespaces()
        os.execv(sys.argv[1], sys.argv[1:])
    uid, gid = os.getuid(), os.getgid()
    if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWUSER) != 0:
        sys.exit("no_user_namespaces: this kernel makes no user namespace at all")
    for name, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                       ("/proc/self/gid_map", f"{gid} {gid} 1"), ("/proc/sys/user/max_user_namespaces", "0")):
        with open(name, "w") as f:
            f.write(text)
    os.execv(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
