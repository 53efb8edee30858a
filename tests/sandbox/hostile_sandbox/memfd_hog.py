# Hostile: takes memory through memfd_create (file-backed memory that an address-space limit does not count)
# until something stops it. The grader must survive, and the submission fail or be refused.
import os

taken = 0
try:
    while True:
        fd = os.memfd_create("hog")
        os.ftruncate(fd, 0)
        for _ in range(16):
            os.write(fd, b"\1" * (1 << 20))
        taken += 16
except OSError as error:
    print("memfd refused after", taken, "MiB:", error)
