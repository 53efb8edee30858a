# Hostile: writes forged "loaded" and "problem" lines into every pipe it holds, over and over, then loops
# forever. Only the grader sets deadlines: the batch must still end, failing this submission.
import json
import os

messages = ({"event": "loaded"}, {"event": "problem-start", "problem": "KillHead"},
            {"event": "cell", "index": 0})
lines = "".join(json.dumps(m) + "\n" for m in messages)
while True:
    for fd in range(3, 20):
        try:
            os.write(fd, lines.encode())
        except OSError:
            pass
