# Hostile: asks the grading account's servers for their secret, as a submission would ask your
# ssh-agent to sign for it or your tmux server to type a command: a Unix socket by its path (in a folder
# only that account may enter) and by an abstract name, TCP on 127.0.0.1 and ::1, and through any socket
# it inherited; it also tries the socket families a worker never needs. The right Functions follow.
import os
import socket
import stat

PORT = int("__PORT__")
targets = {"unix path": (socket.AF_UNIX, "__SOCKET__"),
           "unix abstract": (socket.AF_UNIX, "\0__ABSTRACT__"),
           "tcp 127.0.0.1": (socket.AF_INET, ("127.0.0.1", PORT)),
           "tcp ::1": (socket.AF_INET6, ("::1", PORT))}
for label, (family, address) in targets.items():
    client = None
    try:
        client = socket.socket(family, socket.SOCK_STREAM)
        client.settimeout(5)
        client.connect(address)
        print("CONNECTED", label, client.recv(100))
    except OSError as error:
        print("refused", label, type(error).__name__)
    finally:
        if client is not None:
            client.close()
inherited = []
for fd in range(3, 256):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            inherited.append(fd)
    except OSError:
        pass
print("inherited sockets:", inherited)
for fd in inherited:
    try:
        client = socket.socket(fileno=os.dup(fd))
        client.connect("__SOCKET__")
        print("CONNECTED through", fd, client.recv(100))
    except OSError as error:
        print("refused through", fd, type(error).__name__)
for name in ("AF_NETLINK", "AF_PACKET", "AF_UNIX"):
    try:
        kind = socket.SOCK_RAW if name != "AF_UNIX" else socket.SOCK_DGRAM
        socket.socket(getattr(socket, name), kind).close()
        print("MADE", name)
    except OSError as error:
        print("refused", name, type(error).__name__)
try:
    socket.socketpair()[0].close()
    print("MADE socketpair")
except OSError as error:
    print("refused socketpair", type(error).__name__)
