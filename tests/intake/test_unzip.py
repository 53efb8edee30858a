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
    """Does a .zip named alone on the command line that is not one stop with a sentence, and one inside
    a folder or named among other paths become that student's error?"""
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "mallory.zip").write_text("not a zip")
    with pytest.raises(NoSubmissions, match="is not a zip file the grader can read"):
        load([tmp_path / "class" / "mallory.zip"])
    assert list(Path("/tmp").glob(f"autograder-{os.getpid()}-unzip-*")) == []
    (sub,) = load([tmp_path / "class"])
    assert sub.id == "mallory" and "is not a zip file" in sub.error
    # named among others (`grade *.zip`): that student's error, the others read
    shutil.copy(ALICE, tmp_path / "alice.py")
    subs = {s.id: s for s in load([tmp_path / "alice.py", tmp_path / "class" / "mallory.zip"], LESSON)}
    assert subs["alice"].cells and "is not a zip file the grader can read" in subs["mallory"].error


def test_any_error_while_unpacking_fails_that_zip_alone(tmp_path, monkeypatch):
    """Does an error the unpacking code never expected (here a RuntimeError from one entry) become that
    zip's error, naming it, with nothing of the zip left, and the student beside it still read?"""
    from autograder.intake import unzip

    def broken(*args):
        raise RuntimeError("unforeseen")

    (tmp_path / "class").mkdir()
    shutil.copy(ALICE, tmp_path / "class" / "alice.py")
    with zipfile.ZipFile(tmp_path / "class" / "mallory.zip", "w") as z:
        z.writestr("mallory.py", ALICE.read_text())
    monkeypatch.setattr(unzip, "_extract", broken)
    subs = {s.id: s for s in load([tmp_path / "class"], LESSON)}
    assert subs["alice"].cells
    assert "mallory.zip could not be unpacked (RuntimeError: unforeseen)" in subs["mallory"].error
    assert list(Path("/tmp").glob(f"autograder-{os.getpid()}-unzip-*")) == []


def test_the_zips_of_a_run_share_one_budget(tmp_path, monkeypatch):
    """With room for about two of four zips (config.UNZIP_BYTES), are the first two read, and the one that
    crosses the budget and the one after it refused with the cause, and is the budget the docs give the
    one in config.py?"""
    import re

    from autograder import config
    from tests.conftest import ROOT

    docs = re.sub(r"\s+", " ", (ROOT / "docs" / "instructors.md").read_text())
    assert f"All the zips of one run may unpack to {config.UNZIP_BYTES / 2**30:g} GB together" in docs
    monkeypatch.setattr(config, "UNZIP_BYTES", 5 * 2**20)
    (tmp_path / "class").mkdir()
    for name in ("a", "b", "c", "d"):
        with zipfile.ZipFile(tmp_path / "class" / f"{name}.zip", "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{name}.py", ALICE.read_text() + "#" * (2 * 2**20))
    subs = {s.id: s for s in load([tmp_path / "class"], LESSON)}
    assert subs["a"].cells and subs["b"].cells
    assert "c.zip was not unpacked whole" in subs["c"].error and "d.zip was not unpacked:" in subs["d"].error
    assert all("config.UNZIP_BYTES" in subs[n].error for n in "cd")
