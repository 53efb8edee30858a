"""Runs a command as a child subreaper and writes, as JSON, the processes of its that outlived it:

    python tests/sandbox/survivors.py REPORT.json PROGRAM ARG...

Whatever the command leaves running (a daemon of a submission, a worker, a clean parent) is orphaned to
this process, whoever started it and whatever namespace it lives in, so the report names exactly what
this one command left behind, and nothing that another test runs at the same time. Survivors are
waited for a while (a PID namespace ending takes its processes down as its init ends), then listed
with their command lines and killed. Exits with the command's status.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE = 30.0  # seconds a process that is already ending may take; only a real survivor waits it out


def children() -> list[int]:
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] not in (b"Z", b"X"):
                found.append(int(name))
    return found


def reap() -> None:
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def main() -> int:
    report, command = sys.argv[1], sys.argv[2:]
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    status = subprocess.run(command, check=False).returncode
    deadline = time.monotonic() + GRACE
    while True:
        reap()
        left = children()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    survivors = []
    for _ in range(100):  # what a survivor started comes to this process when the survivor is killed
        for pid in left:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    line = f.read().replace(b"\0", b" ").decode(errors="replace")
                survivors.append(f"{pid}: {line}")
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
        reap()
        left = children()
        if not left:
            break
    with open(report, "w") as f:
        json.dump(survivors, f)
    return status


if __name__ == "__main__":
    sys.exit(main())
