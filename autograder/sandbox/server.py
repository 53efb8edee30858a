"""The clean parent of every worker: a fresh interpreter the grader starts before it loads any submission,
extra file or reference answer, so that a worker forked from it holds nothing about the class.

It imports torch, the measuring code and the lesson's modules, takes the snapshot that workers put back
after student code ran (measure/snapshot.py), freezes its objects out of garbage collection (a fork then
copies as few pages as it can), and then forks workers on request, one fork each. In a container
(container.py) it is PID 1 of its own PID namespace, in its own user and mount namespaces, and sees only
the minimal root it built; each worker gets a PID namespace of its own, whose init is a small program
started by exec, and then makes its other namespaces itself. A worker waits for the grader's word before
it does anything, so that the grader puts it in its slot's cgroup first. The clean parent reaps a worker
only when the grader asks (the grader watches it end through a pidfd): until then the worker is a zombie,
so its pid and process group stay its own while the grader kills what it left.

Requests come over a Unix socket (SOCK_SEQPACKET), one JSON object each, with the worker's three pipe
ends and its payload (an unnamed file) passed as file descriptors; every request gets one reply, in
order, with pidfds of the worker and its init, and the grader serves its running workers while it waits
for them. This process never reads a payload.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import signal
import socket
import sys
import time

from autograder.sandbox import container
from autograder.sandbox.confine import Limits, baseline_memory, close_except, confine, readable_paths
from autograder.sandbox.kernel import PR_SET_PDEATHSIG, prctl
from autograder.sandbox.seccomp import seccomp_program

# Modules every lesson's notebook imports: loaded once here so that each forked worker has them
# (an assignment adds its lesson's own, Assignment.preload).
PRELOAD = ("numpy", "torch.nn", "torch.nn.functional", "torch.autograd.function", "torch.optim", "graphviz")
MAX_REQUEST = 1 << 16
FDS = 4  # a worker's messages, output and control pipes, and its payload
INIT = "/bin/cat"  # a container's init (see _start_init): in the minimal root, as /bin is


def prime() -> None:
    """torch.autograd.grad with a gradient imports much of torch lazily (symbolic shapes, sympy): done once,
    by the clean parent, for the workers whose submission calls it, or gradcheck, in its own code. The
    measurements need none of it: their vector-Jacobian products, and those of PyTorch's gradcheck whose
    words a failure quotes, go straight to torch's engine (measure/calls)."""
    import torch

    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    torch.autograd.grad(x * x, x, torch.ones(2, dtype=torch.float64), create_graph=True)
    torch.autograd.gradgradcheck(torch.exp, (x,), fast_mode=True)


def _warm_up(preload: list[str], extra_checks: list[str], primed: bool = True) -> None:
    """Imports and first-call work done once here rather than in every worker."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # as in workers: no display
    for name in list(PRELOAD) + preload:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from autograder.measure.graphs import torchviz_dot

    try:
        torchviz_dot()  # as the workers' graphs load it: without setuptools' distutils
    except ImportError:
        pass
    if primed:
        prime()
    if extra_checks:
        from autograder.measure.modern import warm_up

        warm_up(set(extra_checks))


def _become_worker(request: dict, fds: list[int], snapshot, baseline: int, parent: int,
                   holds: int | None) -> None:
    """In the worker: wait until the grader knows it (and it is in its slot's cgroup), make its
    container's namespaces when it has one (`holds`: the pipe that keeps its init alive), read the
    payload, confine itself, then run the submission. Never returns."""
    from autograder.sandbox import worker
    from autograder.sandbox.protocol import send

    messages, output, control, payload = fds
    contained = holds is not None
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python program
        close_except({messages, output, control, payload} | ({holds} if contained else set()))
        if os.read(control, 1) != b"s":
            os._exit(0)
        limits = Limits(**request["limits"])
        if contained:
            try:
                container.worker_namespaces(request["uid"] or 0, limits.tmp_bytes)
            except OSError as error:
                send(messages, {"event": "no-container", "error": str(error)[:500]})
                os._exit(0)
        task = worker.read_payload(payload)
        workdir = container.WORKDIR if contained else request["workdir"]
        confine(request["uid"], workdir, limits, baseline, request["cpu"], contained)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid(), which clears it: die with this parent
        if os.getppid() != (0 if contained else parent):  # 0: the parent is outside its PID namespace
            os._exit(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(null)
        os.close(output)
        sys.stdout = sys.stderr = worker.CappedWriter(1, limits.output_bytes)
        sys.stdin = open(os.devnull)  # noqa: SIM115
        worker.run(messages, control, task, snapshot)
    except BaseException:  # noqa: BLE001, S110 - the worker's end is seen and explained by the grader
        pass
    os._exit(0)


def _start_init() -> tuple[int, int]:
    """In a container: a PID namespace for the next worker, whose init (its PID 1, which the kernel lets
    no process of the namespace kill, and whose end ends them all) is a small program started without
    copying this process: `cat` reading a pipe that only the worker holds, so that it ends once the
    worker and all it started have. Returns the init's pid and the pipe's end for the worker."""
    container.unshare(container.CLONE_NEWPID)
    holds_r, holds = os.pipe()
    try:
        init = os.posix_spawn(INIT, [INIT], {}, setsid=True,
                              file_actions=[(os.POSIX_SPAWN_DUP2, holds_r, 0),
                                            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    except OSError:
        os.close(holds)
        raise
    finally:
        os.close(holds_r)
    return init, holds


def _spawn(request: dict, fds: list[int], snapshot, baseline: int, pidns: int | None) -> tuple[int, int]:
    """Forks a worker; returns its pid here (0 on failure) and, in a container, its init's (else 0). The
    worker waits for the grader's word before it does anything, so that the grader can put it in its
    slot's cgroup first. In a container the worker is PID 2 of its own PID namespace, a child of this
    process (so that it ends and is reaped as any process does, signals included)."""
    parent, init, holds = os.getpid(), 0, None
    try:
        if pidns is not None:
            init, holds = _start_init()
        pid = os.fork()  # in the init's namespace
    except OSError:
        pid = 0
    if pid == 0:
        _become_worker(request, fds, snapshot, baseline, parent, holds)
    if pidns is not None:
        with contextlib.suppress(OSError):
            container.setns(pidns, container.CLONE_NEWPID)  # back: the next worker's namespace is new
    for fd in [*fds, *([holds] if holds is not None else [])]:
        os.close(fd)
    if pid <= 0 and init > 0:
        _reap(init, kill=True)
        init = 0
    return max(pid, 0), init


def _reap(pid: int, kill: bool = False) -> int:
    """The exit status of a worker the grader saw end (or killed). A worker stays a zombie until then, so
    its pid and process group cannot be given to another process while the grader kills what it left."""
    if kill:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    for _ in range(2000):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        time.sleep(0.001)
    os.kill(pid, signal.SIGKILL)
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _forget_command_line() -> None:
    """Blanks this process's command line and initial environment in memory, which every fork inherits
    and /proc/self/cmdline and /proc/self/environ show: the grader's (a fork of it) names the
    instructor's folders and files, and its environment may hold the instructor's tokens."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        arg_start, arg_end, env_start, env_end = (int(x) for x in fields[45:49])
    except (OSError, ValueError, IndexError):
        return
    for start, end in ((arg_start, arg_end), (env_start, env_end)):
        if 0 < start < end:
            ctypes.memset(start, 0, end - start)


def serve(channel: socket.socket, contained: bool) -> None:
    snapshot, baseline, workers, inits = None, 0, set(), set()
    pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC) if contained else None
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, MAX_REQUEST, FDS)
        except OSError:
            return
        if not data:
            return
        request = json.loads(data)
        if request["do"] == "prepare":
            from autograder.measure.snapshot import Snapshot

            _warm_up(request.get("preload", []), request.get("extra_checks", []), request.get("prime", True))
            if snapshot is None:
                # The worker's code and, through it, all the measuring code (autograder/measure/, never the
                # grader's judging code): in the snapshot, and shared by every fork.
                from autograder.sandbox import watch, worker  # noqa: F401

                watch.warm_up()

                readable_paths()
                seccomp_program()  # compiled once here; a worker only loads it
                _forget_command_line()
                snapshot = Snapshot()  # what workers put back after student code ran
                gc.freeze()  # a worker's garbage collector then leaves these pages alone
                baseline = baseline_memory()
            channel.send(b'{"ready": true}')
        elif request["do"] == "spawn" and snapshot is not None and len(fds) == FDS:
            for fd in fds:
                os.set_inheritable(fd, False)  # a container's init, started by exec, must not hold them
            pid, init = _spawn(request, fds, snapshot, baseline, pidns)
            handles = []
            if pid > 0:
                workers.add(pid)
                if init:
                    inits.add(init)
                with contextlib.suppress(OSError):  # the grader learns their pids on the machine from them
                    handles = [os.pidfd_open(p) for p in (pid, init) if p]
            reply = json.dumps({"pid": pid}).encode()
            if handles:
                socket.send_fds(channel, [reply], handles)
            else:
                channel.send(reply)
            for fd in handles:
                os.close(fd)
        elif request["do"] == "reap" and isinstance(request.get("pid"), int) and request["pid"] in workers:
            workers.discard(request["pid"])
            channel.send(json.dumps({"status": _reap(request["pid"])}).encode())
            for init in list(inits):  # the inits of the workers that ended: the grader ended them
                with contextlib.suppress(ChildProcessError):
                    if not os.waitpid(init, os.WNOHANG)[0]:
                        continue
                inits.discard(init)
        else:
            for fd in fds:
                os.close(fd)
            # every request gets its reply, in order
            channel.send(b'{"pid": 0, "status": 0}')


def run(fd: int, grader: int | None) -> None:
    """The clean parent's life, on the socket `fd`: as a child of the grader `grader`, or (None) as PID 1
    of the container's PID namespace."""
    # Ctrl-C is the grader's to handle; this process ends with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if grader is not None and os.getppid() != grader:
        os._exit(0)
    close_except({fd})
    os.set_inheritable(fd, False)
    os.chdir("/")
    if grader is None:  # in the container the grader's home is not there: caches go to its own /tmp
        os.environ.update(HOME="/tmp", MPLCONFIGDIR="/tmp/matplotlib", XDG_CACHE_HOME="/tmp/cache")
    channel = socket.socket(fileno=fd)
    import torch

    torch.set_num_threads(1)  # one thread per worker; also keeps fork() safe
    serve(channel, contained=grader is None)


def start(fd: int, grader: int, sync: int, go: int, contained: bool) -> None:
    """The clean parent's first process, a child of the grader. Without a container it is the clean
    parent. With one, it makes a user, mount and PID namespace, tells the grader (`u` on `sync`), waits
    until the grader has written the namespace's user ids (`m` on `go`), and forks the clean parent, PID
    1 there, which builds the container's root and says `r` (or `x` and why, when a step fails). This
    process then only waits, so that the grader's child ends when the clean parent does."""
    try:
        _start(fd, grader, sync, go, contained)
    except Exception as error:  # noqa: BLE001 - said to the grader, which says it to the instructor
        _refused(sync, error)


def _refused(sync: int, error: Exception) -> None:
    """Tells the grader (`x` on `sync`) why the container could not be made: the kernel's reason as
    container.py words it, or the exception."""
    worded = isinstance(error, OSError) and error.strerror
    reason = error.strerror if worded else f"{type(error).__name__}: {error}"
    with contextlib.suppress(OSError):
        os.write(sync, b"x" + reason.encode(errors="replace"))


def _start(fd: int, grader: int, sync: int, go: int, contained: bool) -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != grader:
        os._exit(0)
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as f:
        f.write("-500")  # the memory a worker takes is its own to lose, not the parent's
    if not contained:
        os.close(go)
        os.write(sync, b"r")
        os.close(sync)
        run(fd, grader)
        return
    paths = readable_paths()  # before the root is replaced: what the interpreter and its packages need
    # libseccomp is found by running ldconfig: before the PID namespace, whose first child must be the
    # clean parent
    seccomp_program()
    container.outer_namespaces()
    os.write(sync, b"u")
    if os.read(go, 1) != b"m":
        return
    os.close(go)
    pid = os.fork()
    if pid == 0:
        try:
            container.build_root(paths)
        except Exception as error:  # noqa: BLE001 - said to the grader, which says it to the instructor
            _refused(sync, error)
            os._exit(0)
        os.write(sync, b"r")
        os.close(sync)
        run(fd, None)
        os._exit(0)
    os.close(fd)
    os.close(sync)
    while True:
        with contextlib.suppress(InterruptedError):
            done, _ = os.waitpid(pid, 0)
            if done == pid:
                return


def main() -> None:
    fd, grader, sync, go, contained = (int(x) for x in sys.argv[1:6])
    del sys.argv[1:]
    try:
        start(fd, grader, sync, go, bool(contained))
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
