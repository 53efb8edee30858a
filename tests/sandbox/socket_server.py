"""Servers of the grading account that answer every connection with a secret, as an ssh-agent, a tmux
server or a database would answer a client: a Unix socket at a pathname (in a folder only that account
may enter), one at an abstract name, and TCP on 127.0.0.1 at a port the kernel picks. Prints
`listening PORT` once all three listen, then runs until killed.

    python tests/sandbox/socket_server.py PATH ABSTRACT-NAME SECRET
"""

import os
import socket
import sys
import threading


def serve(server: socket.socket, secret: bytes) -> None:
    while True:
        client, _ = server.accept()
        client.sendall(secret)
        client.close()


def main() -> None:
    path, abstract, secret = sys.argv[1], sys.argv[2], sys.argv[3].encode()
    servers = []
    for family, address in ((socket.AF_UNIX, path), (socket.AF_UNIX, "\0" + abstract),
                            (socket.AF_INET, ("127.0.0.1", 0))):
        server = socket.socket(family, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(16)
        servers.append(server)
    os.chmod(path, 0o600)
    threads = [threading.Thread(target=serve, args=(s, secret), daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    print("listening", servers[-1].getsockname()[1], flush=True)
    threads[0].join()


if __name__ == "__main__":
    main()
