"""What a worker's channel says about the submission reaching into the grader, kept by the grader
(job.py) for the judge (flags.py): the reaches its audit hook reported (watch.py), and messages its loop
never writes (a line that is not JSON, a second answer for a problem already answered, a second
"loaded", an answer without the token of the request it answers), which only code writing on the channel
behind the loop's back produces.

Each request carries a fresh token (Nonce) that its answers must carry: the loop holds it in the main
thread, where no call into the submission runs and which the audit hook keeps it from reaching, so a line
written on the channel from anywhere else answers nothing.

Each is kept with the problems already measured when it came: those were measured before it and are
untouched by it; every problem measured later may be."""

from __future__ import annotations

import secrets

from autograder.sandbox.tasks import Outcome

MAX_KEPT = 50


def _before(outcome: Outcome, current: str | None) -> list[str]:
    return [name for name in outcome.data if name != current]


def reached(outcome: Outcome, message: dict, current: str | None) -> None:
    """A reach the worker's audit hook reported (untrusted data: typed and cut here)."""
    if len(outcome.reaches) >= MAX_KEPT:
        return
    line = message.get("line")
    outcome.reaches.append({
        "what": str(message.get("what"))[:80], "detail": str(message.get("detail"))[:200],
        "file": str(message.get("file"))[:200], "line": line if type(line) is int else 0,
        "refused": message.get("refused") is True, "measured_before": _before(outcome, current),
        "during": current or ""})


def stray(outcome: Outcome, what: str, current: str | None) -> None:
    """A message the worker's loop never writes."""
    if len(outcome.reaches) >= MAX_KEPT:
        return
    outcome.reaches.append({"what": "channel", "detail": what[:200], "file": "", "line": 0, "refused": False,
                            "measured_before": _before(outcome, current), "during": current or ""})


class Nonce:
    """The token of the request being answered."""

    def __init__(self):
        self.value = ""

    def renew(self) -> str:
        self.value = secrets.token_hex(16)
        return self.value


def screened(outcome: Outcome, message: dict | None, line: bytes, current: str | None, loaded: bool,
             answered: set[str], nonce: str = "") -> bool:
    """Keeps what a message says of reaching (True: it is not for the job to handle): a reach, a line
    that is not a message, or a message the loop never writes at this point. Empty lines (the hook
    starts its own with one) are nothing."""
    if message is None:
        stray(outcome, f"a line that is not a message: {line[:80]!r}", current)
        return True
    event, problem = message.get("event"), message.get("problem")
    if event == "reach":
        reached(outcome, message, current)
        return True
    if (event in ("cell", "cell-error", "loaded") and loaded) \
            or (event in ("measured", "part") and type(problem) is str and problem in answered):
        stray(outcome, f"a second {event!r} message", current)
        return True
    if event in ("measured", "part", "measured in full") and message.get("nonce") != nonce:
        stray(outcome, f"a {event!r} message without the token of the request it answers", current)
        return True
    return not message
