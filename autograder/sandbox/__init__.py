"""Where student code runs: workers forked from a clean parent, confined by the kernel, driven by the grader.

    server.py    the clean parent: a fresh interpreter with torch and the measuring code, nothing else
    worker.py    a worker's life: run the cells, then measure what the grader asks for
    watch.py     the worker's audit hook: a reach into the grader told to it at once, and refused
    container.py the container: namespaces, a minimal read-only root, a tmpfs per worker, no capabilities
    refusal.py   why a machine refused the container, and the least-privilege fix for that cause
    apparmor.py  the AppArmor profile that lets the grader's Python make user namespaces (apparmor-profile)
    limits.py    what a submission may take (Limits): plain data, read on any system
    confine.py   the limits a worker puts on itself (rlimits, user id; outside a container Landlock too)
    seccomp.py   the system calls a worker may not make
    kernel.py    the C library's prctl and system calls
    cgroups.py   a memory, CPU-share and process cgroup per worker, where one can be written
    processes.py finding and killing what a worker left, worker user ids, leftovers of killed graders
    protocol.py  the JSON lines between grader and worker
    tasks.py     what the grader hands the sandbox (Task, Measure) and gets back (Outcome)
    parent.py    the grader's handle on the clean parent: start it, ask it for workers and their statuses
    job.py       one worker seen from the grader: drive it a problem at a time, set every deadline
    evidence.py  what a worker's channel says of reaching: the hook's reports, messages no loop writes
    payload.py   what a worker is told (its payload, a problem's definition) and its channels
    slots.py     where workers run: a user id and a cgroup each, serving one worker after another
    pool.py      the grader's side: a few workers at a time, their messages, ends and deadlines

What this cannot stop: code in a worker shares the process that measures it, so its measurements are the
submission's to write. Reaching for the worker's frames, objects, memory or channel is seen (watch.py,
and the source read in the grader) and flags the submission (flags.py); values are judged against the
reference and the rules against the source, in the grader. It holds no classmate's work, no reference
answer, no hidden problem before its visible ones are measured (nothing it says after that reaches the
student), and every verdict is computed in the grader.
"""

# Imported when first named, as autograder/__init__.py does: `Limits` (the grader's settings, the keys of
# its results) then loads nothing of Linux's (confine.py needs `resource`, which Windows has not).
__all__ = ["ContainerUnavailable", "Limits", "Measure", "Outcome", "Pool", "Server", "Task",
           "default_workers", "landlock_abi", "run_all"]


def __getattr__(name: str):
    if name == "Limits":
        from autograder.sandbox import limits as module
    elif name == "landlock_abi":
        from autograder.sandbox import confine as module
    elif name in ("ContainerUnavailable", "Server", "default_workers"):
        from autograder.sandbox import parent as module
    elif name in ("Pool", "run_all"):
        from autograder.sandbox import pool as module
    elif name in ("Measure", "Outcome", "Task"):
        from autograder.sandbox import tasks as module
    else:
        raise AttributeError(f"module 'autograder.sandbox' has no attribute {name!r}")
    return getattr(module, name)
