"""An ordinary user, as most instructors grade: a real account with no capability at all, its own copy of
the project in its home and its own virtual environment there, built from a Python every user may run.

The account is made once per machine (`useradd`); the copy of the project is refreshed at every test
session; the virtual environment is rebuilt when requirements.txt or pyproject.toml changes (a stamp of
their hash), so that only the first session on a machine pays for the packages.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

# Two checkouts tested at once on one machine each name their own (AUTOGRADER_TEST_USER): the copy of
# the project in the account's home is one checkout's only.
NAME = os.environ.get("AUTOGRADER_TEST_USER", "autograder-test")
LOCK = f"/tmp/{NAME}-user.lock"  # taken by whichever test process prepares the user
# What the copy leaves out: the root's environment, the history, what builds and tests leave behind.
IGNORED = shutil.ignore_patterns(".venv", ".venv-*", ".git", "build", "__pycache__", ".pytest_cache",
                                 ".ruff_cache", "node_modules", "*.egg-info", ".jupyter_cache",
                                 "demo-feedback")


@dataclass(frozen=True)
class User:
    uid: int
    gid: int
    home: Path
    project: Path
    python: Path

    def run(self, args: list, cwd: Path | None = None, timeout: float = 1800,
            env: dict | None = None) -> subprocess.CompletedProcess:
        """args run as this user, with no capability (none inherited, none to gain) and its own HOME."""
        command = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups",
                   "--inh-caps=-all", "--bounding-set=-all", *map(str, args)]
        pip = pip_settings()
        environment = pip | {"HOME": str(self.home), "PATH": "/usr/local/bin:/usr/bin:/bin",
                             "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"} | (env or {})
        return subprocess.run(command, cwd=cwd or self.home, env=environment, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def popen(self, args: list, cwd: Path | None = None, **pipes) -> subprocess.Popen:
        """args started as this user, as run() runs them, without waiting (stdout piped unless told)."""
        command = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups",
                   "--inh-caps=-all", "--bounding-set=-all", *map(str, args)]
        return subprocess.Popen(command, cwd=cwd or self.home, text=True,
                                env={"HOME": str(self.home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                                **({"stdout": subprocess.PIPE} | pipes))

    def own(self, path: Path) -> Path:
        """Gives path (a folder the tests made for this user) to the user, with everything in it."""
        for folder, _, files in os.walk(path):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.lchown(name, self.uid, self.gid)
        return path


def pip_settings() -> dict[str, str]:
    """The tests' own pip settings (their configuration files and PIP_ variables) as PIP_ variables, so
    that the user's pip installs from the same package sources (a local wheel of torch's CPU build
    rather than a download of gigabytes)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            check=False).stdout
    found = {}
    for line in listed.splitlines():
        key, _, value = line.partition("=")
        name = key.split(".", 1)[-1].strip()
        if name and value:
            found["PIP_" + name.upper().replace("-", "_")] = value.strip().strip("'\"")
    return found | {k: v for k, v in os.environ.items() if k.startswith("PIP_")}


def base_python() -> str | None:
    """A Python of at least 3.11 with venv that every user may run (not one under /root)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python3.12",
                      "/usr/bin/python3.11"):
        if not os.path.exists(candidate) or not os.stat(os.path.realpath(candidate)).st_mode & 0o005:
            continue
        check = "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"
        probe = subprocess.run([candidate, "-c", check], capture_output=True, check=False)
        if probe.returncode == 0:
            return candidate
    return None


def why_not() -> str:
    """Why the tests cannot grade as an ordinary user here ('' when they can)."""
    if os.geteuid() != 0:
        return "the tests make an ordinary user only when they run as root"
    for program in ("useradd", "setpriv"):
        if shutil.which(program) is None:
            return f"{program} is missing"
    if base_python() is None:
        return ("no Python 3.11+ with venv that an ordinary user may run "
                "(Debian: apt-get install python3-venv)")
    return ""


def _stamp() -> str:
    digest = hashlib.sha256()
    for name in ("requirements.txt", "pyproject.toml"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def ordinary_user() -> User:
    """The account, with a copy of the project as it is now and an up-to-date environment. Test files
    running at once (pytest-xdist) call this together: one lock makes them take turns, and the copy is
    made again only when the project changed, never under a grader that runs from it."""
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _prepared()


def _prepared() -> User:
    try:
        entry = pwd.getpwnam(NAME)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", NAME], check=True,
                       capture_output=True)
        entry = pwd.getpwnam(NAME)
    home = Path(entry.pw_dir)
    home.chmod(0o700)  # the user's own secrets live here: only it may look
    user = User(entry.pw_uid, entry.pw_gid, home, home / "project", home / "venv" / "bin" / "python")
    copied, now = user.project / ".copied", _project_stamp()
    if not copied.exists() or copied.read_text() != now:
        shutil.rmtree(user.project, ignore_errors=True)
        shutil.copytree(ROOT, user.project, ignore=IGNORED, symlinks=True)
        copied.write_text(now)
        user.own(user.project)
    stamp = home / "venv" / ".stamp"
    if not stamp.exists() or stamp.read_text() != _stamp():
        shutil.rmtree(home / "venv", ignore_errors=True)
        for step in ([base_python(), "-m", "venv", home / "venv"],
                     [user.python, "-m", "pip", "install", "-q", "-c", user.project / "requirements.txt",
                      "-e", user.project]):
            done = user.run(step, timeout=1800)
            assert done.returncode == 0, f"{step}: {done.stderr[-2000:]}"
        stamp.write_text(_stamp())
        os.chown(stamp, user.uid, user.gid)
    return user


def _project_stamp() -> str:
    """What the copy is a copy of: every file the copy takes, by path, size and modification time."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(set(dirs) - IGNORED(folder, dirs))
        for name in sorted(set(files) - IGNORED(folder, files)):
            info = os.lstat(os.path.join(folder, name))
            digest.update(f"{os.path.relpath(os.path.join(folder, name), ROOT)} {info.st_size} "
                          f"{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()
