"""A worker's whole life, in the process forked for one submission from the clean parent (server.py).

It knows only what its payload holds: the submission's cells, the seed, and for each problem what to
look up, how to call it and the inputs of its cases. It runs the cells, says "loaded", then does what
the grader (alone in knowing the reference) asks, a problem at a time: measure it, or a failure in full.

Everything here is the submission's to find, since it shares the process (docs/instructors.md, "What a
takeover can do"). Two things keep the loop that talks to the grader out of its way: the cells, and each
measurement, run in a thread of their own, so that no frame above a call into the submission is the
loop's; and an audit hook (watch.py), installed before the cells, tells the grader at once of any reach
for frames, objects or memory, and refuses it.
"""

from __future__ import annotations

import builtins
import gc
import json
import linecache
import os
import signal
import sys
import threading
import time
import traceback
import types
from _thread import allocate_lock, start_new_thread
from typing import Any

from autograder.measure.probe import measure, measure_in_full
from autograder.measure.snapshot import Snapshot, activate
from autograder.measure.spec import Spec
from autograder.sandbox.confine import PR_SET_PDEATHSIG, prctl
from autograder.sandbox.protocol import Commands, send
from autograder.sandbox.watch import install as watch

_fork, _exit, _waitpid, _getpid, _read = os.fork, os._exit, os.waitpid, os.getpid, os.read  # captured early


class CappedWriter:
    """sys.stdout for student code: keeps the first bytes, drops the rest, never fails, so a flood of
    output neither fills the disk nor aborts the cell that printed it."""

    def __init__(self, fd: int, cap: int):
        self.fd, self.left = fd, cap

    def write(self, text: str) -> int:
        if self.left > 0:
            data = str(text).encode("utf-8", "replace")[: self.left]
            self.left -= len(data)
            try:
                os.write(self.fd, data)
            except OSError:
                self.left = 0
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def read_payload(fd: int) -> dict:
    """The submission's cells and visible problems, from the unnamed file the grader wrote them to; the
    descriptor is closed once read."""
    with os.fdopen(fd, "rb") as f:
        return json.loads(f.read())


def write_modules(modules: dict[str, str]) -> tuple[list[str], list[str]]:
    """The submission's helper modules, written into the worker's own folder (its working directory,
    put first on sys.path as Jupyter puts the notebook's folder), so that its cells import them. Names
    are relative paths the loader made; anything else is skipped. Returns what could not be written, and
    the paths of what was."""
    failed, written = [], []
    for name, source in modules.items():
        parts = str(name).split("/")
        if not str(name).endswith(".py") or any(p in ("", ".", "..") or "\\" in p or "\0" in p
                                                for p in parts):
            failed.append(str(name))
            continue
        try:
            if len(parts) > 1:
                os.makedirs(os.path.join(*parts[:-1]), exist_ok=True)
            with open(os.path.join(*parts), "x", encoding="utf-8", errors="replace") as f:
                f.write(str(source))
            path = os.path.abspath(os.path.join(*parts))
            written += [path, os.path.realpath(path)]
        except OSError:
            failed.append(str(name))
    if modules:
        sys.path.insert(0, os.getcwd())
    return failed, written


class NoRoom(Exception):
    """No thread could be started (the process limit, full of the submission's threads)."""


def apart(function, *args) -> Any:
    """function(*args) in a thread of its own, waited for. The frames of whatever it calls end where that
    thread starts: none of them is the loop's, which lives in the main thread with the grader's channel
    and the problems. A process (forked by the submission) other than this worker's ends there. Raises
    NoRoom where no thread can be started: nothing of the submission's runs beside the loop."""
    me, outcome, done = _getpid(), [], allocate_lock()
    done.acquire()

    def body() -> None:
        try:
            outcome.append((function(*args), None))
        except BaseException as error:  # noqa: BLE001 - handed to the loop, which raises it
            outcome.append((None, error))
        if _getpid() != me:
            _exit(0)
        done.release()

    try:
        start_new_thread(body, ())
    except RuntimeError:
        raise NoRoom from None
    done.acquire()
    result, error = outcome[0]
    if error is not None:
        raise error
    return result


def _reap_children() -> None:
    """Collects the worker's exited children (the grader killed what the cells left running), so that
    they no longer count against the process limit."""
    for _ in range(200):
        try:
            pid, _ = _waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # hidden from it (Landlock, confine.py): as if threads ran, to be measured without them
        return 2


def _without_threads() -> bool:
    """Threads the cells started would run on while the Functions are measured (and could patch the
    probe between two calls); a forked child has none of them. The worker waits for the child and then
    ends as the child ended, so the grader reads the child's fate as the worker's. False when the child
    cannot be made (the process limit is reached): then nothing is measured beside those threads."""
    try:
        pid = _fork()
    except OSError:
        return False
    if pid == 0:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        return True
    _, status = _waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(_getpid(), os.WTERMSIG(status))
    _exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def clear_interpreter_hooks() -> None:
    """Interpreter-wide hooks the snapshot does not cover: trace and profile functions (which see every
    frame and could rewrite what the probe returns), garbage-collector callbacks, async generator hooks."""
    sys.settrace(None)
    sys.setprofile(None)
    threading.settrace(None)
    threading.setprofile(None)
    gc.callbacks.clear()
    sys.set_asyncgen_hooks(None, None)
    frame = sys._getframe()
    while frame is not None:  # a trace function may also be set on the frames that are running
        frame.f_trace, frame = None, frame.f_back


def _settle_signals() -> None:
    for sig in (signal.SIGCHLD, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN if sig == signal.SIGPIPE else signal.SIG_DFL)
    signal.alarm(0)
    for timer in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF):
        signal.setitimer(timer, 0)


def run_cells(messages: int, cells: list[str], namespace: dict) -> None:
    """Runs the cells in order (in a thread apart from the loop), telling the grader which one runs and
    what each raised."""
    me, exec_, compile_, format_exception = _getpid(), exec, compile, traceback.format_exception
    for index, source in enumerate(cells):
        send(messages, {"event": "cell", "index": index})
        error = None
        filename = f"<cell {index + 1}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for tracebacks
        try:
            # dont_inherit: the cell's code, not this module's `from __future__ import annotations` (a
            # custom op's annotations must be types, as in Jupyter, for torch.library to read them)
            exec_(compile_(source, filename, "exec", dont_inherit=True), namespace)  # this is the job
        except BaseException as caught:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
            error = caught
        if _getpid() != me:  # a process the cell forked came back here: only the worker speaks
            _exit(0)
        if error is not None:
            own = error.__traceback__.tb_next if error.__traceback__ is not None else None  # not this frame
            text = "".join(format_exception(type(error), error, own or error.__traceback__))
            if len(text) > 4000:  # its start names where, its end what: both kept
                text = text[:1000] + "\n[...]\n" + text[-3000:]
            send(messages, {"event": "cell-error", "index": index, "type": type(error).__name__,
                            "error": text})
            del error


def run(messages: int, control: int, payload: dict, snapshot: Snapshot) -> None:
    me = _getpid()
    restore, activate_guard = snapshot.restore, activate  # captured before the cells run
    cells: list[str] = payload["cells"]
    seed: int = payload["seed"]
    problems = {p["name"]: (Spec.from_dict(p), p["cases"]) for p in payload["problems"]}
    sys.dont_write_bytecode = True  # no file of code written while the submission runs (watch.py)
    unwritten, written = write_modules(payload.get("modules") or {})
    del payload
    # The cells' namespace is the __main__ module, as in Jupyter: code that looks a global up through
    # sys.modules["__main__"] (torch.compile does) finds it.
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    namespace: dict[str, Any] = main.__dict__
    if unwritten:
        send(messages, {"event": "cell-error", "index": -1, "type": "OSError",
                        "error": "The grader could not write these files beside your notebook: "
                                 + ", ".join(unwritten)})
    watch(messages, tuple(written), snapshot.read_back())
    try:
        apart(run_cells, messages, cells, namespace)
    except NoRoom:
        _exit(1)
    for _ in range(100):  # the cells' thread, ended, may be a moment in leaving /proc/self/task
        if _threads() == 1:
            break
        time.sleep(0.001)
    del cells
    restore()
    clear_interpreter_hooks()
    activate_guard(snapshot)
    send(messages, {"event": "loaded"})
    commands = Commands(control)
    first = commands.next()  # the grader clears away whatever the cells left running, then asks
    _settle_signals()
    _reap_children()
    if _threads() > 1:
        if not _without_threads():
            send(messages, {"event": "threads"})
            _exit(0)
        me = _getpid()
    measured: dict[str, dict] = {}
    command = first
    while command is not None and command.get("do") in ("measure", "measure in full"):
        restore()
        clear_interpreter_hooks()
        name, nonce = command.get("problem"), command.get("nonce")  # the token the answers carry
        definition = command.get("definition")
        if isinstance(definition, dict) and definition.get("name") == name and name not in problems:
            problems[name] = (Spec.from_dict(definition), definition["cases"])  # a hidden problem, asked now
        if name in problems:
            spec, cases = problems[name]
            try:
                data, event = _measured(command, name, (spec, cases), namespace, seed, messages, measured)
            except NoRoom:  # the submission's threads took every process: said as threads left running
                send(messages, {"event": "threads"})
                _exit(0)
            if _getpid() != me:  # the Function forked, and its copy came back here
                _exit(0)
            restore()
            send(messages, {"event": event, "problem": name, "data": data, "nonce": nonce})
        command = commands.next()
    _exit(0)


def _measured(command: dict, name: str, problem: tuple[Spec, list], namespace: dict, seed: int,
              messages: int, measured: dict) -> tuple[dict, str]:
    """What the command asks for, measured in a thread apart (apart): the data and the event to send."""
    spec, cases = problem
    if command["do"] == "measure":
        report = _reporter(messages, name, command.get("nonce"))
        measured[name] = data = apart(measure, spec, namespace, cases, seed, report)
        return data, "measured"
    data = apart(measure_in_full, spec, namespace, cases, seed, measured.get(name, {}), command.get("plan"))
    return data, "measured in full"


def _reporter(messages: int, name: str, nonce):
    """What measure() calls after each part: the measurement so far, sent from this process only (a copy
    the Function forked says nothing), with the request's token. send() needs nothing put back."""
    me = _getpid()

    def report(part: dict) -> None:
        if _getpid() == me:
            send(messages, {"event": "part", "problem": name, "data": part, "nonce": nonce})

    return report
