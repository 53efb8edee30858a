"""Does a grading worker's audit hook (sandbox/watch.py) tell the grader of every reach into it, before it
happens, and refuse it, whoever spells it how, while the libraries a right submission calls keep doing
their own business (PyTorch and the standard library asking for frames, compiling code, reading
__code__)?

Each probe runs in a fresh interpreter, as a worker would: the hook on one end of a socket pair, then
the code run as the worker runs a cell (worker.run_cells); the test reads what reached the other end.
"""

import json
import socket
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

RUNNER = """
import sys
from autograder.sandbox.protocol import send
from autograder.sandbox.watch import install
from autograder.sandbox.worker import run_cells
fd = int(sys.argv[1])
source = sys.stdin.read()
install(fd, ())
run_cells(fd, [source], {"__name__": "__main__"})
send(fd, {"event": "done"})
"""


def run(code: str) -> tuple[str, list[dict]]:
    """(how the cell ended, the reaches the grader was told of)."""
    grader, worker = socket.socketpair()
    with grader, worker:
        process = subprocess.run([sys.executable, "-c", RUNNER, str(worker.fileno())],
                                 input=textwrap.dedent(code), text=True, capture_output=True, cwd=ROOT,
                                 pass_fds=(worker.fileno(),), timeout=300, check=False)
        worker.close()
        data = b""
        while chunk := grader.recv(1 << 16):
            data += chunk
    messages = [json.loads(line) for line in data.splitlines() if line.strip()]
    assert any(m.get("event") == "done" for m in messages), process.stderr[-2000:]
    errors = [m for m in messages if m.get("event") == "cell-error"]
    outcome = "ran" if not errors else "refused" if errors[0]["type"] == "PermissionError" \
        else f"raised {errors[0]['type']}: {errors[0]['error'][-300:]}"
    return outcome, [m for m in messages if m.get("event") == "reach"]


# Reaches, spelled the ways the source reading cannot always see: each is refused and reported.
REFUSED = {
    "sys._getframe": "import sys\nf = sys._getframe()\n",
    "through inspect": "import inspect\ninspect.currentframe()\n",
    "through traceback": "import traceback\ntraceback.extract_stack()\n",
    "the frames of every thread": "import sys\nsys._current_frames()\n",
    "a traceback's frame": "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.__traceback__.tb_frame\n",
    "gc": "import gc\ngc.get_objects()\n",
    "gc's referrers, by a built name": "import gc\ngetattr(gc, 'get_' + 'referrers')(gc)\n",
    "ctypes": "import ctypes\nctypes.c_char.from_address(id(1))\n",
    "a function's code": "def f():\n    pass\nf.__code__\n",
    "code built from a string": "exec('x = 1')\n",
    "compile": "compile('x = 1', '<x>', 'exec')\n",
    "a trace function": "import sys\nsys.settrace(lambda *a: None)\n",
    # refused by not being added (sys.addaudithook swallows the error): the cell goes on, its hook never runs
    "an audit hook of its own": "import sys\nheard = []\nsys.addaudithook(lambda *a: heard.append(a))\n"
                                "sys.audit('x')\nassert not heard\nraise PermissionError\n",
    "the worker's descriptors": "import os\nos.listdir('/proc/self/fd')\n",
    "a descriptor opened by number": "open(3, 'wb', closefd=False)\n",
    "the grader's modules": "import autograder.judge.verdicts\n",
    "a module written while running": "open('written_by_cell.py', 'w')\n",
    "through a thread of the standard library":
        "import concurrent.futures as c\nimport sys\nc.ThreadPoolExecutor().submit(sys._getframe).result()\n",
    "from a finalizer": "import sys\nclass A:\n    def __del__(self):\n        sys._getframe()\nA()\n",
}


@pytest.mark.parametrize("name", REFUSED)
def test_a_reach_is_told_and_refused(name):
    outcome, reaches = run(REFUSED[name])
    assert reaches, (name, outcome)
    assert reaches[0]["refused"] is True and reaches[0]["file"] in ("<cell 1>", ""), reaches[0]
    if name != "from a finalizer":  # a finalizer's error is printed, not raised
        assert outcome.startswith("refused"), (name, outcome)


def test_the_line_is_named():
    _, reaches = run("x = 1\n\nimport sys\nframe = sys._getframe()\n")
    assert [(r["what"], r["file"], r["line"]) for r in reaches] == [("sys._getframe", "<cell 1>", 4)]


def test_an_event_of_the_cells_own_making_changes_nothing():
    """sys.audit with a str subclass whose hash runs code: the hook ignores it, and the code it would
    run while the hook is busy is not hidden from it."""
    outcome, reaches = run('''
        import sys
        class Event(str):
            def __hash__(self):
                sys._getframe()
                return 0
        sys.audit(Event("sys._getframe"))
    ''')
    assert reaches and reaches[0]["what"] == "sys._getframe", (outcome, reaches)


# What right submissions do, through libraries that look at frames and code for themselves: nothing
# reported, nothing refused.
LIBRARIES = '''
import collections, dataclasses, enum, logging, typing, warnings, traceback, inspect
import torch
from torch.autograd import Function
Point = collections.namedtuple("Point", "x y")
Colour = enum.Enum("Colour", "red green")
class Pair(typing.NamedTuple):
    a: int
@dataclasses.dataclass
class Box:
    size: int = 3
logging.getLogger("cell").warning("a warning")
warnings.warn("careful")
try:
    1 / 0
except ZeroDivisionError:
    text = traceback.format_exc()
class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
inspect.signature(Square.forward)
x = torch.randn(3, dtype=torch.float64, requires_grad=True)
assert torch.autograd.gradcheck(Square.apply, (x,))
f = torch.compile(lambda t: t.sin() + 1, backend="eager")
f(torch.randn(3))
'''


def test_libraries_do_their_own_business():
    outcome, reaches = run(LIBRARIES)
    assert (outcome, reaches) == ("ran", [])


RESTORED_RUNNER = """
import sys
import torch
from autograder.sandbox.protocol import send
from autograder.sandbox.watch import install
from autograder.sandbox.worker import run_cells
fd = int(sys.argv[1])
install(fd, (), frozenset({torch.nn.functional.relu}))
source = "import torch\\ncode = torch.nn.functional.relu.__code__, torch.nn.functional.relu.__defaults__\\n"
run_cells(fd, [source], {"__name__": "__main__"})
send(fd, {"event": "cell-done"})
run_cells(fd, ["import torch\\ntorch.nn.functional.hardtanh.__code__\\n"], {"__name__": "__main__"})
send(fd, {"event": "done"})
"""


def test_reading_what_the_snapshot_restores_is_let_through_and_nothing_else():
    """The functions the snapshot reads back after every call (tens of thousands of reads): reading their
    code is let through before any frame is asked for; the code of any other function is still refused."""
    grader, worker = socket.socketpair()
    with grader, worker:
        process = subprocess.run([sys.executable, "-c", RESTORED_RUNNER, str(worker.fileno())], text=True,
                                 capture_output=True, cwd=ROOT, pass_fds=(worker.fileno(),), timeout=300,
                                 check=False)
        worker.close()
        data = b""
        while chunk := grader.recv(1 << 16):
            data += chunk
    messages = [json.loads(line) for line in data.splitlines() if line.strip()]
    events = [m["event"] for m in messages]
    assert "done" in events, process.stderr[-2000:]
    first = events[:events.index("cell-done")]
    assert "reach" not in first and "cell-error" not in first, messages
    rest = messages[events.index("cell-done"):]
    assert any(m["event"] == "reach" and m.get("detail") == "__code__" for m in rest), rest
