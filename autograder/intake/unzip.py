"""Unpacks a zip of submissions (what Canvas and Gradescope hand out, or what a student uploaded) into a
folder the grader owns, safely, so that the loader reads it as it reads any folder.

Zip files are untrusted, so:

- only entries whose names are plain relative paths are written: an absolute name, a drive letter, a
  `..` part, a name with a NUL or control character is refused (named in `Unpacked.refused`) and
  never written, so nothing lands outside the folder;
- a symbolic link (or any entry whose Unix mode is not a regular file) is refused, never created;
- only what the grader may read is written: notebooks, Python files, zips (unpacked in their turn, to
  MAX_DEPTH), Gradescope's `submission_metadata.yml` and nbgrader's `timestamp.txt`; everything else
  becomes an empty file of its name, never inflated (so that a student who handed in a PDF only is
  listed, as in a folder);
- an entry declared larger than files.MAX_BYTES becomes a sparse placeholder of its declared size, so
  the loader refuses it by its size, as it refuses a large file in a folder, without it being inflated;
  what an entry really inflates to is counted and stopped at its declared size (a forged header), and
  at most MAX_ENTRIES entries are read; a size the file system cannot even hold (2**60 bytes) refuses
  the entry;
- every zip of one run draws on one budget of bytes (config.UNZIP_BYTES, the `budget` the caller
  shares between its zips): the zip that crosses it, and every zip after it, is refused whole, so that
  many small zips cannot fill the temporary disk together;
- encrypted entries, duplicate names and entries that fail to inflate are refused, named; any other
  error while unpacking a zip refuses that zip (ZipRefused, with the cause), never the run.

Files are created with O_EXCL | O_NOFOLLOW in folders this process made itself (mode 700), so nothing
already there is followed or overwritten.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder import config
from autograder.intake.files import MAX_BYTES
from autograder.intake.gradescope_metadata import METADATA

MAX_ENTRIES = 20_000  # entries read from one zip
MAX_DEPTH = 2  # a class zip holding students' zips, no deeper
MAX_ZIP_BYTES = 8 * 1024**3  # a zip file itself
KEPT_SUFFIXES = (".ipynb", ".py", ".zip")
KEPT_NAMES = (METADATA, "timestamp.txt")  # nbgrader's time of submission
# as a worker's folder: swept once this grader is gone, even if killed
TEMP_PREFIX = "autograder-{pid}-unzip-"


class ZipRefused(ValueError):
    """The zip as a whole cannot be read: not a zip, too big, too many entries, over the run's budget of
    unpacked bytes, or any other error while unpacking it."""


class _OverBudget(Exception):
    """The run's budget of unpacked bytes ran out while inflating an entry."""


def _spent() -> str:
    return (f"the zips of this grading run unpack to more than the grader's limit of "
            f"{config.UNZIP_BYTES / 2**30:g} GB together (config.UNZIP_BYTES); your instructor can grade "
            f"it in a run of its own")


@dataclass
class Unpacked:
    folder: Path
    refused: dict[str, str] = field(default_factory=dict)  # entry name -> why it was not written
    code_page: list[str] = field(default_factory=list)  # names neither marked nor valid UTF-8: read as cp437


def _safe_parts(name: str) -> tuple[str, ...] | None:
    """The parts of an entry's name as a relative path, or None when it could escape or is not text."""
    name = name.replace("\\", "/")
    if not name or name.startswith("/") or "\x00" in name or any(ord(c) < 32 for c in name):
        return None
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if not parts or any(p == ".." or ":" in p for p in parts):
        return None
    if any(len(p.encode("utf-8", "replace")) > 255 for p in parts) or len(parts) > 64:
        return None
    return parts


def _kept(parts: tuple[str, ...]) -> bool:
    last = parts[-1]
    return last.endswith(KEPT_SUFFIXES) or last in KEPT_NAMES


def _mkdirs(base: Path, parts: tuple[str, ...]) -> Path:
    """Makes the folders of parts under base, refusing anything already there that is not a folder of
    ours (a link made by an earlier entry cannot exist: links are never written)."""
    folder = base
    for part in parts:
        folder = folder / part
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                raise OSError(f"{part} is not a folder") from None
    return folder


def unpack(path: Path, into: Path | None = None, depth: int = 1, budget: list[int] | None = None) -> Unpacked:
    """Unpacks the zip at path into a new folder (under `into`, else the system's temporary folder).
    budget: [bytes the zips of this run may still write], shared by the caller between its zips.
    Raises ZipRefused, naming the cause, when the zip cannot be unpacked; nothing of it is left."""
    budget = budget if budget is not None else [config.UNZIP_BYTES]
    if budget[0] <= 0:
        raise ZipRefused(f"{path.name} was not unpacked: {_spent()}.")
    folder = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX.format(pid=os.getpid()), dir=into))
    try:
        return _unpack(path, folder, depth, budget)
    except ZipRefused:
        remove(folder)
        raise
    except _OverBudget:
        remove(folder)
        raise ZipRefused(f"{path.name} was not unpacked whole: {_spent()}.") from None
    except Exception as error:  # noqa: BLE001 - whatever goes wrong with one zip fails that zip alone
        remove(folder)
        raise ZipRefused(f"{path.name} could not be unpacked ({type(error).__name__}: "
                         f"{str(error)[:200]}).") from None
    except BaseException:
        remove(folder)
        raise


def _unpack(path: Path, folder: Path, depth: int, budget: list[int]) -> Unpacked:
    result = Unpacked(folder)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as error:
        raise ZipRefused(f"{path.name} could not be read ({error.strerror}).") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ZipRefused(f"{path.name} is not a regular file.")
        if info.st_size > MAX_ZIP_BYTES:
            raise ZipRefused(f"{path.name} is {info.st_size / 2**30:.1f} GB, over the grader's limit of "
                             f"{MAX_ZIP_BYTES // 2**30} GB for one zip.")
        try:
            archive = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            why = str(error)[:200]
            raise ZipRefused(f"{path.name} is not a zip file the grader can read ({why}).") from None
        with archive:
            entries = archive.infolist()
            if len(entries) > MAX_ENTRIES:
                raise ZipRefused(f"{path.name} holds {len(entries):,} entries, over the grader's limit of "
                                 f"{MAX_ENTRIES:,}.")
            seen: set[tuple[str, ...]] = set()
            for entry in entries:
                _extract(archive, entry, folder, result, seen, budget)
    if depth < MAX_DEPTH:
        for inner in sorted(folder.rglob("*.zip")):
            _unpack_inner(inner, depth, budget, result)
    return result


def _unpack_inner(inner: Path, depth: int, budget: list[int], result: Unpacked) -> None:
    """A zip inside the zip becomes a folder of the same name without .zip, in its place."""
    target = inner.with_suffix("")
    name = inner.relative_to(result.folder).as_posix()
    if target.exists() or target.is_symlink():
        result.refused[name] = "a folder of the same name is beside it"
        return
    try:
        inside = unpack(inner, inner.parent, depth + 1, budget)
    except ZipRefused as error:
        result.refused[name] = str(error)
        return
    os.rename(inside.folder, target)
    inner.unlink()
    for entry, why in inside.refused.items():
        result.refused[f"{name}/{entry}"] = why
    result.code_page += [f"{name}/{entry}" for entry in inside.code_page]


def _extract(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, folder: Path, result: Unpacked,
             seen: set[tuple[str, ...]], budget: list[int]) -> None:
    name = _entry_name(entry, result)
    parts = _safe_parts(name)
    if parts is None:
        result.refused[name] = "its name is not a plain relative path (it could land outside the folder)"
        return
    mode = entry.external_attr >> 16
    if entry.is_dir() or name.endswith(("/", "\\")):
        return
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # no type at all: a zip made elsewhere than on Unix
        result.refused[name] = "it is a symbolic link or a special file, which the grader never creates"
        return
    if any(p.startswith(".") or p == "__MACOSX" for p in parts):
        return
    if parts in seen:
        result.refused[name] = "the zip holds two entries of this name"
        return
    seen.add(parts)
    if not _kept(parts):
        _placeholder(folder, parts)
        return
    if entry.flag_bits & 0x1:
        result.refused[name] = "it is encrypted"
        return
    try:
        parent = _mkdirs(folder, parts[:-1])
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(parent / parts[-1], flags, 0o600)
    except OSError as error:
        result.refused[name] = f"it could not be written ({error})"
        return
    limit = MAX_BYTES if parts[-1].endswith((".ipynb", ".py", ".yml", ".txt")) else config.UNZIP_BYTES
    with os.fdopen(fd, "wb") as out:
        if entry.file_size > limit:
            try:
                out.truncate(entry.file_size)  # sparse: the loader refuses it by its size, unread
            except OSError:  # more than the file system holds (a forged 2**60 bytes)
                result.refused[name] = (f"it declares {entry.file_size:,} bytes, over the grader's limit of "
                                        f"{limit // 2**20:,} MB")
        else:
            _inflate(archive, entry, out, limit, budget, result)
    if name in result.refused:
        os.unlink(parent / parts[-1])


def _inflate(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, out, limit: int, budget: list[int],
             result: Unpacked) -> None:
    """Writes what entry inflates to, stopped at its declared size and limit (the entry is refused) and at
    the run's budget (the zip is refused)."""
    written = 0
    try:
        with archive.open(entry) as source:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                budget[0] -= len(chunk)
                if written > entry.file_size or written > limit:
                    raise ValueError("it inflates to more than its header says")
                if budget[0] < 0:
                    raise _OverBudget
                out.write(chunk)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError, RuntimeError) as error:
        result.refused[entry.filename] = f"it could not be unpacked ({str(error)[:200]})"


def _entry_name(entry: zipfile.ZipInfo, result: Unpacked) -> str:
    """An entry's name: zipfile reads a name not marked UTF-8 as code page 437 (the zip standard's), but
    many tools write UTF-8 without marking it: such a name is read as UTF-8 when it is valid UTF-8, else
    it stays code page 437, and the instructor is told."""
    name = entry.filename
    if entry.flag_bits & 0x800 or name.isascii():
        return name
    try:
        return name.encode("cp437").decode("utf-8")
    except UnicodeError:
        result.code_page.append(name)
        return name


def _placeholder(folder: Path, parts: tuple[str, ...]) -> None:
    """An entry the grader never reads (a PDF) becomes an empty file of its name, never inflated, so
    that a student who handed in only that is still found, as in the folder the zip was made of."""
    try:
        fd = os.open(_mkdirs(folder, parts[:-1]) / parts[-1],
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    os.close(fd)


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
