"""Is the course's release named in one place, and does the repository have it?

autograder/__init__.py holds the version, the repository and what follows from them: the tag RELEASE, the
address the student notebooks' set-up cell installs from (PACKAGE_URL) and the wheel `make dist` writes.
These tests fail when a copy disagrees (a set-up cell generated from another version, a link of the site
or of a document naming another tag or wheel), when changing REPOSITORY (a fork) or __version__ is not
enough to move the notebooks and the site's Binder and Colab links, and when the repository has no tag
RELEASE holding this version.
"""

from __future__ import annotations

import ast
import json
import re
import runpy
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

import autograder
from tests.conftest import ROOT
from tools.make_student import SETUP_ID, setup_cell

OWNER_REPO = autograder.REPOSITORY.removeprefix("https://github.com/")
LESSON = "02-custom-functions"


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def tracked(*suffixes: str) -> list[str]:
    return [p for p in git("ls-files").stdout.split() if p.endswith(suffixes) or Path(p).name in suffixes]


def setup_cell_disagreements(paths: list[Path]) -> list[str]:
    """The student notebooks among `paths` whose first cell is not the set-up cell of this release."""
    expected = setup_cell().source
    wrong = []
    for path in paths:
        first = nbformat.read(path, as_version=4).cells[0]
        if first.get("id") != SETUP_ID or first.source != expected:
            wrong.append(path.name)
    return wrong


# What names a release: a tag, a file of `make dist`, a pin, an address into the repository or its
# Binder and Colab launch links (the reference after the owner/name).
TAG = re.compile(r"(?<![\w.-])v(\d+\.\d+\.\d+\w*)\b")
DIST_FILE = re.compile(r"autograd_course-(\d[\w.]*?)(?:-py3-none-any\.whl|\.tar\.gz)")
PIN = re.compile(r"autograd-course\s*==\s*(\d[\w.]*)")
REF = re.compile(re.escape(autograder.REPOSITORY) + r"/(?:archive|blob|tree|releases/tag|releases/download)/"
                 r"([^/\s)\"'>#?\\]+)")
LAUNCH = re.compile(r"(?:colab\.research\.google\.com/github/|mybinder\.org/v2/gh/)"
                    + re.escape(OWNER_REPO) + r"/(?:blob/)?([^/\s)\"'?\\]+)")


def other_releases(text: str) -> list[str]:
    """What `text` names of a release other than this one (documents may also link `main`)."""
    version, release = autograder.__version__, autograder.RELEASE
    found = [f"v{v}" for v in TAG.findall(text) if v != version]
    found += [m.group(0) for m in DIST_FILE.finditer(text) if m.group(1) != version]
    found += [m.group(0) for m in PIN.finditer(text) if m.group(1) != version]
    found += [m.group(0) for m in REF.finditer(text)
              if re.sub(r"\.(zip|tar\.gz)$", "", m.group(1)) not in (release, "main")]
    found += [m.group(0) for m in LAUNCH.finditer(text) if m.group(1) != release]
    return found


def readable(path: Path) -> str:
    """A file's text; of a notebook, its cells' sources (outputs are computed: a plot's SVG names the
    Matplotlib version that drew it); of a broken example notebook, its text."""
    text = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        try:
            return "\n".join(cell.source for cell in nbformat.reads(text, as_version=4).cells)
        except (nbformat.reader.NotJSONError, AttributeError, KeyError):
            pass
    return text


def test_version_and_release_are_named_in_one_place():
    """Do the package version, the notebooks' install address, the wheel's name and the site's launch links
    and repository button all come from autograder/__init__.py, and does no other file of code name the
    repository?"""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "autograder.__version__"}
    assert autograder.RELEASE == f"v{autograder.__version__}"
    assert autograder.PACKAGE_URL == f"{autograder.REPOSITORY}/archive/{autograder.RELEASE}.zip"
    assert autograder.WHEEL == f"autograd_course-{autograder.__version__}-py3-none-any.whl"
    conf = runpy.run_path(str(ROOT / "site" / "conf.py"))
    assert conf["launch_url"]("colab", LESSON) == (
        f"https://colab.research.google.com/github/{OWNER_REPO}/blob/{autograder.RELEASE}/course/{LESSON}.ipynb")
    assert conf["launch_url"]("binder", LESSON) == (
        f"https://mybinder.org/v2/gh/{OWNER_REPO}/{autograder.RELEASE}?urlpath=lab/tree/course/{LESSON}.ipynb")
    theme = conf["html_theme_options"]  # the theme's own launch buttons and repository button
    assert theme["repository_url"] == autograder.REPOSITORY
    assert theme["repository_branch"] == autograder.RELEASE
    code = tracked(".py", ".toml", ".yml", ".sh", ".cfg", "Makefile", "postBuild")
    naming = [p for p in code if autograder.REPOSITORY in (ROOT / p).read_text(errors="replace")]
    assert naming == ["autograder/__init__.py"]


def test_student_notebooks_install_this_release():
    """Is the first cell of every course/ notebook the set-up cell of this version (make student)?"""
    paths = sorted((ROOT / "course").glob("*.ipynb"))
    assert paths and setup_cell_disagreements(paths) == [], "run `make student`"
    first = nbformat.read(paths[0], as_version=4).cells[0].source
    assert f'"{autograder.PACKAGE_URL}"' in first and f"/path/to/{autograder.WHEEL}" in first


def test_no_document_names_another_release():
    """Do the README, the docs, the site's pages, the notebooks, postBuild and environment.yml name no
    other tag, wheel, pin or launch reference than this release's (tests/ build theirs from the setting)?"""
    kinds = (".md", ".py", ".ipynb", ".yml", ".toml", ".cfg", ".sh", ".txt", ".j2", ".html", "Makefile",
             "postBuild")
    files = [p for p in tracked(*kinds) if not p.startswith("tests/")]
    assert "README.md" in files and "postBuild" in files
    found = {p: other_releases(readable(ROOT / p)) for p in files}
    assert {p: names for p, names in found.items() if names} == {}


def test_other_releases_are_found():
    """Does the scan above see a stale tag, wheel, pin, archive or launch link, and let this release's and
    links to `main` through?"""
    other = "9.9.9"
    stale = (f"git tag v{other}; pip install autograd-course=={other} dist/autograd_course-{other}.tar.gz "
             f"{autograder.REPOSITORY}/archive/v{other}.zip "
             f"https://colab.research.google.com/github/{OWNER_REPO}/blob/main/course/x.ipynb "
             f"https://mybinder.org/v2/gh/{OWNER_REPO}/v{other}?urlpath=lab")
    found = other_releases(stale)
    assert set(found) == {"v9.9.9", "autograd_course-9.9.9.tar.gz", "autograd-course==9.9.9",
                          f"{autograder.REPOSITORY}/archive/v9.9.9.zip",
                          f"colab.research.google.com/github/{OWNER_REPO}/blob/main",
                          f"mybinder.org/v2/gh/{OWNER_REPO}/v9.9.9"}, found
    fine = (f"{autograder.PACKAGE_URL} {autograder.WHEEL} {autograder.REPOSITORY}/blob/main/docs/x.md "
            f"https://mybinder.org/v2/gh/{OWNER_REPO}/{autograder.RELEASE}?urlpath=lab python3.11 v2/gh")
    assert other_releases(fine) == []


def forked(tmp_path: Path, **values: str) -> dict:
    """The set-up cell and the site's links where autograder/__init__.py has other `values` (REPOSITORY,
    __version__): a copy of it, edited, imported before the repository's package."""
    source = (ROOT / "autograder" / "__init__.py").read_text()
    for name, value in values.items():
        source, count = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", source, count=1, flags=re.MULTILINE)
        assert count == 1, f"autograder/__init__.py has no line `{name} = ...`"
    (tmp_path / "autograder").mkdir(parents=True)
    (tmp_path / "autograder" / "__init__.py").write_text(source)
    script = f"""if True:
        import json, runpy
        import autograder
        from tools.make_student import setup_cell
        conf = runpy.run_path("{ROOT / 'site' / 'conf.py'}")
        print(json.dumps({{"package": autograder.__file__, "setup": setup_cell().source,
                          "colab": conf["launch_url"]("colab", "{LESSON}"),
                          "binder": conf["launch_url"]("binder", "{LESSON}"),
                          "theme": [conf["html_theme_options"][k]
                                    for k in ("repository_url", "repository_branch")]}}))
    """
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{ROOT}"}, check=True)
    seen = json.loads(result.stdout)
    assert Path(seen["package"]).parent == tmp_path / "autograder"
    return seen


def test_a_fork_changes_one_value(tmp_path):
    """With only REPOSITORY changed, do the set-up cell and the site's Binder, Colab and repository links
    all name the fork, and does a new __version__ move them all to its tag and wheel?"""
    fork = forked(tmp_path / "fork", REPOSITORY="https://github.com/a-school/autograd-course-2027")
    release = autograder.RELEASE
    assert f'"https://github.com/a-school/autograd-course-2027/archive/{release}.zip"' in fork["setup"]
    assert autograder.REPOSITORY not in fork["setup"]
    assert fork["colab"] == ("https://colab.research.google.com/github/a-school/autograd-course-2027/blob/"
                             f"{release}/course/{LESSON}.ipynb")
    assert fork["binder"].startswith(f"https://mybinder.org/v2/gh/a-school/autograd-course-2027/{release}?")
    assert fork["theme"] == ["https://github.com/a-school/autograd-course-2027", release]

    bumped = forked(tmp_path / "bumped", __version__="0.2.0")
    assert f'"{autograder.REPOSITORY}/archive/v0.2.0.zip"' in bumped["setup"]
    assert "/path/to/autograd_course-0.2.0-py3-none-any.whl" in bumped["setup"]
    assert "/blob/v0.2.0/course/" in bumped["colab"] and f"/{OWNER_REPO}/v0.2.0?" in bumped["binder"]
    assert bumped["theme"] == [autograder.REPOSITORY, "v0.2.0"]
    assert other_releases(bumped["setup"] + bumped["colab"] + bumped["binder"]) != []

    # course/ generated before the bump disagrees with the bumped set-up cell, as `make student` would fix.
    stale = tmp_path / "stale.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(bumped["setup"], id=SETUP_ID)])
    nbformat.write(nb, stale)
    assert setup_cell_disagreements([stale]) == ["stale.ipynb"]


def version_at(ref: str) -> str | None:
    """autograder.__version__ as committed at `ref`."""
    shown = git("show", f"{ref}:autograder/__init__.py")
    for node in ast.parse(shown.stdout).body if shown.returncode == 0 else []:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["__version__"]:
            return ast.literal_eval(node.value)
    return None


def test_the_repository_has_the_release_tag():
    """Does the repository have the tag the notebooks install from and the site's links open, holding this
    version, with the student notebooks (installing that same release) and Binder's files?"""
    if git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone has only the commits it fetched and not their tags: the release tag "
                    "cannot be looked for here (a full clone runs this test)")
    if not git("tag", "--list").stdout.strip():
        pytest.skip("this clone carries no tag at all (a clone of the branch alone): the release tag cannot "
                    "be looked for here (`git fetch --tags`, or a full clone, runs this test)")
    release = autograder.RELEASE
    assert git("tag", "--list", release).stdout.split() == [release], (
        f"the repository has no tag {release}, which the student notebooks install from "
        f"({autograder.PACKAGE_URL}) and the site's Binder and Colab links open. On the release commit: "
        f"git tag {release} && git push origin {release} (a new version: bump __version__ first).")
    assert version_at(release) == autograder.__version__, (
        f"at the tag {release}, autograder/__init__.py says __version__ = {version_at(release)!r}")
    names = git("ls-tree", "--name-only", f"{release}:course").stdout.split()
    assert f"{LESSON}.ipynb" in names, f"the tag {release} has no course/{LESSON}.ipynb for Colab to open"
    for name in names:
        first = nbformat.reads(git("show", f"{release}:course/{name}").stdout, as_version=4).cells[0]
        assert f'"{autograder.PACKAGE_URL}"' in first.source, f"course/{name} at {release} installs another"
    for binder in ("postBuild", "environment.yml"):
        assert git("cat-file", "-e", f"{release}:{binder}").returncode == 0, f"{release} has no {binder}"
