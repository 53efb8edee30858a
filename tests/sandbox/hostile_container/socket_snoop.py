# Hostile: connects to every Unix socket it can name (the instructor's own, in a folder only the
# instructor may enter; an abstract name; every pathname the machine lists in /proc/net/unix) and prints
# what answers. The right Functions follow.
import socket

names = ["__SOCKET__", "\0__ABSTRACT__"]
try:
    with open("/proc/net/unix") as table:
        names += [line.split()[-1] for line in table.readlines()[1:] if len(line.split()) > 7]
except OSError as error:
    print("no socket table:", type(error).__name__)
for name in names:
    client = None
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(5)
        client.connect(name)
        print("CONNECTED", repr(name), client.recv(100))
    except OSError as error:
        print("refused", repr(name)[:80], type(error).__name__)
    finally:
        if client is not None:
            client.close()
