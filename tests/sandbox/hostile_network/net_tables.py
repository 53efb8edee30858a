# Hostile: reads the machine's network as /proc and /sys show it, from every process it can see (its
# init's /proc/1/net, its own, every /proc/<pid>/net it can list) and prints every Unix socket's path
# and every TCP port listening on 127.0.0.1 it finds, and the interfaces of /sys/class/net. The right
# Functions follow.
import os

tables = ["/proc/net", "/proc/self/net", "/proc/1/net"]
try:
    tables += [f"/proc/{pid}/net" for pid in os.listdir("/proc") if pid.isdigit()]
except OSError as error:
    print("no process list:", type(error).__name__)
seen = set()
for folder in tables:
    for name in ("unix", "tcp", "tcp6", "udp"):
        try:
            with open(f"{folder}/{name}") as table:
                rows = [line.split() for line in table.readlines()[1:]]
        except OSError as error:
            print("denied", f"{folder}/{name}", type(error).__name__)
            continue
        # a Unix socket's path is its last field; a TCP socket's local address its second
        found = [r[-1] for r in rows if len(r) > 7] if name == "unix" else [r[1] for r in rows if len(r) > 1]
        print("TABLE", f"{folder}/{name}", len(rows), "rows")
        for entry in found:
            if (name, entry) not in seen:
                seen.add((name, entry))
                print("ENTRY", name, entry)
try:
    print("INTERFACES", sorted(os.listdir("/sys/class/net")))
except OSError as error:
    print("no interfaces:", type(error).__name__)
