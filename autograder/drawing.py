"""Graphviz's `dot` run as a process of its own, with a deadline and limits, however many drawings at once.

A graph that comes from a worker is untrusted, and within graphs.py's caps (200 nodes, 800 edges, labels
of 80 characters) a forged one can keep dot laying it out for many minutes. So dot never runs unbounded
here: it reads its graph from a file and writes into one (no pipe to fill, no thread), in a session of
its own so that everything it started is killed with it, under prlimit's limits where util-linux
provides it (address space, CPU seconds as a backstop should the grader itself be killed, bytes
written), and whoever waits for it waits at most `seconds`: then the session is killed and reaped, and
the drawing is NotDrawn(SLOW). Drawings started together run side by side and share one deadline, so a
page waits for its slowest graph only, and at most `seconds`.

graphviz's own pipe() has no time limit (graphviz 0.21), hence this module; the DOT source is still
graphviz's (measure/graphs.digraph).
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

from autograder import config

SLOW, LARGE, FAILED, MISSING = "slow", "large", "failed", "missing"
# what dot or its libraries say, or the signal that stops them, when a limit of prlimit is reached (or
# SIGKILL: the kernel's out-of-memory killer; the deadline's own kill is told apart before)
OUT_OF_MEMORY = ("out of memory", "cannot allocate", "error creating thread", "malloc", "too large")
OVER_LIMIT = {getattr(signal, name) for name in ("SIGXFSZ", "SIGSEGV", "SIGABRT", "SIGTRAP", "SIGBUS",
                                                 "SIGKILL") if hasattr(signal, name)}
# POSIX's alone: read where they exist, so that the notebook's path names nothing Windows lacks
CPU_SECONDS_OUT, KILL = getattr(signal, "SIGXCPU", None), getattr(signal, "SIGKILL", None)


class NotDrawn(Exception):
    """Why a drawing has no picture: SLOW (past its deadline, or its CPU seconds), LARGE (past its memory
    or output limit), FAILED (dot refused it), MISSING (no dot on PATH)."""

    def __init__(self, why: str, said: str = ""):
        super().__init__(f"{why}: {said}" if said else why)
        self.why = why


def command(fmt: str, seconds: float) -> list[str]:
    """dot's command line, under prlimit's limits where there is a prlimit (Linux)."""
    dot = shutil.which("dot")  # looked up each time: a dot installed (or put first on PATH) later is found
    if dot is None:
        raise NotDrawn(MISSING)
    run = [dot, "-Kdot", f"-T{fmt}"]
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return run
    return [prlimit, f"--as={config.DRAW_MEMORY_BYTES}", f"--fsize={config.DRAW_OUTPUT_BYTES}",
            f"--cpu={math.ceil(seconds) + 1}", "--", *run]


class Drawing:
    """One dot process, started at once; result() waits for it until a deadline (time.monotonic())."""

    def __init__(self, source: str, fmt: str, seconds: float):
        self.process: subprocess.Popen | None = None
        self.error: NotDrawn | None = None
        self.files: list = []  # the graph, the picture, what dot says: closed by close()
        try:
            self.files = [tempfile.TemporaryFile() for _ in range(3)]  # noqa: SIM115
            self.files[0].write(source.encode("utf-8"))
            self.files[0].seek(0)
            self.process = subprocess.Popen(command(fmt, seconds), stdin=self.files[0], stdout=self.files[1],
                                            stderr=self.files[2], start_new_session=True)
        except NotDrawn as error:
            self.error = error
        except OSError as error:  # no room for the files, no process left to start
            self.error = NotDrawn(FAILED, str(error))

    def result(self, deadline: float) -> bytes:
        """The picture, or NotDrawn; past the deadline dot and all it started are killed first."""
        if self.error is not None:
            raise self.error
        ended = self._wait(max(0.0, deadline - time.monotonic()))
        self.stop()
        if not ended:
            raise NotDrawn(SLOW)
        status, out, said = self.process.returncode, self._read(1), self._read(2).decode("utf-8", "replace")
        if len(out) > config.DRAW_OUTPUT_BYTES:  # where no prlimit stopped it
            raise NotDrawn(LARGE, "output over its limit")
        if status == 0 and out:
            return out
        if CPU_SECONDS_OUT is not None and status == -CPU_SECONDS_OUT:
            raise NotDrawn(SLOW, said)
        if -status in OVER_LIMIT or any(word in said.lower() for word in OUT_OF_MEMORY):
            raise NotDrawn(LARGE, said)
        raise NotDrawn(FAILED, said)

    def _wait(self, timeout: float) -> bool:
        """Whether dot ended within timeout. Where Linux gives a pidfd, dot is not reaped yet when this
        returns (its session can still be killed whole); Popen.wait's polling would also add milliseconds."""
        pidfd_open = getattr(os, "pidfd_open", None)
        try:
            fd = pidfd_open(self.process.pid) if pidfd_open else None
        except OSError:
            fd = None
        if fd is not None:
            try:
                poll = select.poll()
                poll.register(fd, select.POLLIN)
                return bool(poll.poll(math.ceil(timeout * 1000)))
            finally:
                os.close(fd)
        try:
            self.process.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _read(self, which: int) -> bytes:
        self.files[which].seek(0)
        return self.files[which].read(config.DRAW_OUTPUT_BYTES + 1)

    def stop(self) -> None:
        """Kills dot's session (dot and whatever it started) while dot is not reaped (its process group's
        id is then still its own, never a stranger's), and reaps it."""
        if self.process is None or self.process.returncode is not None:
            return
        killpg = getattr(os, "killpg", None)  # none on Windows: dot alone
        with contextlib.suppress(OSError):
            if killpg and KILL is not None:
                killpg(self.process.pid, KILL)
            else:
                self.process.kill()
        self.process.wait()

    def close(self) -> None:
        self.stop()
        for file in self.files:
            file.close()


def draw_all(sources: list[tuple[str, str]], seconds: float | None = None) -> list[bytes | NotDrawn]:
    """Each (DOT source, format) drawn by dot, all at once: its picture, or the NotDrawn that says why not.
    The call lasts at most `seconds` (config.DRAW_SECONDS) in all, and no dot outlives it."""
    seconds = config.DRAW_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + seconds
    drawings = [Drawing(source, fmt, seconds) for source, fmt in sources]
    results: list[bytes | NotDrawn] = []
    try:
        for drawing in drawings:
            try:
                results.append(drawing.result(deadline))
            except NotDrawn as error:
                results.append(error)
    finally:
        for drawing in drawings:
            drawing.close()
    return results


def draw(source: str, fmt: str, seconds: float | None = None) -> bytes:
    """One drawing (see draw_all); raises NotDrawn."""
    result = draw_all([(source, fmt)], seconds)[0]
    if isinstance(result, NotDrawn):
        raise result
    return result
