"""Where student code runs: workers forked from a clean parent, confined by the kernel, driven by the grader.

    server.py    the clean parent: a fresh interpreter with torch and the measuring code, nothing else
    worker.py    a worker's life: run the cells, then measure what the grader asks for
    confine.py   the kernel's limits a worker puts on itself (rlimits, user id, namespaces, Landlock, seccomp)
    cgroups.py   a memory, CPU-share and process cgroup per worker, where one can be written
    processes.py finding and killing what a worker left, worker user ids, leftovers of killed graders
    protocol.py  the JSON lines between grader and worker
    job.py       one worker seen from the grader: drive it a problem at a time, set every deadline
    pool.py      the grader's side: start the clean parent and the workers, collect outcomes

What this cannot stop: code in a worker shares the process that measures it, so a determined submission
can still forge its own measurements (write made-up numbers into its pipe). It can forge nothing else:
it holds no classmate's work, no hidden test and no reference answer, and every verdict is computed in
the grader.
"""

from autograder.sandbox.confine import Limits, landlock_abi
from autograder.sandbox.job import Measure, Outcome, Task
from autograder.sandbox.pool import Pool, Server, default_workers, run_all

__all__ = ["Limits", "Measure", "Outcome", "Pool", "Server", "Task", "default_workers", "landlock_abi", "run_all"]
