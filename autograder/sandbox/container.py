"""The container a worker lives in, made from the kernel's own mechanisms as bubblewrap makes one: user,
PID, mount, network, IPC, UTS and cgroup namespaces, a minimal read-only root, no capabilities.

Three steps, each in the process that can take it:

    outer_namespaces()   the clean parent's first process: a user, mount, PID, network and IPC namespace of
                         its own
    write_maps()         the grader, outside: which user ids that namespace holds (root: 0 and the worker
                         ids; an ordinary user: its own id only)
    build_root()         the clean parent (PID 1 of that namespace): a tmpfs root holding, read-only, the
                         interpreter, its packages and the system's libraries; a /dev of null, zero, full,
                         random and urandom; a /proc of its own; nothing else of the machine
    worker_namespaces()  each worker's init (PID 1 of a PID namespace of its own): new mount, network,
                         IPC, UTS and cgroup namespaces, its own /proc and a size-limited tmpfs at /tmp
    enter_own_user()     the worker itself: a user namespace of its own in which it is user 1000, then
                         every capability dropped for good (capabilities.py)

Nothing here decides anything about a submission: it only builds walls.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import struct

from autograder import config
from autograder.sandbox.kernel import CAPABILITY_VERSION_3, PR_SET_DUMPABLE, libc, prctl

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWTIME = 0x10000000, 0x20000000, 0x40000000, 0x00000080
NAMESPACE_FLAGS = (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
                   | CLONE_NEWNET | CLONE_NEWTIME)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 8, 32, 4096, 16384
MS_PRIVATE, MS_RELATIME = 1 << 18, 1 << 21
MNT_DETACH = 2
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 1, 2, 4
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
_MOUNT_SETATTR = 442  # the same number on every architecture (a new system call)

WORKER_UID = 1000  # who the worker is inside its own user namespace
WORKDIR = "/tmp/submission"  # the worker's folder, on its own tmpfs
# What of the machine's /etc a worker's programs read: the dynamic loader's cache, the time zone, fonts.
ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/fonts",
       "/etc/matplotlibrc", "/etc/alternatives", "/etc/os-release", "/etc/nsswitch.conf")
DEVICES = ("null", "zero", "full", "random", "urandom")
CPU_INFO = "/sys/devices/system/cpu"  # what torch reads about the processors; all of /sys a worker sees
_STAGE = "/tmp"  # where the new root is built (a tmpfs over it, in the clean parent's mount namespace only)
HELD = "/.held"  # where what the interpreter needs under /tmp waits, to be bound again over each new /tmp
UNDER_TMP: list[str] = []  # those paths (filled by build_root, inherited by every worker)


class ContainerError(OSError):
    """A step of the container could not be taken; its message names the step and the kernel's reason."""


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise ContainerError(error, f"{what}: {os.strerror(error)}")


def unshare(flags: int) -> None:
    _check(libc().unshare(ctypes.c_int(flags)), f"unshare({flags:#x})")


def setns(fd: int, kind: int) -> None:
    _check(libc().setns(ctypes.c_int(fd), ctypes.c_int(kind)), "setns")


def mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    _check(libc().mount(source.encode() if source else None, target.encode(),
                        kind.encode() if kind else None, ctypes.c_ulong(flags),
                        data.encode() if data else None), f"mount {kind or source or ''} on {target}")


def umount(target: str) -> None:
    _check(libc().umount2(target.encode(), ctypes.c_int(MNT_DETACH)), f"umount {target}")


def pivot_root(new: str, old: str) -> None:
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise ContainerError(0, f"pivot_root: unknown on {platform.machine()}")
    _check(libc().syscall(ctypes.c_long(number), new.encode(), old.encode()), "pivot_root")


def read_only(target: str, recursive: bool = True) -> None:
    """Makes a mount (and, recursively, those under it) read-only, without set-user-id programs or devices.
    mount_setattr() where the kernel has it (5.12), else a remount that keeps the flags the kernel locked."""
    attr = struct.pack("=QQQQ", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, 0, 0)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    flags = AT_RECURSIVE if recursive else 0
    if libc().syscall(ctypes.c_long(_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), target.encode(),
                      ctypes.c_uint(flags), buffer, ctypes.c_size_t(len(attr))) == 0:
        return
    locked = os.statvfs(target).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)
    relatime = MS_RELATIME if os.statvfs(target).f_flag & 4096 else 0
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | locked | relatime)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


# -- the clean parent's namespaces ----------------------------------------------------------------------

def outer_namespaces() -> None:
    """In the clean parent's first process: a user, mount and PID namespace (its next child is PID 1), and
    network and IPC namespaces, which the clean parent and every worker's init (a process each worker
    sees, as its PID 1) then hold: no /proc/1/net of a worker lists the machine's sockets. Refused, it says
    why and what to do on this machine (refusal.py)."""
    try:
        unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC)
    except ContainerError as error:
        from autograder.sandbox import refusal

        raise ContainerError(error.errno, refusal.explain(error.errno)) from None


def id_maps(uid: int, gid: int, worker_ids: range | None) -> tuple[str, str]:
    """The user and group id maps of the clean parent's namespace: its root is the grader's own id; as
    root, the worker ids map to themselves (each worker slot keeps its own id on the machine)."""
    users, groups = f"0 {uid} 1\n", f"0 {gid} 1\n"
    if worker_ids is not None:
        users += f"{worker_ids.start} {worker_ids.start} {len(worker_ids)}\n"
        groups += f"{worker_ids.start} {worker_ids.start} {len(worker_ids)}\n"
    return users, groups


def write_maps(pid: int, worker_ids: range | None) -> None:
    """By the grader, for its child `pid` that called outer_namespaces()."""
    users, groups = id_maps(os.geteuid(), os.getegid(), worker_ids if os.geteuid() == 0 else None)
    if os.geteuid() != 0:
        _write(f"/proc/{pid}/setgroups", "deny")  # an ordinary user may map its own group only so
    _write(f"/proc/{pid}/uid_map", users)
    _write(f"/proc/{pid}/gid_map", groups)


def _place(source: str, target: str) -> bool:
    """Binds source (a path under the old root) at target in the new root, read-only; a symbolic link is
    copied as a link. False when the source does not exist."""
    if os.path.islink(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.symlink(os.readlink(source), target)
        return True
    if not os.path.exists(source):
        return False
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    mount(source, target, None, MS_BIND | MS_REC)
    read_only(target)
    return True


def _targets(paths: list[str], old: str) -> list[str]:
    """The paths to bind, with the real place of each symbolic link too, outermost first, none inside
    another (a bind carries its whole tree). `old`: where the machine's root is seen from here."""
    def link(path: str) -> bool:
        return os.path.islink(old + path)

    wanted = set()
    for path in paths:
        path = os.path.normpath(path)
        wanted.add(path)
        if link(path):  # where it leads, as the machine resolves it
            target = os.path.normpath(os.path.join(os.path.dirname(path), os.readlink(old + path)))
            wanted.add(target)
    ordered = sorted(wanted)
    return [p for i, p in enumerate(ordered) if p != os.sep
            and not any(p.startswith(q + os.sep) for q in ordered[:i] if not link(q))]


def build_root(paths: list[str]) -> None:
    """In the clean parent (PID 1 of its own PID namespace, root of its own user namespace): replaces
    the machine's file system with a minimal one. `paths`: what workers may read (the interpreter, its
    packages, the system's libraries). Afterwards this process sees nothing else of the machine."""
    unshare(CLONE_NEWNS)  # a mount namespace of its own: its parent keeps the machine's view
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the machine's mounts
    mount("tmpfs", _STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    os.chdir(_STAGE)
    os.mkdir("new", 0o755)
    os.mkdir("old", 0o700)
    pivot_root(".", "old")  # "/" is now the tmpfs; the machine's root is at /old, whole
    os.chdir("/")
    mount("/new", "/new", None, MS_BIND | MS_REC)
    for path in _targets([p for p in paths if not p.startswith(("/proc", "/sys", "/dev"))], "/old"):
        # what lies under /tmp (a checkout there) waits aside: each /tmp is a tmpfs mounted over it
        _place("/old" + path, "/new" + (HELD + path if _under_tmp(path) else path))
        if _under_tmp(path):
            UNDER_TMP.append(path)
    for path in ETC:
        _place("/old" + path, "/new" + path)
    os.makedirs("/new/etc", exist_ok=True)
    _write("/new/etc/passwd", f"root:x:0:0::/:/usr/sbin/nologin\nstudent:x:{WORKER_UID}:{WORKER_UID}::"
                              f"{WORKDIR}:/usr/sbin/nologin\n")
    _write("/new/etc/group", f"root:x:0:\nstudent:x:{WORKER_UID}:\n")
    _write("/new/etc/hosts", "127.0.0.1 localhost\n")
    _make_dev("/old/dev", "/new/dev")
    os.makedirs("/new/tmp", exist_ok=True)
    # the clean parent's own scratch space (each worker mounts its own over it)
    mount("tmpfs", "/new/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={config.PARENT_TMP_BYTES},mode=1777")
    _bring_back("/new")
    os.makedirs("/new/proc", exist_ok=True)
    mount("proc", "/new/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    with contextlib.suppress(ContainerError):
        _place("/old" + CPU_INFO, "/new" + CPU_INFO)
    umount("/old")
    os.chdir("/new")
    pivot_root(".", ".")  # the tmpfs that held the stage goes under, and away
    umount(".")
    os.chdir("/")
    read_only("/", recursive=False)


def _under_tmp(path: str) -> bool:
    return path == "/tmp" or path.startswith("/tmp/")


def _bring_back(root: str) -> None:
    """Binds again, read-only, what lies under /tmp (held aside at HELD) into the tmpfs just mounted on
    root + /tmp."""
    for path in UNDER_TMP:
        target = root + path
        os.makedirs(target, exist_ok=True)
        mount(root + HELD + path, target, None, MS_BIND | MS_REC)
        read_only(target)


def _make_dev(source: str, target: str) -> None:
    os.makedirs(target, exist_ok=True)
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NOEXEC, f"mode=0755,size={config.DEV_BYTES}")
    for name in DEVICES:
        if os.path.exists(os.path.join(source, name)):
            open(os.path.join(target, name), "a").close()
            mount(os.path.join(source, name), os.path.join(target, name), None, MS_BIND)
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                       ("stderr", "/proc/self/fd/2"), ("shm", "/tmp")):
        os.symlink(link, os.path.join(target, name))
    read_only(target, recursive=False)


# -- a worker's namespaces ---------------------------------------------------------------------------

def worker_namespaces(uid: int, tmp_bytes: int) -> None:
    """In a worker's init (PID 1 of its own PID namespace, still root of the clean parent's user
    namespace): its own mount, network, IPC, UTS and cgroup namespaces, a /proc that shows its own
    processes only, and a fresh tmpfs of tmp_bytes at /tmp with the worker's folder in it (owned by the
    worker's user id `uid`, as the clean parent's namespace names it)."""
    unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={tmp_bytes},nr_inodes={config.TMP_FILES},mode=1777")
    _bring_back("")
    os.mkdir(WORKDIR, 0o700)
    os.chown(WORKDIR, uid, uid)
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    name = b"autograder"
    libc().sethostname(name, ctypes.c_size_t(len(name)))


def enter_own_user() -> bool:
    """In the worker, after it took its user id: a user namespace of its own, in which it is user
    WORKER_UID (never root: a program it runs gains no capability) and where the process limit counts
    its own processes only. False where the kernel refuses it (the worker then goes on without)."""
    uid, gid = os.geteuid(), os.getegid()
    # setuid() made this process undumpable, which gives its /proc files to root: its own maps included
    prctl(PR_SET_DUMPABLE, 1)
    try:
        unshare(CLONE_NEWUSER)
    except ContainerError:
        return False
    return map_own_ids(WORKER_UID, uid, gid)


def map_own_ids(inside: int | None, uid: int, gid: int) -> bool:
    """In a user namespace this process just made: its own user and group ids on the outside, as `inside`
    (None: the same numbers). False when the maps could not be written."""
    try:
        _write("/proc/self/setgroups", "deny")  # an ordinary user may map its own group only so
        _write("/proc/self/uid_map", f"{uid if inside is None else inside} {uid} 1")
        _write("/proc/self/gid_map", f"{gid if inside is None else inside} {gid} 1")
    except OSError:
        return False
    return True


_PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
# root gains nothing by being root, set-user-id changes keep nothing, no ambient capability: all locked
_SECUREBITS = 0b11101111


def drop_capabilities() -> bool:
    """Every capability gone for good: the bounding and ambient sets emptied, the securebits locked so that
    no program run later gains one, then the effective, permitted and inheritable sets cleared. True when
    the process holds none afterwards."""
    lib = libc()
    lib.prctl(ctypes.c_int(_PR_SET_SECUREBITS), ctypes.c_ulong(_SECUREBITS), ctypes.c_ulong(0),
              ctypes.c_ulong(0), ctypes.c_ulong(0))
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        lib.prctl(ctypes.c_int(_PR_CAPBSET_DROP), ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0))
    lib.prctl(ctypes.c_int(_PR_CAP_AMBIENT), ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0),
              ctypes.c_ulong(0), ctypes.c_ulong(0))
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)(0, 0, 0, 0, 0, 0)
    lib.capset(header, data)
    return capabilities() == 0


def capabilities() -> int:
    """The effective, permitted and bounding capabilities this process holds, as one mask (0: none)."""
    mask = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(("CapEff:", "CapPrm:", "CapBnd:", "CapAmb:")):
                mask |= int(line.split()[1], 16)
    return mask
