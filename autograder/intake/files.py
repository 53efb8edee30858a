"""Reads one untrusted file (or lists one folder), as root: a regular file only, never through a symbolic
link, never one over MAX_BYTES (refused from its size, never read whole). What is wrong with it is
Unreadable, in words for the student.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tokenize
from pathlib import Path

SUFFIXES = (".ipynb", ".py")  # what the grader reads as a student's work
MAX_BYTES = 20 * 1024 * 1024  # one notebook or .py file; larger ones are refused unread
SKIPPED_FOLDERS = ("__MACOSX", "__pycache__")  # never a submission: what zip tools and Python leave behind


class Unreadable(ValueError):
    """Why one submission cannot be graded, in words for the student."""


def read_file(path: Path) -> bytes:
    """The bytes of a regular file, read without following a link and only when under MAX_BYTES."""
    try:
        before = os.lstat(path)
    except OSError as error:
        raise Unreadable(f"{path.name} could not be read ({error.strerror}).") from None
    if stat.S_ISLNK(before.st_mode):
        raise Unreadable(_LINK.format(name=path.name))
    if not stat.S_ISREG(before.st_mode):
        raise Unreadable(_NOT_A_FILE.format(name=path.name))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Unreadable(_LINK.format(name=path.name)) from None
        raise Unreadable(f"{path.name} could not be read ({error.strerror}).") from None
    try:
        opened = os.fstat(fd)
        same = (opened.st_dev, opened.st_ino) == (before.st_dev, before.st_ino)
        if not stat.S_ISREG(opened.st_mode) or not same:
            raise Unreadable(f"{path.name} was replaced while the grader was reading it, so it was not read.")
        if opened.st_size > MAX_BYTES:
            raise Unreadable(_too_big(path.name, opened.st_size))
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, MAX_BYTES + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_BYTES:  # grew while being read
                raise Unreadable(_too_big(path.name, total))
        return b"".join(chunks)
    finally:
        os.close(fd)


_LINK = ("{name} is a symbolic link, which the grader does not follow: it reads only regular files. "
         "Submit the notebook (or .py file) itself, not a link to it.")
_NOT_A_FILE = ("{name} is not a regular file (a named pipe, a device, a socket...): submit the notebook (or "
               ".py file) itself.")


def _too_big(name: str, size: int) -> str:
    return (f"{name} is {size / 2**20:.1f} MB, over the grader's limit of {MAX_BYTES // 2**20} MB for one "
            f"file, so it was not read. Its outputs are probably what is big: clear them (Edit > Clear "
            f"Outputs of All Cells in Jupyter), save and resubmit.")


def python_text(raw: bytes) -> str:
    """A .py file's text, decoded as Python decodes it (UTF-8 unless a coding line says otherwise);
    undecodable bytes become U+FFFD."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return raw.decode(encoding, errors="replace")
    except (SyntaxError, LookupError):
        return raw.decode("utf-8", errors="replace")


def listing(folder: Path) -> list[os.DirEntry]:
    """A folder's entries by name, hidden ones and SKIPPED_FOLDERS left out (nothing is followed)."""
    with os.scandir(folder) as it:
        return sorted((e for e in it if not e.name.startswith(".") and e.name not in SKIPPED_FOLDERS),
                      key=lambda e: e.name)


def is_dir(entry: os.DirEntry) -> bool:
    """A folder itself, not a link to one."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def is_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False
