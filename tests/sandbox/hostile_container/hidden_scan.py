# Hostile: while its cells run, looks for the instructor's hidden problem in the frames above it, every
# object in memory and every file it can read; later, its LinearFunction watches for the hidden problem's
# inputs and prints and writes what it sees. Nothing of it may reach the student.
import gc
import os
import sys

# The hidden problem's name and the extra file's secret, spelled so that the scan does not find its own source
WANTED = tuple(bytes.fromhex(h).decode() for h in ("48696464656e206c696e656172", "5345435245542d4558545241"))


def look(value) -> bool:
    """value, or (shallowly) a container's strings, names a hidden problem."""
    if isinstance(value, str):
        return any(w in value for w in WANTED)
    if value is WANTED:
        return False
    if isinstance(value, dict):
        return any(look(k) or look(v) for k, v in value.items() if isinstance(k, str) or isinstance(v, str))
    if isinstance(value, (list, tuple, set)):
        return any(look(v) for v in value if isinstance(v, str))
    return False


try:  # refused in a worker (sandbox/watch.py), which goes on with the disk
    frame = sys._getframe()
    while frame is not None:
        if any(look(v) for v in [*frame.f_locals.values(), *frame.f_globals.values()]):
            print("FOUND-HIDDEN in a frame")
        frame = frame.f_back
except PermissionError:
    print("frames refused")
try:
    objects = gc.get_objects()
except PermissionError:
    objects = []
    print("memory refused")
for obj in objects:
    try:
        if look(obj):
            print("FOUND-HIDDEN in memory", type(obj).__name__)
            break
    except Exception:  # noqa: BLE001, S110 - an object that cannot be read hides nothing
        pass
installed = ("/usr", "/lib", "/bin", "/sbin", "/proc", "/sys", "/dev", sys.prefix, sys.base_prefix)
for folder, _, names in os.walk("/"):
    if folder.startswith(installed):
        continue
    for name in names:
        try:
            with open(os.path.join(folder, name), errors="replace") as f:
                if look(f.read(1 << 20)):
                    print("FOUND-HIDDEN in", os.path.join(folder, name))
        except OSError:
            pass
print("scan done")


def watch(cls):
    """Wraps cls.forward (appended after the Functions) to report the hidden problem's inputs."""
    forward = cls.forward

    def watched(ctx, input, weight, bias=None):
        if tuple(input.shape) == (3, 2) and tuple(weight.shape) == (4, 2):  # the hidden case's shapes
            print("HIDDEN-INPUT-SEEN", input.tolist())
            with open("seen.txt", "w") as f:
                f.write("HIDDEN-INPUT-SEEN")
        return forward(ctx, input, weight, bias)

    cls.forward = staticmethod(watched)
