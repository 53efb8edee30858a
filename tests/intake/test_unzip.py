"""Is a zip that tries to write outside its folder, or to inflate past what it declares, unpacked safely, and
is a file that is not a zip a clear error?"""

import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.intake.loader import NoSubmissions, load
from autograder.intake.unzip import unpack
from tests.conftest import ALICE

LESSON = ("02-custom-functions", "custom-functions")


def hostile_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ok/ok.py", ALICE.read_text())
        z.writestr("../escaped.py", "raise SystemExit")
        z.writestr("/absolute.py", "raise SystemExit")
        z.writestr("ok/../../up.py", "raise SystemExit")
        z.writestr("C:/windows.py", "raise SystemExit")
        link = zipfile.ZipInfo("ok/link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(link, "/etc/passwd")
        z.writestr("ok/data.bin", b"\0" * 100)
        big = zipfile.ZipInfo("big/huge.ipynb")
        big.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(big, b" " * (21 * 2**20))  # inflates past the grader's 20 MB limit for one file
    return path


def test_a_zip_that_tries_to_escape_writes_nothing_outside(tmp_path):
    """Are entries with .. or absolute names, and links, refused and named, nothing written outside the
    temporary folder, the honest entry unpacked, and a file over the limit left sparse for the loader to
    refuse by its size?"""
    unpacked = unpack(hostile_zip(tmp_path / "evil.zip"), tmp_path)
    try:
        assert sorted(unpacked.refused) == ["../escaped.py", "/absolute.py", "C:/windows.py",
                                            "ok/../../up.py", "ok/link.py"]
        written = sorted(p.relative_to(unpacked.folder).as_posix() for p in unpacked.folder.rglob("*")
                         if p.is_file())
        assert written == ["big/huge.ipynb", "ok/data.bin", "ok/ok.py"]
        assert (unpacked.folder / "ok" / "data.bin").stat().st_size == 0  # named, never inflated
        assert not any(p.is_symlink() for p in unpacked.folder.rglob("*"))
        assert not (tmp_path / "escaped.py").exists() and not Path("/absolute.py").exists()
        # sparse, never inflated
        assert (unpacked.folder / "big" / "huge.ipynb").stat().st_blocks * 512 < 2**20
    finally:
        shutil.rmtree(unpacked.folder)
    subs = {s.id: s for s in load([tmp_path / "evil.zip"], LESSON)}
    assert subs["ok"].cells and "over the grader's limit of 20 MB" in subs["big"].error


def test_a_zip_bomb_is_refused(tmp_path):
    """Is an entry whose header understates what it inflates to stopped at the size it declared, refused,
    and nothing of it left?"""
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("s/a.py", b"#" * (5 * 2**20))
    data = bytearray(path.read_bytes())
    for marker, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # uncompressed size: local and central
        at = data.find(marker)
        data[at + offset:at + offset + 4] = (1000).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    unpacked = unpack(path, tmp_path)
    try:
        assert "could not be unpacked" in unpacked.refused["s/a.py"]
        assert not (unpacked.folder / "s" / "a.py").exists()
    finally:
        shutil.rmtree(unpacked.folder)


def test_a_file_that_is_not_a_zip_is_a_clear_error(tmp_path):
    """Does a .zip named on the command line that is not one stop with a sentence, and one inside a
    folder become that student's error?"""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "mallory.zip").write_text("not a zip")
    with pytest.raises(NoSubmissions, match="is not a zip file the grader can read"):
        load([tmp_path / "class" / "mallory.zip"])
    assert list(Path("/tmp").glob(f"autograder-{os.getpid()}-unzip-*")) == []
    (sub,) = load([tmp_path / "class"])
    assert sub.id == "mallory" and "is not a zip file" in sub.error
