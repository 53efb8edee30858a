"""The grader's handle on the clean parent (server.py): start it (a fork of the grader taken before
anything about the class is loaded, or a fresh interpreter), ask it to warm up, ask it for workers and
for their exit statuses. Requests are sent without waiting; replies come back in order (`reply`)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import socket
import subprocess
import sys
import time

from autograder import config
from autograder.sandbox import container, refusal
from autograder.sandbox.processes import UID_BASE, UID_COUNT


def default_workers() -> int:
    """config.WORKERS_PER_CORE workers per core this process may run on: a submission that waits (a
    sleep left in a cell, a file to read) then leaves its core to another instead of idling it."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return config.WORKERS_PER_CORE * max(1, cores)


def import_torch() -> None:
    """torch imported by a command before it forks the clean parent (which then shares it), without the
    garbage collector's passes over the objects the import makes (a million, all kept for the process's
    life), which are then frozen: no later collection in the grader or the clean parent walks them."""
    gc.disable()
    try:
        import torch  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()


class ServerGone(RuntimeError):
    pass


class ContainerUnavailable(RuntimeError):
    """The workers' container cannot be made on this machine; the message says why and what to do."""


def unavailable_message(reason: str) -> str:
    """The instructor's paragraph: `reason` (refusal.py's lines) says why and the fixes for this machine,
    narrowest first; --no-isolation comes last, with what it leaves open."""
    return (f"The grader runs each submission in a container of its own (user, PID, mount and network "
            f"namespaces), and this machine refused to make one, so no student code was run: {reason} "
            f"Last resort: add --no-isolation to grade anyway without a container; student code then runs "
            f"under your own account with resource limits, seccomp and, where the kernel has it, Landlock "
            f"only, and can read every file you can read that Landlock does not hide and see your "
            f"processes.")


class Server:
    """The clean parent (server.py). By default a fresh interpreter, whatever the caller has loaded. A
    caller that starts it before anything about the class is loaded (the command line does, first
    thing) may fork it instead (`fork=True`): it then shares the torch this process already imported
    instead of importing it again.

    It runs in a container (container.py) where the machine allows one: `isolation` is then "container".
    Where it does not, it raises ContainerUnavailable, unless `fallback` allows the clean parent to run
    under the grader's own account with the older confinement (confine.py): `isolation` is then
    "none: " and the reason."""

    def __init__(self, fork: bool = False, fallback: bool = False, container: bool = True):
        """container=False does not even try (the tests of the older confinement)."""
        self.isolation = "container"
        try:
            if not container:
                raise ContainerUnavailable("not asked for")
            self._start(fork, contained=True)
        except ContainerUnavailable as error:
            if container and not fallback:
                raise ContainerUnavailable(unavailable_message(str(error))) from None
            self._start(fork, contained=False)
            cause = str(error).split("\n")[0]  # refusal.py's first line: the cause, without its fix
            self.isolation = f"none: the container could not be made: {cause}"

    def _start(self, fork: bool, contained: bool) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sync_r, sync_w = os.pipe()
        go_r, go_w = os.pipe()
        self.channel, self.asked, self.ready, grader = ours, False, False, os.getpid()
        if fork:
            gc.freeze()  # what it imported, kept for the process's life: out of the collector's way
            self.process: subprocess.Popen | None = None
            self.pid = os.fork()
            if self.pid == 0:
                try:
                    from autograder.sandbox import server

                    os.environ.pop("AUTOGRADER_EXTRA", None)  # check()'s problems: never here
                    sys.argv[1:] = []
                    for end in (ours.fileno(), sync_r, go_w):
                        os.close(end)
                    server.start(theirs.fileno(), grader, sync_w, go_r, contained)
                finally:
                    os._exit(0)
        else:
            # check()'s problems: never here
            env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_EXTRA"}
            ends = [theirs.fileno(), sync_w, go_r]
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-m", "autograder.sandbox", *map(str, ends[:1]), str(grader),
                 *map(str, ends[1:]), str(int(contained))],
                pass_fds=ends, stdin=subprocess.DEVNULL, close_fds=True, cwd="/", env=env)
            self.pid = self.process.pid
        for end in (theirs.fileno(), sync_w, go_r):
            os.close(end)
        theirs.detach()
        try:
            self._handshake(sync_r, go_w)
        except ContainerUnavailable:
            self.close()
            raise
        finally:
            os.close(sync_r)
            with contextlib.suppress(OSError):
                os.close(go_w)

    def _handshake(self, sync: int, go: int) -> None:
        """Waits until the clean parent is running: in a container, writes its user ids first."""
        word = first = os.read(sync, 1)
        if word == b"u":
            try:
                container.write_maps(self.pid, range(UID_BASE, UID_BASE + UID_COUNT))
            except OSError as error:
                said = f"its user ids could not be set ({error.strerror})"
                raise ContainerUnavailable(refusal.later(said)) from None
            os.write(go, b"m")
            word = os.read(sync, 1)
        if word == b"x":  # before "u": unshare() refused, as container.py explains; after: a later step
            said = os.read(sync, 4096).decode(errors="replace") or "no reason given"
            raise ContainerUnavailable(said if first == b"x" else refusal.later(said))
        if word != b"r":
            raise ContainerUnavailable("the process that makes it ended before it was made")

    def _send(self, request: dict, fds: list[int] = ()) -> None:
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], list(fds))
        except OSError as error:
            raise ServerGone(str(error)) from None

    def reply(self) -> dict:
        """The next reply, in the order of the requests (blocks until it comes); the pidfds that come with
        it are under "pidfds"."""
        try:
            reply, fds, _, _ = socket.recv_fds(self.channel, 1 << 16, 2)
        except OSError as error:
            raise ServerGone(str(error)) from None
        if not reply:
            raise ServerGone("the worker parent ended")
        message = json.loads(reply)
        message["pidfds"] = fds  # the worker's, then (in a container) its init's
        return message

    def warm_up(self, preload: list[str], extra_checks: list[str], prime: bool = True) -> None:
        """Asks the clean parent to import and warm up what workers need, without waiting: it does so
        while the grader reads the class. Once only."""
        if not self.asked:
            with contextlib.suppress(ServerGone):  # then `prepare` finds it gone, and a new one is started
                self._send({"do": "prepare", "preload": list(preload), "extra_checks": sorted(extra_checks),
                            "prime": prime})
                self.asked = True

    def prepare(self, preload: list[str], extra_checks: list[str], prime: bool = True) -> None:
        """Warmed up, waiting for it when it is not yet."""
        self.warm_up(preload, extra_checks, prime)
        if not self.ready:
            self.reply()
            self.ready = True

    def request(self, request: dict, fds: list[int]) -> None:
        """Asks for a worker; its pid (in the clean parent's terms) and pidfds of it and of its init come
        with a later `reply()` ({"pid": 0} and none when none could be forked)."""
        self._send(dict(request, do="spawn"), fds)

    def reap(self, pid: int) -> None:
        """Asks for the exit status of a worker that ended; it comes with a later `reply()`."""
        self._send({"do": "reap", "pid": pid})

    def close(self) -> None:
        """Ends the clean parent (it ends when its socket closes) and reaps it; idempotent."""
        self.channel.close()
        for _ in range(500):
            try:
                if os.waitpid(self.pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                break
            time.sleep(0.01)
        else:
            with contextlib.suppress(OSError):
                os.kill(self.pid, 9)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
