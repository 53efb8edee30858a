# Hostile: reads what only the grading account may read (a mode-600 secret in a mode-700 folder, the
# machine's keys and shadow passwords, home folders) and prints it. The right Functions follow.
import os

for path in ("__SECRET_FILE__", "/etc/shadow", "/etc/ssl/private", "/root", "/home", "__HOME__"):
    try:
        if os.path.isdir(path):
            print("LISTED", path, os.listdir(path))
        else:
            with open(path, errors="replace") as f:
                print("READ", path, f.read(200))
    except OSError as error:
        print("denied", path, type(error).__name__)
