# Hostile: looks for the segment shm_writer.py leaves (for up to 8 s, whichever is graded first) and
# prints what it holds.
# The attack runs in a child process: ctypes is refused in the worker itself (sandbox/watch.py), and a child
# is bound by the same kernel confinement.
import subprocess
import sys

ATTACK = r'''
import ctypes
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for _ in range(80):
    shmid = libc.shmget(0x5EC2E7, 0, 0)
    if shmid >= 0:
        address = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
        print("READ", ctypes.string_at(address, 15))
        break
    time.sleep(0.1)
else:
    print("no segment")
'''
done = subprocess.run([sys.executable, "-c", ATTACK], capture_output=True, text=True, check=False)
print(done.stdout, done.stderr[-1000:])
