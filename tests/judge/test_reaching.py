"""Is reaching into the grader seen in a submission's source (judge/reaching.py), and never in the code of
a right submission written as the lessons teach: every solution notebook, every student notebook as
handed out (the set-up cell included), every example submission and every right Function of
tests/wrong_functions.py?"""

import textwrap
from pathlib import Path

import pytest

import tests.wrong_functions as catalogue
from autograder.intake.loader import read_cells
from autograder.judge import reach_names
from autograder.judge.reaching import scan
from tests.conftest import ROOT

LESSONS = sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "course").glob("*.ipynb"))
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*/*") if p.suffix in (".py", ".ipynb")
                  and p.name != "erin.ipynb")  # erin's notebook is deliberately not JSON
RIGHT_LISTS = [name for name in dir(catalogue) if name == "RIGHT" or name.endswith("_RIGHT")
               and isinstance(getattr(catalogue, name), list)]


def right_functions():
    for name in RIGHT_LISTS:
        for i, (problem, source) in enumerate(getattr(catalogue, name)):
            yield pytest.param(problem, source, id=f"{name}-{i}-{problem}")


@pytest.mark.parametrize("path", LESSONS + EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lessons_and_examples_reach_nothing(path: Path):
    """Is no lesson notebook (solution or student version) and no example submission flagged?"""
    assert scan(read_cells(path)) == []


@pytest.mark.parametrize("problem, source", list(right_functions()))
def test_right_functions_reach_nothing(problem, source):
    assert scan([catalogue.HEADER + source]) == []


def flagged(code: str, modules: dict | None = None) -> list[str]:
    return [r.what for r in scan([textwrap.dedent(code)], modules)]


# Each way of reaching, written afresh: the phrase the page shows for it.
REACHES = {
    "frames": ("import sys\nf = sys._getframe()\n", reach_names.FRAMES),
    "inspect": ("import inspect\nframes = inspect.stack()\n", reach_names.FRAMES),
    "f_back": ("def up(frame):\n    return frame.f_back.f_locals\n", reach_names.FRAMES),
    "a traceback's frame": ("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    t = e.__traceback__\n",
                            reach_names.OBJECTS),
    "a generator's frame": ("g = (x for x in [1])\nframe = g.gi_frame\n", reach_names.FRAMES),
    "walk_stack": ("import traceback\nlist(traceback.walk_stack(None))\n", reach_names.FRAMES),
    "gc": ("import gc\nobjects = gc.get_objects()\n", reach_names.OBJECTS),
    "gc's referrers": ("from gc import get_referrers\n", reach_names.OBJECTS),
    "ctypes": ("import ctypes\n", reach_names.MEMORY),
    "ctypes through torch": ("import torch\nc = torch.ctypes\n", reach_names.MEMORY),
    "an array's address": ("import numpy as np\np = np.zeros(3).ctypes.data\n", reach_names.MEMORY),
    "as_strided": ("from numpy.lib.stride_tricks import as_strided\n", reach_names.MEMORY),
    "array interface": ("class A:\n    pass\nA.__array_interface__ = {}\n", reach_names.MEMORY),
    "storage by address": ("import torch\ns = torch._C._construct_storage_from_data_pointer(0, 'cpu', 8)\n",
                           reach_names.OBJECTS),
    "the grader's modules": ("import autograder.sandbox.worker\n", reach_names.GRADER),
    "the grader's modules, from": ("from autograder.measure.probe import measure\n", reach_names.GRADER),
    "sys.modules": ("import sys\nw = sys.modules['autograder.sandbox.worker']\n", reach_names.FRAMES),
    "globals of a function": ("def f():\n    pass\ng = f.__globals__\n", reach_names.OBJECTS),
    "a closure": ("def f(g):\n    return g.__closure__[0].cell_contents\n", reach_names.OBJECTS),
    "exec": ("exec('x = 1')\n", reach_names.DYNAMIC),
    "eval": ("y = eval('1 + 1')\n", reach_names.DYNAMIC),
    "compile": ("c = compile('x = 1', '<x>', 'exec')\n", reach_names.DYNAMIC),
    "__import__": ("s = __import__('s' + 'ys')\n", reach_names.BY_NAME),
    "getattr with a built name": ("import torch\nm = getattr(torch, 'c' + 'types')\n", reach_names.BY_NAME),
    "getattr with a reaching name": ("import sys\nf = getattr(sys, '_getframe')\n", reach_names.FRAMES),
    "getattr passed on": ("import functools, torch\nfunctools.reduce(getattr, ['x'], torch)\n",
                          reach_names.BY_NAME),
    "vars": ("import torch\nd = vars(torch)\n", reach_names.OBJECTS),
    "globals": ("g = globals()\n", reach_names.OBJECTS),
    "a module's dict": ("import torch\nd = torch.__dict__\n", reach_names.OBJECTS),
    "attrgetter": ("import operator\nget = operator.attrgetter('x')\n", reach_names.BY_NAME),
    "a name in a string": ("import pydoc\nf = pydoc.locate('sys._getframe')\n", reach_names.FRAMES),
    "a format string": ("text = '{0.f_back}'.format(1)\n", reach_names.BY_NAME),
    "a match pattern": ("def f(x):\n    match x:\n        case object(f_back=up):\n            return up\n",
                        reach_names.FRAMES),
    "os.write": ("import os\nos.write(3, b'{}\\n')\n", reach_names.PROCESS),
    "from os import dup2": ("from os import dup2\n", reach_names.PROCESS),
    "os renamed": ("import os as o\no.fdopen(3, 'w')\n", reach_names.PROCESS),
    "os passed on": ("import os\nm = os\n", reach_names.PROCESS),
    "os.system": ("import os\nos.system('echo >&3')\n", reach_names.PROCESS),
    "subprocess": ("import subprocess\n", reach_names.PROCESS),
    "socket": ("import socket\n", reach_names.PROCESS),
    "/proc": ("path = '/proc/self/fd/3'\n", reach_names.BY_NAME),
    "settrace": ("import sys\nsys.settrace(None)\n", reach_names.FRAMES),
    "threading's hooks": ("import threading\nthreading.setprofile(print)\n", reach_names.HOOKS),
    "pickle": ("import pickle\n", reach_names.DYNAMIC),
    "torch.load": ("import torch\nx = torch.load('x.pt')\n", reach_names.DYNAMIC),
    "marshal": ("import marshal\n", reach_names.DYNAMIC),
    "types": ("import types\nf = types.FunctionType\n", reach_names.DYNAMIC),
    "breakpoint": ("breakpoint()\n", reach_names.FRAMES),
    "importlib": ("import importlib\n", reach_names.BY_NAME),
}


@pytest.mark.parametrize("name", REACHES)
def test_each_way_of_reaching_is_seen(name):
    code, phrase = REACHES[name]
    found = flagged(code)
    assert any(what.startswith(phrase) for what in found), (name, found)


def test_a_helper_module_is_read_too():
    """Is a reach in a helper module beside the notebook seen, named by its file and line?"""
    found = scan(["import helper\n"], {"helper.py": "import sys\n\nframe = sys._getframe(1)\n"})
    assert [(r.source, r.line, r.text) for r in found] == [("helper.py", 3, "frame = sys._getframe(1)")]


# What right code does, close to a reach in its words, that must not be flagged.
FINE = [
    "x = getattr(ctx, 'needs_input_grad')\n",
    "ok = hasattr(x, 'shape')\n",
    "import gc\ngc.collect()\ngc.disable()\ngc.enable()\n",
    "import os\nos.environ['KINETO_LOG_LEVEL'] = '6'\nhere = os.path.join(os.getcwd(), 'x')\nos._exit\n",
    "import sys\nsys.path.insert(0, '.')\nprint(sys.version, file=sys.stderr)\n",
    "import numpy as np\nw = np.lib.stride_tricks.sliding_window_view(np.zeros(5), 3)\n",
    "import torch\nwith torch._C.DisableTorchFunctionSubclass():\n    pass\n",
    "import weakref\nr = weakref.ref(object)\n",
    "import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    traceback.print_exc()\n",
    "print(type(3).__name__, (3).__class__.__name__)\n",
    "import warnings\nwarnings.warn('careful')\n",
    "print('inspect the gradient, and the signal it gives')\n",
    "from autograder import check, expect_error, draw\nimport autograder\nautograder.check\n",
    "import torch\nprint(torch.__version__, torch.tensor(1.0)._version)\n",
]


@pytest.mark.parametrize("code", FINE)
def test_right_code_near_a_reach_is_not_flagged(code):
    assert flagged(code) == []


def test_the_set_up_cell_of_any_release_is_known_and_a_changed_one_is_read():
    """Is the course's set-up cell (it imports subprocess and importlib) left alone whatever release's
    address it names, and read like any cell once its code is changed?"""
    setup = read_cells(ROOT / "course" / "02-custom-functions.ipynb")[0]
    other_release = setup.replace("v0.1.0", "v9.9.9").replace("0.1.0-py3", "9.9.9-py3")
    assert scan([setup]) == scan([other_release]) == []
    assert scan([setup.replace('find_spec("autograder")', 'find_spec("nothing")')]) != []
