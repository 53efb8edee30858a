"""What the tests share: where the repository and its example class are, the command line run as an
instructor runs it, and a notebook written from its cells.

Test modules import these names (`from tests.conftest import ROOT, autograder`); tests/ is a package, so
that this module is imported once, whichever test imports it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "custom-functions"  # alice.py right, bob.py wrong, carol and erin notebooks
ALICE = EXAMPLES / "alice.py"
HIDDEN_TESTS = ROOT / "docs" / "hidden_tests_example.py"  # the documented instructor's file (--extra)
# The fields Gradescope reads in a results.json (both the local batch's and run_autograder's follow them).
GRADESCOPE_SCHEMA = json.loads((ROOT / "tests" / "gradescope" / "results.schema.json").read_text())
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (tests marked `browser`: the site, report.html)."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("Chromium is not installed: run `make setup-browser` (it installs Debian's chromium).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def autograder(*args, check: bool = True, cwd: Path = ROOT, timeout: float = 900,
               env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m autograder ARGS`, run from the repository as an instructor runs it; with check, it must
    exit with status 0 (the end of its stderr says why not)."""
    result = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True,
                            text=True, cwd=cwd, timeout=timeout, env=env, check=False)
    if check:
        assert result.returncode == 0, result.stderr[-3000:]
    return result


def notebook(path: Path, *cells: str, title: str | None = None) -> Path:
    """A notebook of these code cells at path (after a markdown cell `title`, if given)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(title)] if title else []
    nb.cells += [nbformat.v4.new_code_cell(source) for source in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path
