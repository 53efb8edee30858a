"""A stand-in for Graphviz's `dot`, put first on PATH: a shell script that behaves as a test needs (sleeps,
fails, says what limits it runs under), with the drawings already made forgotten, so that every graph is
drawn by it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from autograder.report import png, svg


@pytest.fixture
def fake_dot(tmp_path, monkeypatch):
    """fake_dot(script) writes `dot` (a /bin/sh script) first on PATH and returns its folder, where the
    script may leave files."""

    def install(script: str) -> Path:
        folder = tmp_path / "fake-dot"
        folder.mkdir(exist_ok=True)
        dot = folder / "dot"
        dot.write_text("#!/bin/sh\n" + script)
        dot.chmod(dot.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
        return folder

    monkeypatch.setattr(svg, "_drawn", {})
    monkeypatch.setattr(png, "_graphs", {})
    return install
