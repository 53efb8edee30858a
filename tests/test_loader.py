"""Does the loader find submissions, name them uniquely and read notebooks the way Jupyter runs them?"""

import json

import nbformat
import pytest

from autograder.loader import NoSubmissions, discover, load, read_cells, strip_magics, unique_ids


def test_magics_and_shell_escapes_are_skipped():
    """Are IPython magics and shell escapes dropped, and whole-cell magics skipped?"""
    assert strip_magics("%matplotlib inline\nx = 1\n  !ls\ny = 2") == "x = 1\ny = 2"
    assert strip_magics("%%timeit\nx = 1") is None


def test_notebook_code_cells_in_order(tmp_path):
    """Does a notebook give its code cells in order, markdown left out?"""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("text"),
                nbformat.v4.new_code_cell("%%bash\necho hi"), nbformat.v4.new_code_cell("b = a + 1")]
    path = tmp_path / "s.ipynb"
    nbformat.write(nb, path)
    assert read_cells(path) == ["a = 1", "b = a + 1"]


def test_python_file_is_one_cell(tmp_path):
    """Is a .py file run top to bottom as one program?"""
    path = tmp_path / "s.py"
    path.write_text("x = 1\ny = 2\n")
    assert read_cells(path) == ["x = 1\ny = 2\n"]


def test_broken_notebook_is_reported_not_raised(tmp_path):
    """Does an unreadable notebook become a submission with a clear error instead of a crash?"""
    (tmp_path / "bad.ipynb").write_text("{not json")
    (sub,) = load([tmp_path])
    assert sub.id == "bad" and "not a readable Jupyter notebook" in sub.error


def test_colliding_names_get_unique_ids(tmp_path):
    """Do two files with the same name in different folders get different ids?"""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "hw.py").write_text("")
    (tmp_path / "a" / "hw.ipynb").write_text(json.dumps(nbformat.v4.new_notebook()))
    files = discover([tmp_path])
    assert unique_ids(files) == ["hw", "hw-2", "hw-3"]


def test_nothing_to_grade_is_a_usage_error(tmp_path):
    """Does an empty folder or a missing path say what to pass instead?"""
    with pytest.raises(NoSubmissions, match="No submissions found"):
        discover([tmp_path])
    with pytest.raises(NoSubmissions, match="does not exist"):
        discover([tmp_path / "missing"])
