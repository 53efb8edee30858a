# Attack: no frame, no object of the loop: right measurements prepared beforehand (here by the test, with
# the grader's own code, as a student could on their machine with the course's seed) written straight
# into the worker's descriptors, socket or pipe, when each wrong forward is first called.
import json
import os
import stat

FORGED = {}  # problem -> the measurement of its right Function (the test fills it in)
sent = set()


def TAKE_OVER(name):
    if name in sent or name not in FORGED:
        return
    sent.add(name)
    line = ("\n" + json.dumps({"event": "measured", "problem": name, "data": FORGED[name]}) + "\n").encode()
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode) or stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, line)
        except OSError:
            pass
