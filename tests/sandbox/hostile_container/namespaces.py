# Hostile: tries to make new namespaces (user, network, mount, PID, IPC, UTS, cgroup) by every call:
# clone() through the raw system call, clone3(), unshare(); to join another's with setns(); to mount,
# chroot and trace. Prints MADE for anything that worked. The right Functions follow.
# The attack runs in a child process: ctypes is refused in the worker itself (sandbox/watch.py), and a child
# is bound by the same kernel confinement.
import subprocess
import sys

ATTACK = r'''
import ctypes
import errno
import os
import platform
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CLONE = {"x86_64": 56, "aarch64": 220}.get(platform.machine(), 56)
FLAGS = {"user": 0x10000000, "network": 0x40000000, "mount": 0x00020000, "pid": 0x20000000,
         "ipc": 0x08000000, "uts": 0x04000000, "cgroup": 0x02000000}


def said(what: str, result: int) -> None:
    if result >= 0:
        print("MADE", what)
    else:
        print("refused", what, errno.errorcode.get(ctypes.get_errno(), "?"))


for name, flag in FLAGS.items():
    pid = libc.syscall(CLONE, ctypes.c_ulong(flag | 17), 0, 0, 0, 0)  # 17: SIGCHLD
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    said(f"clone {name}", pid)
    args = ctypes.create_string_buffer(struct.pack("=8Q", flag, 0, 0, 0, 17, 0, 0, 0))
    pid = libc.syscall(435, args, ctypes.c_size_t(64))  # clone3
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    said(f"clone3 {name}", pid)
    said(f"unshare {name}", libc.unshare(flag))
for name in ("user", "net", "mnt", "pid", "ipc", "uts"):
    try:
        fd = os.open(f"/proc/1/ns/{name}", os.O_RDONLY)
        said(f"setns {name}", libc.setns(fd, 0))
        os.close(fd)
    except OSError as error:
        print("refused", f"setns {name}", type(error).__name__)
said("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
said("chroot", libc.chroot(b"/tmp"))
said("ptrace", libc.ptrace(16, 1, 0, 0))  # PTRACE_ATTACH to its parent in the namespace
with open("/proc/self/status") as status:
    print(*[line.strip() for line in status if line.startswith(("Cap", "NoNewPrivs", "Seccomp:"))])
'''
done = subprocess.run([sys.executable, "-c", ATTACK], capture_output=True, text=True, check=False)
print(done.stdout, done.stderr[-1000:])
