"""A Unix socket server of the grading account that answers every connection with a secret: one at a
pathname (in a folder only that account may enter) and one at an abstract name. Runs until killed.

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
    for address in (path, "\0" + abstract):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(16)
        servers.append(server)
    os.chmod(path, 0o600)
    threads = [threading.Thread(target=serve, args=(s, secret), daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    print("listening", flush=True)
    threads[0].join()


if __name__ == "__main__":
    main()
