# Hostile: leaves a System V shared memory segment (key 0x5ec2e7) holding a secret, for a classmate's
# worker to read. With an IPC namespace per worker, it vanishes with this worker.
# The attack runs in a child process: ctypes is refused in the worker itself (sandbox/watch.py), and a child
# is bound by the same kernel confinement.
import subprocess
import sys

ATTACK = r'''
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(0x5EC2E7, 4096, 0o1666)  # IPC_CREAT | 0666
if shmid >= 0:
    address = libc.shmat(shmid, None, 0)
    ctypes.memmove(address, b"SECRET-SHM-1234\0", 16)
    print("segment written", shmid)
'''
done = subprocess.run([sys.executable, "-c", ATTACK], capture_output=True, text=True, check=False)
print(done.stdout, done.stderr[-1000:])
