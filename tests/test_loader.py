"""Does the loader find submissions, name them uniquely and read notebooks the way Jupyter runs them?
And does it read only regular files of a sane size, and turn any malformed file into that submission's
error instead of an exception?"""

import json
import os
import time

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from autograder.intake import files, jupyter, loader
from autograder.intake.loader import NoSubmissions, discover, jupyter_code, load, read_cells, unique_ids


def run(code: str, **names) -> dict:
    """Executes code as a worker does (no get_ipython anywhere) and returns its namespace."""
    namespace = dict(names)
    exec(compile(code, "<cell 1>", "exec"), namespace)  # noqa: S102 - the test's own code
    return namespace


def notebook(tmp_path, *sources, name="s.ipynb"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path = tmp_path / name
    nbformat.write(nb, path)
    return path


# -- what runs is what Jupyter runs -----------------------------------------------------------------------

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
    for cell in ("x = 1", "    x = 1\n    y = 2", ">>> x = 1\n>>> y = x", "\n\nx = 1\n", "def f(:", "s = 'é'"):
        assert jupyter_code(cell) == TransformerManager().transform_cell(cell), cell


def test_notebook_code_cells_in_order(tmp_path):
    """Does a notebook give its code cells in order, markdown left out, a skipped cell magic left empty
    so that the cells keep their numbers?"""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("text"),
                nbformat.v4.new_code_cell("%%bash\necho hi"), nbformat.v4.new_code_cell("b = a + 1")]
    path = tmp_path / "s.ipynb"
    nbformat.write(nb, path)
    assert read_cells(path) == ["a = 1\n", "", "b = a + 1\n"]


def test_python_file_is_one_cell(tmp_path):
    """Is a .py file run top to bottom as one program, untouched, decoded as Python decodes it?"""
    path = tmp_path / "s.py"
    path.write_text("x = 1\n%y = 2\n")
    assert read_cells(path) == ["x = 1\n%y = 2\n"]
    path.write_bytes("# -*- coding: latin-1 -*-\ns = 'é'\n".encode("latin-1"))
    assert "s = 'é'" in read_cells(path)[0]


def test_many_magics_in_long_cells_are_refused_quickly(tmp_path):
    """Is a notebook whose magics would make IPython's transformer read its long cells again and again
    (minutes of the grader's time) refused, naming the cell, within seconds; and one holding over a
    million characters of code?"""
    cell = "x = !ls\n" * 400 + "y = 1\n" * 8000
    path = notebook(tmp_path, "a = 1", cell, cell)
    started = time.monotonic()
    (sub,) = load([path])
    assert time.monotonic() - started < 60
    assert "cell 2" in sub.error and "IPython syntax" in sub.error and not sub.cells

    (sub,) = load([notebook(tmp_path, "x = [" + "1, " * 400_000 + "]", name="long.ipynb")])
    assert "cell 1" in sub.error and "1,000,000 characters" in sub.error


def test_honest_notebooks_are_far_from_the_limit(tmp_path):
    """Do a notebook's usual magics cost a small part of the transformer's budget?"""
    budget = jupyter.Budget("s.ipynb")
    for source in ["%matplotlib inline\n%load_ext autoreload\n%autoreload 2", "%%time\n" + "x = 1\n" * 200,
                   "files = !ls\n" + "y = 2\n" * 200] * 5:
        jupyter_code(source, budget)
    assert budget.left > 0.9 * jupyter.MAX_TRANSFORM_CHARS


# -- malformed files ------------------------------------------------------------------------------------

MALFORMED = {
    "not_json": b"{not json",
    "empty": b"",
    "top_level_list": b"[1, 2]",
    "cells_not_a_list": json.dumps({"cells": {"0": "x"}}).encode(),
    "no_cells": json.dumps({"nbformat": 4}).encode(),
    "nbformat3": json.dumps({"nbformat": 3, "worksheets": [{"cells": []}]}).encode(),
    "cell_not_a_dict": json.dumps({"cells": ["x = 1"]}).encode(),
    "source_null": json.dumps({"cells": [{"cell_type": "code", "source": None}]}).encode(),
    "source_dict": json.dumps({"cells": [{"cell_type": "code", "source": {"a": 1}}]}).encode(),
    "source_list_of_numbers": json.dumps({"cells": [{"cell_type": "code", "source": ["x = 1", 2]}]}).encode(),
    "source_missing": json.dumps({"cells": [{"cell_type": "code"}]}).encode(),
    "deeply_nested": b'{"cells": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "invalid_utf8": b'{"cells": [{"cell_type": "code", "source": "x = \'\xff\xfe\'"}]}',
    "lone_surrogate": b'{"cells": [{"cell_type": "code", "source": "x = \'\\ud800\'"}]}',
    "huge_integer": b'{"cells": [], "n": ' + b"9" * 10_000 + b"}",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_notebook_is_that_submissions_error(tmp_path, name):
    """Does each kind of malformed notebook become its submission's error, saying to save it again
    from Jupyter, beside a readable submission, instead of an exception?"""
    (tmp_path / f"{name}.ipynb").write_bytes(MALFORMED[name])
    (tmp_path / "fine.py").write_text("x = 1\n")
    subs = {s.id: s for s in load([tmp_path])}
    assert subs["fine"].cells == ["x = 1\n"] and not subs["fine"].error
    bad = subs[name]
    assert "not a readable Jupyter notebook" in bad.error and "Save it again from Jupyter" in bad.error
    assert bad.cells == [] and bad.sha256


def test_broken_notebook_is_reported_not_raised(tmp_path):
    """Does an unreadable notebook become a submission with a clear error instead of a crash?"""
    (tmp_path / "bad.ipynb").write_text("{not json")
    (sub,) = load([tmp_path])
    assert sub.id == "bad" and "not a readable Jupyter notebook" in sub.error


def test_byte_order_mark_is_fine(tmp_path):
    """Is a notebook saved with a UTF-8 byte-order mark read?"""
    path = notebook(tmp_path, "x = 1")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert read_cells(path) == ["x = 1\n"]


def test_any_failure_while_reading_is_contained(tmp_path, monkeypatch):
    """Does an unexpected exception while reading one file become that submission's error?"""
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")

    def explode(name, suffix, raw):
        if name == "a.py":
            raise MemoryError("out of memory")
        return [raw.decode()]

    monkeypatch.setattr(loader, "cells_of", explode)
    a, b = load([tmp_path])
    assert "could not be read (MemoryError" in a.error and b.cells == ["y = 1\n"]


# -- regular files only, of a sane size ---------------------------------------------------------------

@pytest.fixture()
def secret(tmp_path):
    """A file the grader can read and students must not: the hidden tests, /etc/shadow..."""
    folder = tmp_path / "source"
    folder.mkdir()
    (folder / "hidden.py").write_text("SECRET = 'hidden-test-answer'\n")
    return folder


def test_symlinks_are_refused_never_followed(tmp_path, secret):
    """Is a symlink among the submissions, to a file or to a folder, refused with a clear error, its
    target never read, and are files inside a linked folder never found?"""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.py").write_text("x = 1\n")
    (subs / "mallory.py").symlink_to(secret / "hidden.py")
    (subs / "trudy").symlink_to(secret)
    (subs / "nested").mkdir()
    (subs / "nested" / "eve.ipynb").symlink_to(secret / "hidden.py")
    found = [f.graded for f in discover([subs]).found]
    assert secret / "hidden.py" not in found and subs / "trudy" / "hidden.py" not in found
    by_id = {s.id: s for s in load([subs])}
    assert sorted(by_id) == ["alice", "mallory", "nested", "trudy"]  # a subfolder is one student's submission
    assert by_id["alice"].cells == ["x = 1\n"]
    for sid in ("nested", "mallory", "trudy"):
        assert "symbolic link" in by_id[sid].error and by_id[sid].cells == []
        assert "hidden-test-answer" not in repr(by_id[sid])


def test_symlink_named_directly_is_refused(tmp_path, secret):
    """Is a symlinked .py named on the command line refused too?"""
    link = tmp_path / "link.py"
    link.symlink_to(secret / "hidden.py")
    (sub,) = load([link])
    assert "symbolic link" in sub.error and sub.cells == []


@pytest.mark.parametrize("swap", ["symlink", "hard link"])
def test_file_swapped_just_before_opening_is_refused(tmp_path, secret, monkeypatch, swap):
    """Is a file replaced, after it was looked at and before it is opened, by a link to another file
    refused (O_NOFOLLOW for a symbolic link, the file's identity for a hard link)?"""
    path = tmp_path / "swap.py"
    path.write_text("x = 1\n")
    real_open = os.open

    def swap_then_open(name, *args, **kwargs):
        if os.fspath(name) == os.fspath(path):
            path.unlink()
            path.symlink_to(secret / "hidden.py") if swap == "symlink" else os.link(secret / "hidden.py", path)
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", swap_then_open)
    (sub,) = load([path])
    monkeypatch.undo()
    assert ("symbolic link" if swap == "symlink" else "was replaced") in sub.error and sub.cells == []


def test_named_pipe_is_refused_without_blocking(tmp_path):
    """Is a named pipe called like a submission refused (opening it would wait for a writer forever)?"""
    os.mkfifo(tmp_path / "pipe.py")
    (sub,) = load([tmp_path])
    assert "not a regular file" in sub.error


def test_oversized_file_is_refused_unread(tmp_path):
    """Is a notebook over the size limit refused with a message naming its size and the limit, from its
    size alone (a sparse file of a few hundred MB, which is not valid JSON, says nothing about JSON)?"""
    path = tmp_path / "huge.ipynb"
    with path.open("wb") as f:
        f.truncate(files.MAX_BYTES * 15)
    (sub,) = load([path])
    assert "over the grader's limit of 20 MB" in sub.error and "300.0 MB" in sub.error
    assert "JSON" not in sub.error and "Clear Outputs" in sub.error


def test_file_at_the_limit_is_read(tmp_path):
    """Is a file of exactly the limit still read?"""
    path = tmp_path / "big.py"
    path.write_bytes(b"#" * (files.MAX_BYTES - 1) + b"\n")
    (sub,) = load([path])
    assert not sub.error and len(sub.cells[0]) == files.MAX_BYTES


# -- ids ------------------------------------------------------------------------------------------------

def test_colliding_names_get_unique_ids(tmp_path):
    """Do two files of the same name given directly, or lying directly in two folders given, get different
    ids?"""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "hw.py").write_text("")
    (tmp_path / "a" / "hw.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()))
    assert [s.id for s in load([tmp_path / "a", tmp_path / "b"])] == ["hw", "hw-2", "hw-3"]
    assert unique_ids([tmp_path / "a" / "hw.ipynb", tmp_path / "a" / "hw.py"]) == ["hw", "hw-2"]


def test_ids_never_name_the_graders_own_files(tmp_path):
    """Can no file name become the id of a file the grader writes in the output folder (grades.csv, a
    Canvas CSV, a report), a hidden name or a path, and do names that differ only in case get their
    own ids?"""
    names = ["grades.csv.py", "GRADES.CSV.ipynb", "canvas.csv.py", "report.html.py", "results.json.py",
             "...py", ".hidden.py", "a\nb.py", "tab\tname.py", "Alice.py", "alice.py", "x" * 250 + ".py"]
    ids = unique_ids([tmp_path / name for name in names])
    assert len({i.casefold() for i in ids}) == len(ids)
    for sid in ids:
        assert sid.casefold() not in ("grades.csv", "canvas.csv", "report.html", "results.json"), sid
        assert not sid.startswith(".") and "/" not in sid and sid.isprintable(), sid
        assert not sid.casefold().endswith((".csv", ".html", ".json")), sid
        assert len(sid.encode()) <= 200
    assert ids[0] == "grades.csv-2" and ids[9:11] == ["Alice", "alice-2"] and ids[5] == "__"


def test_nothing_to_grade_is_a_usage_error(tmp_path):
    """Does an empty folder or a missing path say what to pass instead?"""
    with pytest.raises(NoSubmissions, match="No submissions found"):
        discover([tmp_path])
    with pytest.raises(NoSubmissions, match="does not exist"):
        discover([tmp_path / "missing"])


def test_hidden_files_and_checkpoints_are_skipped(tmp_path):
    """Are hidden files and folders (.ipynb_checkpoints among them) left out?"""
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "s-checkpoint.ipynb").write_text("{}")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "hook.py").write_text("")
    (tmp_path / "._s.py").write_text("")
    (tmp_path / "s.py").write_text("")
    assert [f.graded for f in discover([tmp_path]).found] == [tmp_path / "s.py"]


def test_nested_folders_are_walked(tmp_path):
    """Is a submission deep inside a student's nested folders found, its id the student's folder?"""
    folder = tmp_path / "student"
    for _ in range(18):
        folder = folder / ("d" * 60)
    folder.mkdir(parents=True)
    (folder / "deep.py").write_text("")
    (found,) = discover([tmp_path]).found
    assert (found.name, found.graded.name) == ("student", "deep.py")
