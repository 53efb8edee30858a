# Hostile: no Function of its own. It looks everywhere a worker might find a classmate's work or the hidden
# tests (the frames above it, every object in memory, the grader's command line and the files it names,
# the folders on its import path, among them the one the grader was started in, the problems the
# autograder knows) and copies any KillHead/MyReLU/Exp/LinearFunction it finds.
import gc
import os
import sys

found = []
try:  # frames and memory are refused in a worker (sandbox/watch.py): the snoop goes on elsewhere
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, (list, tuple)):
                found += [v for v in value if isinstance(v, str)]
        frame = frame.f_back
except PermissionError:
    print("frames refused")
try:
    objects = gc.get_objects()
except PermissionError:
    objects = []
for obj in objects:
    if isinstance(obj, dict):
        found += [v for v in obj.values() if isinstance(v, str) and len(v) < 100000]
    elif isinstance(obj, (list, tuple)):
        found += [v for v in obj if isinstance(v, str) and len(v) < 100000]
try:
    processes = [int(p) for p in os.listdir("/proc") if p.isdigit()]
except OSError:
    processes = []
for pid in {os.getppid(), *processes}:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            for arg in f.read().split(b"\0"):
                if arg.endswith(b".py"):
                    try:
                        with open(arg, errors="replace") as g:
                            found.append(g.read())
                    except OSError:
                        pass
    except OSError:
        pass
for entry in sys.path:  # not the installed packages: the folders of the grader's own, such as its start
    if not os.path.isabs(entry) or "-packages" in entry or entry.startswith(sys.base_prefix):
        continue
    for folder, _, names in os.walk(entry):
        for name in names:
            if name.endswith((".py", ".ipynb")):
                try:
                    with open(os.path.join(folder, name), errors="replace") as g:
                        text = g.read(200000)
                except OSError:
                    continue
                if "class KillHead" in text:
                    found.append(text)
try:
    from autograder.course.assignments.registry import load

    found += [p.summary for a in load().assignments.values() for p in a.problems]
except Exception:  # noqa: BLE001, S110
    pass
print("SNOOP", " | ".join(sorted({s[:120] for s in found if "SECRET-" in s})))
for text in found:
    if "class KillHead" in text and "SNOOP" not in text:
        try:
            exec(text)  # noqa: S102 - what a cheat would do
            print("STOLEN")
            break
        except Exception:  # noqa: BLE001, S110
            pass
