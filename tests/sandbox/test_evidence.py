"""Does the grader keep, as evidence, what a worker's channel carries that its loop never writes
(sandbox/evidence.py), and nothing of an honest worker's messages?"""

from autograder.sandbox import evidence
from autograder.sandbox.tasks import Outcome


def screen(outcome: Outcome, message, nonce: str = "n1", answered=(), loaded: bool = True,
           current: str = "Exp") -> bool:
    return evidence.screened(outcome, message, b"line", current, loaded, set(answered), nonce)


def test_an_honest_workers_messages_are_handled_not_kept():
    outcome = Outcome()
    for message in ({"event": "cell", "index": 0}, {"event": "loaded"}):
        assert not screen(outcome, message, loaded=False)
    for message in ({"event": "part", "problem": "Exp", "data": {}, "nonce": "n1"},
                    {"event": "measured", "problem": "Exp", "data": {}, "nonce": "n1"}):
        assert not screen(outcome, message)
    assert screen(outcome, {}) and outcome.reaches == []  # an empty line (the hook starts its own with one)


def test_what_no_loop_writes_is_kept_with_what_was_measured_before():
    outcome = Outcome(data={"KillHead": {}, "Exp": {}})
    cases = [None, {"event": "loaded"}, {"event": "cell", "index": 3},
             {"event": "measured", "problem": "Exp", "data": {}, "nonce": "guessed"},
             {"event": "part", "problem": "Exp", "data": {}}]
    for message in cases:
        assert screen(outcome, message)
    assert screen(outcome, {"event": "measured", "problem": "KillHead", "nonce": "n1"}, answered=["KillHead"])
    assert len(outcome.reaches) == len(cases) + 1
    assert all(r["what"] == "channel" and r["measured_before"] == ["KillHead"] for r in outcome.reaches)


def test_a_reach_is_typed_and_cut():
    outcome = Outcome()
    assert screen(outcome, {"event": "reach", "what": "sys._getframe", "detail": "x" * 900, "file": ["?"],
                            "line": "12", "refused": "yes"})
    (reach,) = outcome.reaches
    assert (reach["what"], len(reach["detail"]), reach["file"], reach["line"], reach["refused"]) == \
        ("sys._getframe", 200, "['?']", 0, False)


def test_a_flood_keeps_a_bounded_record():
    outcome = Outcome()
    for _ in range(10_000):
        screen(outcome, None)
    assert len(outcome.reaches) == evidence.MAX_KEPT
