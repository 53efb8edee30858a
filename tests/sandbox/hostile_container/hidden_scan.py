# Hostile: while its cells run, looks for the instructor's hidden problem in the frames above it, every
# object in memory and every file it can read; later, its LinearFunction watches for the hidden problem's
# inputs and prints and writes what it sees. Nothing of it may reach the student.
import gc
import os
import sys

WANTED = ("Hidden linear", "SECRET-EXTRA")


def look(text) -> bool:
    return isinstance(text, str) and any(w in text for w in WANTED)


frame = sys._getframe()
while frame is not None:
    if any(look(v) or look(repr(v)[:10000]) for v in [*frame.f_locals.values(), *frame.f_globals.values()]):
        print("FOUND-HIDDEN in a frame")
    frame = frame.f_back
for obj in gc.get_objects():
    try:
        if look(obj) or (isinstance(obj, (dict, list, tuple)) and look(repr(obj)[:100000])):
            print("FOUND-HIDDEN in memory")
            break
    except Exception:  # noqa: BLE001, S110 - an object that cannot be shown hides nothing
        pass
for folder, _, names in os.walk("/"):
    if folder.startswith(("/proc", "/sys", "/dev")):
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
            raise RuntimeError("HIDDEN-INPUT-SEEN")
        return forward(ctx, input, weight, bias)

    cls.forward = staticmethod(watched)
