"""The system calls a worker may not make, refused by a seccomp filter it loads on itself last: new
namespaces by any call, mounts, tracing, another process's memory or limits, memory behind file
descriptors, sockets of any kind, and the kernel's own administration. Compiled to BPF once, by
libseccomp (the pyseccomp binding), in the clean parent; each worker only loads it."""

from __future__ import annotations

import ctypes
import errno
import functools
import tempfile

from autograder.sandbox.container import NAMESPACE_FLAGS
from autograder.sandbox.kernel import PR_SET_NO_NEW_PRIVS, libc, prctl

# Sockets of every family: a worker needs none (its messages go through pipes it inherits, and it holds
# no socket), and one would reach, whatever namespace it is in, a Unix socket by its path (your ssh-agent,
# tmux, a database), an abstract one, TCP or UDP on this machine or beyond, netlink, raw packets.
NETWORK_CALLS = ("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4")
# Refused with EPERM whatever their arguments: calls that escape the memory limits (memory behind a file
# descriptor is not address space), read or write another process's memory, make or join namespaces,
# mount, or administer the kernel.
REFUSED_CALLS = ("memfd_create", "memfd_secret", "userfaultfd", "ptrace", "process_vm_readv",
                 "process_vm_writev", "pidfd_getfd", "kcmp", "io_uring_setup", "io_uring_enter",
                 "io_uring_register", "keyctl", "add_key", "request_key", "perf_event_open", "bpf",
                 "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount",
                 "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at",
                 "open_by_handle_at", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                 "delete_module", "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl", "vhangup",
                 *NETWORK_CALLS)
_PR_GET_SECCOMP, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, _BPF_INSTRUCTION = 21, 22, 2, 8


def _rules(pyseccomp):
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    refuse = pyseccomp.ERRNO(errno.EPERM)
    for call in REFUSED_CALLS:
        try:
            rules.add_rule(refuse, call)
        except (ValueError, RuntimeError, OSError):
            pass  # a call this kernel or architecture does not have
    # clone() with any namespace flag; clone3() passes its flags in memory a filter cannot read, so it
    # answers "no such call" and the C library falls back to clone(), whose flags are seen.
    flag = 1
    while flag <= NAMESPACE_FLAGS:
        if NAMESPACE_FLAGS & flag:
            rules.add_rule(refuse, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
        flag <<= 1
    rules.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    # limits and priorities of any process but the caller (pid 0 means the caller)
    rules.add_rule(refuse, "prlimit64", pyseccomp.Arg(0, pyseccomp.NE, 0))
    rules.add_rule(refuse, "setpriority", pyseccomp.Arg(1, pyseccomp.NE, 0))
    return rules


@functools.cache
def _compiled() -> tuple[bytes, str]:
    """(the filter as BPF, "") or (b"", why there is none)."""
    try:
        import pyseccomp
    except ImportError:
        return b"", "the Python package pyseccomp is not installed (pip install pyseccomp)"
    except Exception as error:  # noqa: BLE001 - pyseccomp raises RuntimeError where libseccomp is missing
        return b"", (f"pyseccomp cannot load the C library libseccomp ({error}): install it, e.g. "
                     f"`apt-get install libseccomp2` on Debian or Ubuntu")
    try:
        with tempfile.TemporaryFile() as f:
            _rules(pyseccomp).export_bpf(f)
            f.seek(0)
            return f.read(), ""
    except Exception as error:  # noqa: BLE001 - no seccomp support in this libseccomp
        return b"", f"libseccomp could not compile the filter ({type(error).__name__}: {error})"


def seccomp_program() -> bytes:
    """The filter as BPF; empty where libseccomp or seccomp is missing."""
    return _compiled()[0]


def seccomp_unavailable() -> str:
    """Why a worker will run without the filter, in a few words; "" when it will have it."""
    why = _compiled()[1]
    if not why and prctl(_PR_GET_SECCOMP, 0) < 0:
        why = "this kernel has no seccomp (it was built without CONFIG_SECCOMP)"
    return why


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def seccomp() -> bool:
    """Loads seccomp_program() into this process (and all it starts); False where it cannot."""
    program = seccomp_program()
    if not program or len(program) % _BPF_INSTRUCTION:
        return False
    code = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // _BPF_INSTRUCTION, ctypes.cast(code, ctypes.c_void_p))
    if prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        return False
    return libc().prctl(ctypes.c_int(_PR_SET_SECCOMP), ctypes.c_ulong(_SECCOMP_MODE_FILTER),
                        ctypes.c_void_p(ctypes.addressof(fprog)), ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
