# Hostile: sixty processes in sessions of their own that spin forever, then a cell that sleeps until the
# load timeout. A classmate's notebook that computes for a few seconds must still finish in time.
import os

for _ in range(60):
    try:
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    except OSError:
        break
import time

time.sleep(3600)
