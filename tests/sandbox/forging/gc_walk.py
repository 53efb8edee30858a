# Attack: the takeover without a frame: the garbage collector's objects hold the loop's command channel
# (a Commands), its problems (Specs), and the closure that reports a problem's parts (its messages channel
# and the problem being measured).
import gc
import sys


def TAKE_OVER(name):
    objects = gc.get_objects()
    commands = next(o for o in objects if type(o).__name__ == "Commands")
    problems = next(o for o in objects if isinstance(o, dict) and o and all(
        isinstance(v, tuple) and v and type(v[0]).__name__ == "Spec" for v in o.values()))
    report = next(o for o in objects if type(o).__name__ == "function" and o.__name__ == "report"
                  and o.__closure__)
    cells = dict(zip(report.__code__.co_freevars, (c.cell_contents for c in report.__closure__)))
    loop = {"problems": problems, "seed": 0, "messages": cells["messages"], "commands": commands,
            "name": cells.get("name") or report.__defaults__[0]}
    answer(loop, sys.modules["autograder.sandbox.worker"].__dict__)
