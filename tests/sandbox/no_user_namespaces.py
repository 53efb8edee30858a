"""Runs a command where the kernel refuses to make user namespaces, as on Ubuntu 24.04 (AppArmor's
default without a profile), some clusters, or with `sysctl user.max_user_namespaces=0`:

    python -m tests.sandbox.no_user_namespaces PROGRAM ARG...

It makes one user namespace that maps the caller's own ids, sets the limit on user namespaces inside it to
0 (the kernel keeps that limit per user namespace), and runs PROGRAM there, which cannot make another.
"""

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main() -> None:
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
