"""The messages between the grader and a worker: one JSON object a line, nothing executed or unpickled.

Worker -> grader (its messages socket): {"event": "cell", "index"}, {"event": "cell-error", ...},
{"event": "loaded"}, {"event": "part", "problem", "data", "nonce"} (the measurement so far, after each
part), {"event": "measured", "problem", "data", "nonce"}, {"event": "measured in full", "problem", "data",
"nonce"}, {"event": "threads"} (the worker could not leave the cells' threads behind), {"event": "reach",
...} (watch.py: the submission reached into the worker).
Grader -> worker (its control pipe): {"do": "measure", "problem", "nonce"},
{"do": "measure in full", "problem", "plan", "nonce"}, {"do": "stop"}: an answer carries its request's
token (evidence.Nonce).

The grader drives: it asks for one problem at a time and sets every deadline itself, so that nothing a
worker writes can move one. What a worker says is data about its own submission, never trusted further.
"""

from __future__ import annotations

import json
import os
from json.encoder import c_make_encoder, encode_basestring_ascii

MAX_LINE = 8 * 1024 * 1024  # longest message line kept; longer ones are dropped


def _not_data(value):
    raise TypeError(f"not plain data: {type(value).__name__}")


# Captured before any student code runs, and written in C: a message is encoded and written by nothing a
# submission can patch (json.dumps reads the json module's globals at every call), so a worker may send
# without first putting the grader's modules back. Anything but plain data is refused, never converted.
_write, _read = os.write, os.read
# CPython's _json
_encode = c_make_encoder(None, _not_data, encode_basestring_ascii, None, ": ", ", ", False, False, True)


def encoder():
    """The C encoder every message goes through (watch.py keeps its own reference to it)."""
    return _encode


def send(fd: int, message: dict) -> None:
    data = ("".join(_encode(message, 0)) + "\n").encode()
    while data:
        data = data[_write(fd, data):]


class Lines:
    """Splits what arrives on a pipe into lines, dropping any line longer than MAX_LINE."""

    def __init__(self):
        self.buffer, self.skipping = bytearray(), False

    def feed(self, chunk: bytes) -> list[bytes]:
        if b"\n" not in chunk:
            self.buffer += chunk
            lines = []
        else:
            *lines, rest = (bytes(self.buffer) + chunk).split(b"\n")
            self.buffer = bytearray(rest)
            if self.skipping and lines:
                self.skipping = False
                lines = lines[1:]
            lines = [line for line in lines if len(line) <= MAX_LINE]
        if len(self.buffer) > MAX_LINE:  # drop a line too long to be ours, up to its end
            self.buffer, self.skipping = bytearray(), True
        return lines


def parse(line: bytes) -> dict | None:
    """A message, or None for anything malformed (RecursionError from deep nesting included)."""
    try:
        message = json.loads(line)
    except Exception:  # noqa: BLE001
        return None
    return message if isinstance(message, dict) else None


class Commands:
    """The worker's side of its control pipe: blocking reads, one command at a time."""

    def __init__(self, fd: int):
        self.fd, self.lines, self.pending = fd, Lines(), []

    def next(self) -> dict | None:
        while not self.pending:
            chunk = _read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.pending += self.lines.feed(chunk)
        return parse(self.pending.pop(0))
