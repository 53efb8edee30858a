"""Does a worker learn nothing of the machine's network or of other processes, and reach none of the
grading account's servers, in every way of grading?

One batch per way mixes two honest copies of alice.py with one submission per attack of
tests/sandbox/hostile_network/, each attack at import followed by alice's right Functions:
- net_tables: the machine's socket tables (/proc/net, /proc/self/net, /proc/1/net, every /proc/<pid>/net)
  and interfaces (/sys/class/net);
- agent_thief: the grading account's servers (tests/sandbox/socket_server.py, as an ssh-agent or a tmux
  server answers): a Unix socket by path in a folder only that account may enter and by abstract name,
  TCP on localhost; any socket it inherited; the socket families a worker never needs;
- proc_snoop: other processes' /proc entries: a program of the grading account with a token in its
  command line and another in its environment (as a deploy script's), the grader (that token in its
  environment too), every ancestor it can find and every pid in between.
Graded as root and as an ordinary user (tests/sandbox/ordinary_user.py), in a container and, where the
machine refuses namespaces (tests/sandbox/no_user_namespaces.py: as root, a seccomp filter as Docker's,
which is how Gradescope falls back too; as the user, no user namespace left), with --no-isolation; every
batch runs under tests/sandbox/survivors.py. The attacks earn nothing: each is flagged for reaching into
the grader (sockets, /proc: judge/reaching.py) and scores 0, while its measurements, read before its points
were withheld, are full marks (the attack cost its Functions nothing); the honest copies keep full marks
unflagged. No secret may reach any page. Nothing here measures time.
"""

from __future__ import annotations

import csv
import html
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.sandbox import landlock_abi
from autograder.sandbox.confine import available
from tests.conftest import ALICE, ROOT
from tests.sandbox.ordinary_user import ordinary_user, why_not

pytestmark = pytest.mark.slow

ATTACKS = ROOT / "tests" / "sandbox" / "hostile_network"
AGENT = "SECRET-AGENT-3141"  # what the servers answer
SOCKET_NAME = "SECRET-SOCKNAME-2718"  # in the path of the Unix socket (the attacks are not told it)
ABSTRACT = "SECRET-ABSTRACT-1618"  # in the abstract socket's name (likewise)
COMMAND_LINE = "SECRET-CMDLINE-1414"  # in the grading account's program's command line
TOKEN = "SECRET-ENV-1732"  # in its environment and the grader's
MODES = ["root", "user", "root-no-isolation", "user-no-isolation"]
REACHING = {"agent_thief", "net_tables", "proc_snoop"}  # flagged (judge/reaching.py, sandbox/watch.py)


class Batch:
    def __init__(self, out: Path, ids: list[str], survivors: list[str], mode: str, port: int, victim: int):
        self.out, self.ids, self.survivors, self.mode = out, ids, survivors, mode
        self.folder = out.parent / "class"
        self.port, self.victim = port, victim
        self.contained = contained(mode)

    def results(self, sid: str) -> dict:
        return json.loads((self.out / sid / "results.json").read_text())

    def measured(self, sid: str) -> list[dict]:
        """Each test as measured: for a flagged attack, before its points were withheld."""
        result = self.results(sid)
        found = (result["extra_data"].get("flagged") or {}).get("measured", {})
        return [dict(t, status="passed" if found[t["name"]][0] else "failed", score=found[t["name"]][1])
                if t["name"] in found else t for t in result["tests"]]

    def page(self, sid: str) -> str:
        return html.unescape((self.out / sid / "feedback.html").read_text())

    def visible(self, sid: str) -> str:
        shown = [t["output"] for t in self.results(sid)["tests"] if t.get("visibility") != "hidden"]
        return self.page(sid) + "\n".join(shown)

    def lines(self, sid: str, start: str) -> list[str]:
        """The lines sid printed (as its page shows them) that start with `start`."""
        printed = self.page(sid).split("What your code printed</h2><pre>", 1)[1].split("</pre>", 1)[0]
        return [line for line in printed.splitlines() if line.startswith(start)]


def _submissions(folder: Path, socket_path: Path, abstract: str, port: int, victim: int) -> list[str]:
    alice = ALICE.read_text()
    folder.mkdir()
    (folder / "alice.py").write_text(alice)
    (folder / "alice_again.py").write_text(alice)
    for attack in sorted(ATTACKS.glob("*.py")):
        code = (attack.read_text().replace("__SOCKET__", str(socket_path)).replace("__ABSTRACT__", abstract)
                .replace("__PORT__", str(port)).replace("__VICTIM__", str(victim)))
        (folder / attack.name).write_text(code + "\n" + alice)
    return sorted(p.stem for p in folder.glob("*.py"))


def contained(mode: str) -> bool:
    return not mode.endswith("no-isolation")


def _skip_reason(mode: str) -> str:
    if mode.startswith("root") and os.geteuid() != 0:
        return "grading as root needs root"
    if mode.startswith("user") and (reason := why_not()):
        return reason
    if not contained(mode) and (landlock_abi() < 1 or not available()["seccomp"]):
        return ("without a container, Landlock (other processes' /proc) and seccomp (sockets) are what "
                "stop these attacks, and this kernel lacks one")
    return ""


@pytest.fixture(scope="module", params=MODES)
def batch(request, tmp_path_factory) -> Batch:
    mode = request.param
    if reason := _skip_reason(mode):
        pytest.skip(reason)
    user = ordinary_user() if mode.startswith("user") else None
    if user is None:
        base = tmp_path_factory.mktemp(f"network-{mode}")
        python, project = Path(sys.executable), ROOT
    else:
        base = user.home / f"network-{mode}"
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir()
        python, project = user.python, user.project
    private = base / f"private-{SOCKET_NAME}"  # only the grading account may enter
    private.mkdir()
    socket_path = private / "agent.sock"
    abstract = f"{ABSTRACT}-{os.getpid()}"
    server_args = [python, project / "tests" / "sandbox" / "socket_server.py", socket_path, abstract, AGENT]
    victim_args = ["env", f"DEPLOY_TOKEN={TOKEN}", python, "-c", "import time; time.sleep(3600)",
                   COMMAND_LINE]
    if user is not None:
        user.own(base)
    private.chmod(0o700)
    start = (lambda args: subprocess.Popen(list(map(str, args)), stdout=subprocess.PIPE, text=True)) \
        if user is None else user.popen
    server, victim = start(server_args), start(victim_args)
    try:
        word, port = server.stdout.readline().split()
        assert word == "listening"
        ids = _submissions(base / "class", socket_path, abstract, int(port), victim.pid)
        if user is not None:
            user.own(base / "class")
        command = [python, "-m", "autograder", "grade", "--assignment", "custom-functions", "--out",
                   base / "out", "--load-timeout", "60", "--problem-timeout", "20", "--jobs", "3", "--quiet",
                   base / "class"]
        if not contained(mode):
            command = [python, project / "tests" / "sandbox" / "no_user_namespaces.py", *command,
                       "--no-isolation"]
        command = [python, project / "tests" / "sandbox" / "survivors.py", base / "survivors.json", *command]
        if user is None:
            run = subprocess.run(list(map(str, command)), cwd=base, capture_output=True, text=True,
                                 timeout=1800, check=False, env=os.environ | {"DEPLOY_TOKEN": TOKEN})
        else:
            run = user.run(command, cwd=base, env={"DEPLOY_TOKEN": TOKEN})
    finally:
        for process in (server, victim):
            process.kill()
            process.wait()
    assert run.returncode == 0, run.stderr[-3000:]
    assert ("WITHOUT a container" in run.stderr) == (not contained(mode)), run.stderr[-3000:]
    survivors = json.loads((base / "survivors.json").read_text())
    return Batch(base / "out", ids, survivors, mode, int(port), victim.pid)


def test_everyone_keeps_full_marks_as_measured_and_the_attacks_are_flagged(batch):
    """The attacks earn nothing and cost their Functions nothing: every check passed as measured; the
    attacks flagged with 0, the honest copies unflagged with full marks."""
    rows = {r["submission"]: r for r in csv.DictReader((batch.out / "grades.csv").open())}
    assert sorted(rows) == batch.ids
    for sid in batch.ids:
        failed = [t["name"] for t in batch.measured(sid) if t["status"] != "passed" and t["max_score"]]
        assert not failed, (sid, failed, batch.page(sid)[-2000:])
        flagged = "flagged" in batch.results(sid)["extra_data"]
        assert flagged == (sid in REACHING), sid
        full = float(rows[sid]["max_score"])
        assert full > 0 and float(rows[sid]["score"]) == (0 if flagged else full), sid
    for sid in ("net_tables", "agent_thief", "proc_snoop"):
        assert "output truncated" not in batch.page(sid), sid  # nothing it found can hide past the cut


def test_no_secret_reaches_any_page(batch):
    """Neither the servers' answer, nor the sockets' names, nor the TCP port as /proc/net/tcp writes it,
    nor the tokens of the command line and the environments. (agent_thief is told the socket's path and
    name to try them: its flag may quote its own lines, so what its source holds is no leak.)"""
    port = f"0100007F:{batch.port:04X}"
    for sid in batch.ids:
        visible = batch.visible(sid)
        source = (batch.folder / f"{sid}.py").read_text()
        for secret in (AGENT, SOCKET_NAME, ABSTRACT, COMMAND_LINE, TOKEN, port):
            assert secret in source or secret not in visible, (sid, secret)


def test_no_socket_table_of_the_machine_is_read(batch):
    """In a container every table it reads is its own namespace's or its init's, both empty; without one
    (sharing the machine's network namespace) Landlock refuses every table."""
    tables = batch.lines("net_tables", "TABLE ")
    denied = batch.lines("net_tables", "denied ")
    if batch.contained:
        assert tables and all(line.endswith(" 0 rows") for line in tables), tables
        assert any(line.startswith("TABLE /proc/1/net/unix") for line in tables), tables
    else:
        assert tables == [] and any(line.startswith("denied /proc/1/net/unix") for line in denied), denied
    assert batch.lines("net_tables", "ENTRY ") == []


def test_no_interface_of_the_machine_is_listed(batch):
    machine = set(os.listdir("/sys/class/net")) - {"lo"}
    listed = batch.lines("net_tables", "INTERFACES ")
    assert not listed or not machine & set(listed[0].split("[", 1)[1].strip("]").replace("'", "").split(", "))
    assert listed or batch.lines("net_tables", "no interfaces: ")


def test_no_server_of_the_grading_account_answers(batch):
    """The Unix socket by path and by abstract name, TCP on 127.0.0.1 and ::1: all refused (seccomp
    refuses the socket itself), no other family either; the one socket a worker holds is its channel to
    the grader (sandbox/payload.py), and connecting it elsewhere is refused too."""
    page = batch.page("agent_thief")
    assert "CONNECTED" not in page and "MADE" not in page
    (inherited,) = batch.lines("agent_thief", "inherited sockets: ")
    held = inherited.split("[", 1)[1].strip("]").split(", ") if not inherited.endswith("[]") else []
    assert len(held) <= 1, inherited
    refused = batch.lines("agent_thief", "refused ")
    assert len(refused) == 4 + len(held) + 3 + 1, refused
    assert all(line.endswith("PermissionError") for line in refused), refused


def test_no_other_process_is_read(batch):
    """In a container it sees its init (`cat`, which holds nothing) and itself; without one Landlock
    refuses every entry of every other process, the grader's and the grading account's program's."""
    read = batch.lines("proc_snoop", "READ ")
    if batch.contained:
        assert all(line.startswith("READ 1/") for line in read), read
    else:
        assert read == [], read
        assert batch.lines("proc_snoop", "refused ")[0].endswith(" read 0")
    assert not [line for line in read if line.startswith(f"READ {batch.victim}/")]


def test_nothing_survives(batch):
    assert batch.survivors == []
