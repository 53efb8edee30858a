"""Does the grader read only regular files of a sane size: a link (or a file swapped for one) refused, never
followed; a named pipe refused without blocking; a file over the limit refused from its size, unread?"""

import os

import pytest

from autograder.intake import files
from autograder.intake.loader import discover, load


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
            if swap == "symlink":
                path.symlink_to(secret / "hidden.py")
            else:
                os.link(secret / "hidden.py", path)
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
