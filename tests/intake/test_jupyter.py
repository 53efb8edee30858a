"""Is what runs of a notebook's code cell what Jupyter runs: magics, shell escapes and help as no-ops in
place, cell magics run or skipped as Jupyter would, and IPython's transformer kept to a budget?"""

import time

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from autograder.intake import jupyter
from autograder.intake.jupyter import jupyter_code
from autograder.intake.loader import load
from tests.conftest import notebook


def run(code: str, **names) -> dict:
    """Executes code as a worker does (no get_ipython anywhere) and returns its namespace."""
    namespace = dict(names)
    exec(compile(code, "<cell 1>", "exec"), namespace)  # noqa: S102 - the test's own code
    return namespace


def test_magics_and_shell_escapes_become_no_ops_in_place():
    """Are line magics, shell escapes and help replaced by no-ops on their own lines, so the line
    numbers of the cell stay as Jupyter has them?"""
    assert jupyter_code("%matplotlib inline\nx = 1\n!ls\ny = 2") == "None\nx = 1\nNone\ny = 2\n"
    assert jupyter_code("x?\n%pip install torch\nfiles = !ls") == "None\nNone\nfiles = []\n"
    with pytest.raises(ValueError) as raised:
        run(jupyter_code("%load_ext autoreload\n!rm -rf /tmp/x\nraise ValueError('line 3')"))
    assert raised.traceback[-1].lineno + 1 == 3


def test_no_ipython_call_is_left_to_make():
    """Does no transformed cell call get_ipython() (workers have no IPython), magics inside functions
    and on the right of an assignment included?"""
    cells = ["%matplotlib inline", "def f():\n    !ls\n    %env X=1\n    return 1", "out = !!ls", "x = %env",
             "%%time\n%time y = 2\n!echo", "a = 1\nobj?", "%%capture\n%pwd"]
    for cell in cells:
        code = jupyter_code(cell)
        assert "get_ipython" not in code, (cell, code)
        run(code, obj=None)
    assert run(jupyter_code(cells[1]))["f"]() == 1


def test_continuation_lines_that_start_like_magics_stay():
    """Do continuation lines of an expression that start with `!=` or `%` stay, as in Jupyter, where
    stripping them line by line made a SyntaxError?"""
    cell = "a, b = 1, 2\nx = (a\n     != b)\ny = (7\n     % 4)\ns = '''\n%not a magic\n!nor this\n'''"
    namespace = run(jupyter_code(cell))
    assert namespace["x"] is True and namespace["y"] == 3 and "%not a magic" in namespace["s"]


def test_time_runs_what_it_times():
    """Does a `%%time` cell run its body, and `%time stmt` its statement, as Jupyter does?"""
    namespace = run(jupyter_code("%%time\nimport math\nroot = math.sqrt(16)"))
    assert namespace["root"] == 4.0
    assert run(jupyter_code("%time z = 3\nw = %time z + 1"))["w"] == 4
    assert run(jupyter_code("%%time\n%%capture\nv = 5"))["v"] == 5
    assert run(jupyter_code("%%prun -s cumulative\nu = 6"))["u"] == 6


def test_cell_magics_that_leave_python_are_skipped():
    """Are the bodies of %%bash, %%script, %%html, %%javascript, %%timeit and %%writefile not run (an
    empty cell, so cells keep their numbers)?"""
    for cell in ("%%bash\nrm -rf /", "%%script bash\nexit 1", "%%html\n<script>x</script>",
                 "%%javascript\nalert(1)", "%%timeit\nslow()", "%%writefile helper.py\nraise SystemExit",
                 "%%file helper.py\nx = 1", "%%time statement\nx = 1"):
        assert jupyter_code(cell) == "", cell


def test_cells_without_magics_are_what_ipython_makes_of_them():
    """Is a cell without IPython syntax exactly what IPython's transformer makes of it (leading
    indentation and prompts removed, a final newline)?"""
    cells = ("x = 1", "    x = 1\n    y = 2", ">>> x = 1\n>>> y = x", "\n\nx = 1\n", "def f(:", "s = 'é'")
    for cell in cells:
        assert jupyter_code(cell) == TransformerManager().transform_cell(cell), cell


def test_many_magics_in_long_cells_are_refused_quickly(tmp_path):
    """Is a notebook whose magics would make IPython's transformer read its long cells again and again
    (minutes of the grader's time) refused, naming the cell, within seconds; and one holding over a
    million characters of code?"""
    cell = "x = !ls\n" * 400 + "y = 1\n" * 8000
    path = notebook(tmp_path / "s.ipynb", "a = 1", cell, cell)
    started = time.monotonic()
    (sub,) = load([path])
    assert time.monotonic() - started < 60
    assert "cell 2" in sub.error and "IPython syntax" in sub.error and not sub.cells

    (sub,) = load([notebook(tmp_path / "long.ipynb", "x = [" + "1, " * 400_000 + "]")])
    assert "cell 1" in sub.error and "1,000,000 characters" in sub.error


def test_honest_notebooks_are_far_from_the_limit(tmp_path):
    """Do a notebook's usual magics cost a small part of the transformer's budget?"""
    budget = jupyter.Budget("s.ipynb")
    for source in ["%matplotlib inline\n%load_ext autoreload\n%autoreload 2", "%%time\n" + "x = 1\n" * 200,
                   "files = !ls\n" + "y = 2\n" * 200] * 5:
        jupyter_code(source, budget)
    assert budget.left > 0.9 * jupyter.MAX_TRANSFORM_CHARS
