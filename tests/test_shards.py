"""Can several machines grade one class into one shared --out at once (`grade --shard I/N`, or the index
and count of a Slurm job array or a Kubernetes Indexed Job), and does a plain `grade` afterwards grade
nothing again and write the class's files?

The two shards run at once for certain: a submission of shard 0 waits at import until the test creates
a file, which it does only once shard 1 has finished. Nothing here measures time.
"""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.selection import SelectionError, Shard, parse_shard
from tests.conftest import EXAMPLES, ROOT
from tests.test_resume import wait_for


def test_shard_from_the_command_line_and_the_environment():
    """I/N as given; Slurm's task id less its first id, with its count; Kubernetes' index with a count."""
    assert parse_shard("1/3", {}) == Shard(1, 3)
    slurm = {"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "2"}
    assert parse_shard("auto", slurm) == Shard(1, 2)
    assert parse_shard("auto/4", {"JOB_COMPLETION_INDEX": "3"}) == Shard(3, 4)
    for text, env, said in (("3/3", {}, "numbered 0 to 2"), ("auto", {"JOB_COMPLETION_INDEX": "0"}, "auto/N"),
                            ("auto", {}, "found neither"), ("half", {}, "not 'half'")):
        with pytest.raises(SelectionError, match=said):
            parse_shard(text, env)


def test_shards_cover_the_class_once():
    shards = [Shard(i, 3) for i in range(3)]
    assert [sum(s.takes(p) for s in shards) for p in range(10)] == [1] * 10


def command(out: Path, folder: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", "--assignment", "custom-functions",
            "--out", str(out), "--jobs", "1", "--load-timeout", "900", "--quiet", *extra, str(folder)]


@pytest.mark.slow
def test_two_shards_at_once_then_a_plain_grade(tmp_path):
    release = Path(sys.prefix) / f".shard-release-{os.getpid()}"  # a worker's container shows the venv
    release.unlink(missing_ok=True)
    alice, bob = (EXAMPLES / "alice.py").read_text(), (EXAMPLES / "bob.py").read_text()
    waits = alice + (f"\nimport os\nimport time\n\nwhile not os.path.exists({str(release)!r}):\n"
                     f"    time.sleep(0.05)\n")
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    for sid, source in (("a0_waits", waits), ("b1", bob), ("c2", alice), ("d3", bob)):
        (folder / f"{sid}.py").write_text(source)
    slurm = {**os.environ, "SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"}
    kubernetes = {**os.environ, "JOB_COMPLETION_INDEX": "0"}
    first = subprocess.Popen(command(out, folder, "--shard", "auto/2"), cwd=ROOT, env=kubernetes,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen(command(out, folder, "--shard", "auto"), cwd=ROOT, env=slurm,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, said = second.communicate(timeout=1800)
        assert second.returncode == 0, said[-3000:]
        assert first.poll() is None  # shard 0 is still grading: the two ran at once
        assert "Shard 1/2 is done" in said.replace("\n  ", " ")
        assert sorted(p.parent.name for p in out.glob("*/results.json")) == ["b1", "d3"]
        assert not (out / "grades.csv").exists()
        release.touch()
        wait_for(lambda: first.poll() is not None, "shard 0 to finish")
        assert first.returncode == 0, first.stderr.read()[-3000:]
    finally:
        release.unlink(missing_ok=True)
        for process in (first, second):
            if process.poll() is None:
                process.kill()
            process.wait()
    assert not list(out.glob("**/.*.tmp"))
    final = subprocess.run(command(out, folder), cwd=ROOT, capture_output=True, text=True, timeout=1800,
                           check=False)
    assert final.returncode == 0, final.stderr[-3000:]
    assert "nothing to grade" in final.stderr.replace("\n  ", " ")
    with open(out / "grades.csv", newline="") as f:
        scores = {r["submission"]: r["score"] for r in csv.DictReader(f)}
    assert scores == {"a0_waits": "50", "b1": scores["d3"], "c2": "50", "d3": scores["b1"]}
    assert scores["b1"] != "50"


def doc_block(language: str, holding: str) -> str:
    text = (ROOT / "docs" / "instructors.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split(f"```{language}\n")[1:]]
    return next(b for b in blocks if holding in b)


def test_the_docs_slurm_script_and_kubernetes_job_are_the_command_line():
    """Do the docs' job array script and Indexed Job run `grade --shard` as the command line takes it, with
    as many shards as the scheduler starts?"""
    import shlex

    import yaml

    from autograder.cli import build_parser

    script = doc_block("bash", "#SBATCH --array")
    array = next(line for line in script.splitlines() if line.startswith("#SBATCH --array="))
    first, last = map(int, array.split("=")[1].split("-"))
    command = shlex.split(next(line for line in script.splitlines() if "autograder grade" in line))
    args = build_parser().parse_args(command[3:])
    env = {"SLURM_ARRAY_TASK_ID": str(last), "SLURM_ARRAY_TASK_MIN": str(first),
           "SLURM_ARRAY_TASK_COUNT": str(last - first + 1)}
    assert parse_shard(args.shard, env) == Shard(last - first, last - first + 1)

    job = yaml.safe_load(doc_block("yaml", "completionMode: Indexed"))
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    args = build_parser().parse_args(command[3:])
    completions = job["spec"]["completions"]
    shard = parse_shard(args.shard, {"JOB_COMPLETION_INDEX": str(completions - 1)})
    assert shard == Shard(completions - 1, completions)
