"""The C library's entry points the sandbox calls directly (prctl, and the system calls Python 3.11 does
not wrap), and their constants."""

from __future__ import annotations

import ctypes

PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS = 1, 4, 8, 38
PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER = 36, 37
CAPABILITY_VERSION_3 = 0x20080522  # capset()'s header: two 32-bit words per set
_LIBC: list = []


def libc():
    if not _LIBC:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        _LIBC.append(lib)
    return _LIBC[0]


def prctl(option: int, value: int) -> int:
    return libc().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                        ctypes.c_ulong(0))
