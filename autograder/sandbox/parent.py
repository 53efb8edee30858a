"""The grader's handle on the clean parent (server.py): start it (a fork of the grader taken before
anything about the class is loaded, or a fresh interpreter), ask it to warm up, ask it for workers and
for their exit statuses. Requests are sent without waiting; replies come back in order (`reply`)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time

from autograder import config


def default_workers() -> int:
    """config.WORKERS_PER_CORE workers per core this process may run on: a submission that waits (a
    sleep left in a cell, a file to read) then leaves its core to another instead of idling it."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return config.WORKERS_PER_CORE * max(1, cores)


class ServerGone(RuntimeError):
    pass


class Server:
    """The clean parent (server.py). By default a fresh interpreter, whatever the caller has loaded. A
    caller that starts it before anything about the class is loaded (the command line does, first
    thing) may fork it instead (`fork=True`): it then shares the torch this process already imported
    instead of importing it again."""

    def __init__(self, fork: bool = False):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.channel, self.asked, self.ready, grader = ours, False, False, os.getpid()
        if fork:
            from autograder.sandbox.server import prime

            prime()  # the grader needs it too: shared by the fork
            self.process: subprocess.Popen | None = None
            self.pid = os.fork()
            if self.pid == 0:
                try:
                    from autograder.sandbox import server

                    os.environ.pop("AUTOGRADER_EXTRA", None)  # check()'s problems: never here
                    sys.argv[1:] = []
                    server.run(theirs.fileno(), grader)
                finally:
                    os._exit(0)
        else:
            # check()'s problems: never here
            env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_EXTRA"}
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-m", "autograder.sandbox", str(theirs.fileno()), str(grader)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, close_fds=True, cwd="/", env=env)
            self.pid = self.process.pid
        theirs.close()

    def _send(self, request: dict, fds: list[int] = ()) -> None:
        try:
            socket.send_fds(self.channel, [json.dumps(request).encode()], list(fds))
        except OSError as error:
            raise ServerGone(str(error)) from None

    def reply(self) -> dict:
        """The next reply, in the order of the requests (blocks until it comes)."""
        try:
            reply = self.channel.recv(1 << 16)
        except OSError as error:
            raise ServerGone(str(error)) from None
        if not reply:
            raise ServerGone("the worker parent ended")
        return json.loads(reply)

    def warm_up(self, preload: list[str], extra_checks: list[str]) -> None:
        """Asks the clean parent to import and warm up what workers need, without waiting: it does so
        while the grader reads the class. Once only."""
        if not self.asked:
            with contextlib.suppress(ServerGone):  # then `prepare` finds it gone, and a new one is started
                self._send({"do": "prepare", "preload": list(preload), "extra_checks": sorted(extra_checks)})
                self.asked = True

    def prepare(self, preload: list[str], extra_checks: list[str]) -> None:
        """Warmed up, waiting for it when it is not yet."""
        self.warm_up(preload, extra_checks)
        if not self.ready:
            self.reply()
            self.ready = True

    def request(self, request: dict, fds: list[int]) -> None:
        """Asks for a worker; its pid comes with a later `reply()` ({"pid": 0} when none could be forked)."""
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
