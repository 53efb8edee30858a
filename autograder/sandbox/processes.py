"""Processes seen from the grader: finding, killing and reaping what a worker started, worker user ids,
and the litter of graders that were killed. Nothing here trusts what a worker says."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import glob
import os
import select
import shutil
import signal
import stat
import tempfile
import time

from autograder.sandbox.confine import PR_GET_CHILD_SUBREAPER, PR_SET_CHILD_SUBREAPER, libc, prctl

UID_BASE, UID_COUNT = 64000, 1000  # user ids for workers when the grader is root, locked one per worker
UID_LOCKS = ("/run/autograder-uids", os.path.join(tempfile.gettempdir(), "autograder-uids-root"))
WORKDIR_PREFIX = "autograder-"  # a worker's private folder: autograder-<grader pid>-<random>


def describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        hint = {signal.SIGKILL: " (out of memory, or killed from outside?)",
                signal.SIGSEGV: " (a crash: a segmentation fault, e.g. from ctypes, a C extension or endless "
                                "recursion)",
                signal.SIGABRT: " (an abort, e.g. os.abort() or a failed check in C code)",
                signal.SIGXCPU: " (it used up its CPU time)",
                signal.SIGBUS: " (a crash: a bus error)"}.get(sig, "")
        return f"was killed by {name}{hint}"
    if os.WIFEXITED(status):
        return f"exited with status {os.WEXITSTATUS(status)} (the code called os._exit() or exit from C)"
    return f"ended (status {status})"


def has_ended(pid: int, pidfd: int | None = None) -> bool:
    """Whether a process has ended (it may be a zombie, not yet reaped): its pidfd is readable then."""
    if pidfd is not None:
        poll = select.poll()
        poll.register(pidfd, select.POLLIN)
        return bool(poll.poll(0))
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, session id, state) for every process now running."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        table[int(name)] = (int(fields[1]), int(fields[3]), fields[0].decode())
    return table


def pid_of(pidfd: int) -> int:
    """The pid, in this process's terms, of the process a pidfd refers to (0 if unknown): a worker's
    clean parent, in a PID namespace of its own, knows it by another number."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}") as info:
            for line in info:
                if line.startswith("Pid:"):
                    return max(0, int(line.split()[1]))
    except (OSError, ValueError, IndexError):
        pass
    return 0


def kill_tree(root: int, keep_root: bool = True) -> int:
    """Kills every descendant of root (and root itself unless keep_root), again and again until none is
    left alive: processes forking while they are being killed (a fork bomb) are caught in a later round.
    Returns how many it found alive at first. A root of 0 or less (no worker yet) kills nothing: the tree of
    pid 0 is every process there is."""
    if root <= 0:
        return 0
    found = 0
    for _ in range(100):
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        alive, stack = [], list(children.get(root, []))
        while stack:
            pid = stack.pop()
            stack += children.get(pid, [])
            if table[pid][2] not in ("Z", "X"):
                alive.append(pid)
        if not keep_root and root in table and table[root][2] not in ("Z", "X"):
            alive.append(root)
        if not alive:
            return found
        found = found or len(alive)
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
    return found


def kill_group(pgid: int) -> None:
    """SIGKILL to the group; none for 0 or less (no worker yet): killpg(0) is this process's own group."""
    if pgid <= 0:
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _owned(pid: str, uids: frozenset[int]) -> bool:
    """Whether a live (not zombie) process runs under one of these user ids, real, effective or saved."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"State:") and line.split()[1:2] in ([b"Z"], [b"X"]):
                    return False
                if line.startswith(b"Uid:"):
                    return not uids.isdisjoint(int(x) for x in line.split()[1:4])
    except (OSError, ValueError):
        pass
    return False


def kill_users(uids) -> None:
    """Kills every process of these worker user ids, including ones that left their session, again and
    again until none is left. Read from /proc and sent by this process (root) through a pidfd, so no
    process is forked (a fork of the grader costs milliseconds), none of theirs can stop the sender
    (SIGSTOP to every process of its id), and a pid reused since it was read is not signalled."""
    wanted = frozenset(uids)
    for _ in range(100):
        found = sum(_kill_owned(int(name), wanted) for name in os.listdir("/proc")
                    if name.isdigit() and _owned(name, wanted))
        if not found:
            return
        time.sleep(0.005)


def _kill_owned(pid: int, wanted: frozenset[int]) -> bool:
    """SIGKILL to pid if it is still a process of these ids; whether it was sent."""
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, AttributeError) as error:
        if getattr(error, "errno", errno.ENOSYS) != errno.ENOSYS:
            return False  # gone
        with contextlib.suppress(OSError):  # no pidfds (Linux before 5.3): the pid is read again just before
            if _owned(str(pid), wanted):
                os.kill(pid, signal.SIGKILL)
                return True
        return False
    try:
        if _owned(str(pid), wanted):  # still the process read before: the pidfd holds it
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            return True
    except OSError:
        pass
    finally:
        os.close(pidfd)
    return False


def kill_user(uid: int) -> None:
    """Kills every process of a worker's user id, including ones that left its session."""
    kill_users([uid])


class Reaper:
    """Makes this process a child subreaper while grading: whatever a worker orphans (a daemon that
    double-forked into a session of its own) becomes a child of the grader, to be killed and reaped."""

    def __init__(self):
        self.pid, self.sid = os.getpid(), os.getsid(0)
        self.before = {pid for pid, (ppid, _, _) in _processes().items() if ppid == self.pid}
        flag = ctypes.c_int(0)
        self.was = libc().prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value
        self.active = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0

    def sweep(self, workers: set[int]) -> int:
        """Kills and reaps the grader's children that are neither workers nor its own helpers; returns
        how many there were."""
        strays = [pid for pid, (ppid, sid, _) in _processes().items()
                  if ppid == self.pid and pid not in workers and pid not in self.before and sid != self.sid]
        for pid in strays:
            kill_tree(pid, keep_root=False)
        for pid in strays:
            for _ in range(100):
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        break
                except ChildProcessError:
                    break
                time.sleep(0.01)
        return len(strays)

    def close(self) -> None:
        if self.active and not self.was:
            prctl(PR_SET_CHILD_SUBREAPER, 0)


class UserIds:
    """Worker user ids for a root grader, each held under an exclusive lock for as long as the grader
    runs, so that two graders on one machine never share (or kill) each other's worker ids."""

    def __init__(self, count: int):
        self.fds: dict[int, int] = {}
        folder = self._folder()
        for uid in range(UID_BASE, UID_BASE + UID_COUNT):
            if len(self.fds) == count:
                break
            flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
            fd = os.open(os.path.join(folder, str(uid)), flags, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.fds[uid] = fd
        if not self.fds:
            raise RuntimeError("no free worker user id: too many graders running at once")
        kill_users(self.fds)  # anything left under these ids by a grader that was killed
        self.free = sorted(self.fds)

    @staticmethod
    def _folder() -> str:
        for folder in UID_LOCKS:
            try:
                os.makedirs(folder, mode=0o700, exist_ok=True)
                info = os.lstat(folder)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
                return folder  # only root can create or replace lock files in it
        raise RuntimeError(f"cannot make a private lock folder for worker user ids (tried "
                           f"{', '.join(UID_LOCKS)})")

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()


def remove_folder(folder: str) -> None:
    """Removes a worker's folder, even where its code took away the permissions."""
    def allow_and_retry(function, path, _):
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), 0o700)
            os.chmod(path, 0o700)
            function(path)

    shutil.rmtree(folder, onerror=allow_and_retry)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_ipc() -> int:
    """System V shared memory, semaphores and message queues owned by worker user ids: with an IPC
    namespace per worker there are none, but a worker that could not make one (an older kernel) may
    have left some, for the next submission to read."""
    removed = 0
    lib = libc()
    # /proc/sysvipc/<kind>: the id is column 1; the owner's uid is column 7 (4 for semaphores).
    for kind, uid_at, remove in (("shm", 7, lambda i: lib.shmctl(i, 0, None)),
                                 ("sem", 4, lambda i: lib.semctl(i, 0, 0)),
                                 ("msg", 7, lambda i: lib.msgctl(i, 0, None))):  # command 0: IPC_RMID
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                rows = [line.split() for line in table.readlines()[1:]]
        except OSError:
            continue
        for row in rows:
            if len(row) > uid_at and UID_BASE <= int(row[uid_at]) < UID_BASE + UID_COUNT:
                removed += remove(int(row[1])) == 0
    return removed


def sweep_leftovers() -> int:
    """Folders that workers of a grader killed with SIGKILL left in the temporary folder (their grader's
    pid is in the name and no longer runs), and System V IPC objects of worker user ids; returns how
    many were removed."""
    removed = _sweep_ipc() if os.geteuid() == 0 else 0
    for folder in glob.glob(os.path.join(tempfile.gettempdir(), WORKDIR_PREFIX + "*-*")):
        owner = os.path.basename(folder)[len(WORKDIR_PREFIX):].split("-", 1)[0]
        try:
            info = os.lstat(folder)
        except OSError:
            continue
        if owner.isdigit() and not alive(int(owner)) and stat.S_ISDIR(info.st_mode) \
                and info.st_uid in (os.geteuid(),) + tuple(range(UID_BASE, UID_BASE + UID_COUNT)):
            remove_folder(folder)
            removed += 1
    return removed
