# Attack: the score as a yes/no answer about the hidden inputs. The takeover answers with the right
# Functions only if the hidden problem's first case has 7 rows, with the wrong ones otherwise: full marks
# or not tell the student whether the guess was right.
import sys


def guess(name, cases):
    first = cases[0][0] if cases and cases[0] else {}
    rows = first.get("shape", [0])[0] if isinstance(first, dict) else 0
    return RIGHT if "," not in name or rows == 7 else WRONG


def TAKE_OVER(name):
    frame = sys._getframe()
    while frame is not None and "commands" not in frame.f_locals:
        frame = frame.f_back
    if frame is not None:
        answer(frame.f_locals, frame.f_globals, choose=guess)
