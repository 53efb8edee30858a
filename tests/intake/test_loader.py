"""Does the loader find submissions, name them uniquely and read a notebook's code cells in order (a .py
file as one cell), and turn any malformed file into that submission's error instead of an exception?"""

import json

import nbformat
import pytest

from autograder.intake import loader
from autograder.intake.loader import NoSubmissions, discover, load, read_cells, unique_ids
from tests.conftest import notebook


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
    path = notebook(tmp_path / "s.ipynb", "x = 1")
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
