"""The clean parent of every worker: a fresh interpreter the grader starts before it loads any submission,
extra file or reference answer, so that a worker forked from it holds nothing about the class.

It imports torch, the measuring code and the lesson's modules, takes the snapshot that workers put back
after student code ran (measure/snapshot.py), freezes its objects out of garbage collection (a fork then
copies as few pages as it can), and then forks workers on request, one fork each. It puts each worker
in its slot's cgroup before the worker may start, and reaps a worker only when the grader asks (the
grader watches it end through a pidfd): until then the worker is a zombie, so its pid and process group
stay its own while the grader kills what it left. What a worker orphans goes to the grader, a child
subreaper, which kills it.

Requests come over a Unix socket (SOCK_SEQPACKET), one JSON object each, with the worker's three pipe
ends passed as file descriptors; every request gets one reply, in order, and the grader serves its
running workers while it waits for them. This process never reads a payload: a submission's cells go
from the grader straight to its worker, through a file in the worker's own folder.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import socket
import sys
import time

from autograder.sandbox.confine import (
    PR_SET_PDEATHSIG,
    Limits,
    baseline_memory,
    close_except,
    confine,
    prctl,
    readable_paths,
    seccomp_program,
)

# Modules every lesson's notebook imports: loaded once here so that each forked worker has them
# (an assignment adds its lesson's own, Assignment.preload).
PRELOAD = ("numpy", "torch.nn", "torch.nn.functional", "torch.autograd.function", "torch.optim", "graphviz",
           "torchviz")
PAYLOAD = "payload.json"
MAX_REQUEST = 1 << 16


def prime() -> None:
    """torch's first double backward imports much of torch lazily (symbolic shapes, sympy): done once,
    by a grader before it forks the clean parent (both then share it), or by the clean parent."""
    import torch

    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    torch.autograd.grad(x * x, x, torch.ones(2, dtype=torch.float64), create_graph=True)
    torch.autograd.gradgradcheck(torch.exp, (x,), fast_mode=True)


def _warm_up(preload: list[str], extra_checks: list[str]) -> None:
    """Imports and first-call work done once here rather than in every worker."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # as in workers: no display
    for name in list(PRELOAD) + preload:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    prime()
    if extra_checks:
        from autograder.measure.modern import warm_up

        warm_up(set(extra_checks))


def _become_worker(request: dict, fds: list[int], snapshot, baseline: int, parent: int) -> None:
    """In the forked worker: wait until the grader knows it (and it is in its cgroup), read the payload,
    confine itself, then run the submission. Never returns."""
    from autograder.sandbox import worker

    messages, output, control = fds
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python program
        close_except({messages, output, control})
        if os.read(control, 1) != b"s":
            os._exit(0)
        payload = worker.read_payload(os.path.join(request["workdir"], PAYLOAD))
        limits = Limits(**request["limits"])
        confine(request["uid"], request["workdir"], limits, baseline, request["cpu"])
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid(), which clears it: die with this parent
        if os.getppid() != parent:
            os._exit(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(output, 1)
        os.dup2(output, 2)
        os.close(null)
        os.close(output)
        sys.stdout = sys.stderr = worker.CappedWriter(1, limits.output_bytes)
        sys.stdin = open(os.devnull)  # noqa: SIM115
        worker.run(messages, control, payload, snapshot)
    except BaseException:  # noqa: BLE001, S110 - the worker's end is seen and explained by the grader
        pass
    os._exit(0)


def _join(pid: int, procs: list[str]) -> bool:
    """Moves the worker into its slot's cgroup (a file per hierarchy) before it may start; False if it
    could not."""
    try:
        for path in procs:
            with open(path, "w") as f:
                f.write(str(pid))
    except OSError:
        return False
    return bool(procs)


def _spawn(request: dict, fds: list[int], snapshot, baseline: int) -> tuple[int, bool]:
    """Forks a worker; returns its pid (0 on failure) and whether it is in its slot's cgroup. The worker
    waits for the grader's word before it does anything, so it is in the cgroup before it runs."""
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        pid = 0
    if pid == 0:
        _become_worker(request, fds, snapshot, baseline, parent)
    for fd in fds:
        os.close(fd)
    return pid, pid > 0 and _join(pid, request.get("cgroup") or [])


def _reap(pid: int) -> int:
    """The exit status of a worker the grader saw end (or killed). A worker stays a zombie until then, so
    its pid and process group cannot be given to another process while the grader kills what it left."""
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


def serve(channel: socket.socket) -> None:
    snapshot, baseline, workers = None, 0, set()
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(channel, MAX_REQUEST, 3)
        except OSError:
            return
        if not data:
            return
        request = json.loads(data)
        if request["do"] == "prepare":
            from autograder.measure.snapshot import Snapshot

            _warm_up(request.get("preload", []), request.get("extra_checks", []))
            if snapshot is None:
                # The worker's code and, through it, all the measuring code (autograder/measure/, never the
                # grader's judging code): in the snapshot, and shared by every fork.
                from autograder.sandbox import worker  # noqa: F401

                readable_paths()
                seccomp_program()  # compiled once here; a worker only loads it
                snapshot = Snapshot()  # what workers put back after student code ran
                gc.freeze()  # a worker's garbage collector then leaves these pages alone
                baseline = baseline_memory()
            channel.send(b'{"ready": true}')
        elif request["do"] == "spawn" and snapshot is not None and len(fds) == 3:
            pid, joined = _spawn(request, fds, snapshot, baseline)
            if pid > 0:
                workers.add(pid)
            channel.send(json.dumps({"pid": pid, "cgroup": joined}).encode())
        elif request["do"] == "reap" and isinstance(request.get("pid"), int) and request["pid"] in workers:
            workers.discard(request["pid"])
            channel.send(json.dumps({"status": _reap(request["pid"])}).encode())
        else:
            for fd in fds:
                os.close(fd)
            # every request gets its reply, in order
            channel.send(b'{"pid": 0, "cgroup": false, "status": 0}')


def run(fd: int, grader: int) -> None:
    """The clean parent's life, on the socket `fd`, as a child of the grader `grader`."""
    # Ctrl-C is the grader's to handle; this process ends with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != grader:
        os._exit(0)
    close_except({fd})
    os.chdir("/")
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-500")  # the memory a worker takes is its own to lose, not the parent's
    except OSError:
        pass
    channel = socket.socket(fileno=fd)
    import torch

    torch.set_num_threads(1)  # one thread per worker; also keeps fork() safe
    serve(channel)


def main() -> None:
    fd, grader = int(sys.argv[1]), int(sys.argv[2])
    del sys.argv[1:]
    run(fd, grader)


if __name__ == "__main__":
    main()
