"""Is each command's registry of assignments its own: changed only by the files it loads, never by another
registry or by a call outside an instructor's file?"""

import pytest

from autograder.course import add_problem, find_assignment, hide
from autograder.course.assignments.registry import BUILTIN, for_notebooks, load

EXTRA = """
from autograder.course import Case, Problem, TensorSpec, add_problem, find_assignment, hide

add_problem("custom-functions", Problem(name="Triple", summary="3 x", reference=lambda x: 3 * x,
                                         cases=(Case((TensorSpec((4,)),)),)))
hide("custom-functions", "Exp")
SEEN = [p.name for p in find_assignment("custom-functions").problems]
assert SEEN[-1] == "Triple", SEEN  # the file's own registry, as it is so far
"""


def test_registries_are_independent(tmp_path):
    """Does a file loaded into one registry leave a fresh registry, and the built-in assignments, as they
    were?"""
    extra = tmp_path / "extra.py"
    extra.write_text(EXTRA)
    changed = load([extra])
    assert [p.name for p in changed.find_assignment("custom-functions").problems][-1] == "Triple"
    assert changed.find_problem("Exp").hidden
    assert changed.origins[("custom-functions", "Triple")] == str(extra)
    assert [a.name for a in changed.from_outside()] == ["custom-functions"]
    fresh = load()
    assert "Triple" not in [p.name for p in fresh.find_assignment("custom-functions").problems]
    assert not fresh.find_problem("Exp").hidden
    assert not fresh.origins and not fresh.from_outside()
    assert find_assignment("custom-functions") == fresh.find_assignment("custom-functions") == BUILTIN[0]


@pytest.mark.parametrize("call", [lambda: hide("custom-functions", "Exp"),
                                  lambda: add_problem("custom-functions", None)], ids=["hide", "add_problem"])
def test_changes_outside_an_instructors_file_are_refused(call):
    """Is hide() or add_problem() called outside an extra file an error that says where it belongs, rather
    than a change nobody loads?"""
    with pytest.raises(RuntimeError, match=r"while an instructor's file is loaded .* "
                                           r"registry\.(hide|add_problem)"):
        call()


def test_notebooks_load_each_value_of_autograder_extra_once(tmp_path, monkeypatch):
    """Does check()'s registry follow AUTOGRADER_EXTRA, loading each value's files once?"""
    extra = tmp_path / "extra.py"
    extra.write_text(EXTRA)
    monkeypatch.delenv("AUTOGRADER_EXTRA", raising=False)
    plain = for_notebooks()
    assert plain is for_notebooks() and not plain.from_outside()
    monkeypatch.setenv("AUTOGRADER_EXTRA", str(extra))
    extended = for_notebooks()
    assert extended is for_notebooks() and extended is not plain
    assert extended.find_problem("Triple") and not plain.find_problem("Exp").hidden
