"""Where the batch grader's time goes: `python -m tools.bench --overhead`.

Measures, on this machine and at its present load (printed):
- the grader's start (a whole `grade` run of one empty submission, and its parts: import torch, warm up),
  and what it spends before its first worker starts;
- a fork of the warmed grader (each submission's worker costs one);
- the CPU and wall time of one submission in the sandbox (worker, its per-problem children, clean-up),
  for an empty one (import torch only: the sandbox's fixed cost), a right one (alice.py: fixed cost +
  checks) and a wrong one (bob.py);
- in one process, without the sandbox, for alice and bob: running the cells, probing each problem (and
  how much of that is the probe's guard against patching), the JSON round trip, judging, and the
  feedback page;
- a notebook's first check() and its page, in a fresh interpreter, beyond its `import torch`;
- Gradescope's run_autograder for one right submission (alice.py), in a root laid out as Gradescope's,
  with the bytecode its image's setup.sh writes, against `import torch` alone, both run in turn.
"""

from __future__ import annotations

import cProfile
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = str(ROOT / ".venv" / "bin" / "python")
ASSIGNMENT = "custom-functions"
EXAMPLES = ROOT / "examples" / ASSIGNMENT


def _grade(folder: Path, jobs: int) -> tuple[float, float]:
    """Wall and CPU seconds of one `grade` run over a folder."""
    out = Path(tempfile.mkdtemp(prefix="overhead-out-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([PY, "-m", "autograder", "grade", "--assignment", ASSIGNMENT, "--out", str(out), "--force",
                    "--quiet", "--jobs", str(jobs), str(folder)], cwd=ROOT, check=True,
                   env=dict(os.environ, PYTHONHASHSEED="0"))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["rm", "-rf", str(out)], check=False)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# `grade` of one folder, telling when its first worker starts: the grader's own CPU and the wall clock
# since its `import torch` (the clean parent warms up meanwhile, in a process of its own)
FIRST_WORKER = """
import sys, time
from autograder.sandbox.parent import import_torch
t0, c0 = time.perf_counter(), time.process_time()
import_torch()
t1, c1 = time.perf_counter(), time.process_time()
from autograder.sandbox import job
started = job.Job.started
def first(self, *args, **kwargs):
    if job.Job.started is first:
        print("first-worker", c1 - c0, time.process_time() - c1, time.perf_counter() - t1, file=sys.stderr)
        job.Job.started = started
    return started(self, *args, **kwargs)
job.Job.started = first
from autograder.cli import main
main(["grade", "--assignment", "custom-functions", "--out", sys.argv[2], "--force", "--quiet", sys.argv[1]])
"""


def startup(k: int = 3) -> None:
    work = Path(tempfile.mkdtemp(prefix="overhead-"))
    (work / "empty.py").write_text("import torch\n")
    wall, cpu = _grade(work, 1)
    print(f"a whole `grade` run of one empty submission: {wall:.2f} s wall, {cpu:.2f} s CPU (start-up, "
          f"warm-up, one submission, exit)")
    runs = [subprocess.run([PY, "-c", FIRST_WORKER, str(work), str(work.with_name(work.name + "-out"))],
                           cwd=ROOT, capture_output=True, text=True, check=True) for _ in range(k)]
    said = [next(line.split()[1:] for line in r.stderr.splitlines() if line.startswith("first-worker "))
            for r in runs]
    torch_cpu, grader_cpu, wall = (statistics.median(float(words[i]) for words in said) for i in range(3))
    print(f"before its first worker starts, a `grade` run spends {grader_cpu:.2f} s of the grader's CPU "
          f"beyond import torch ({torch_cpu:.2f} s), {wall:.2f} s on the wall clock; medians of {k}")
    subprocess.run(["rm", "-rf", str(work), str(work.with_name(work.name + "-out"))], check=False)


def _workers_cpu(started: int, contained: bool) -> float:
    """CPU seconds of the workers the clean parent has reaped so far (it reaps each one as it ends, when
    the grader asks; a worker's init reaps the worker first): its children's user and system time, fields
    16 and 17 of /proc/PID/stat. `started`: the process the grader started, whose one child is the clean
    parent in a container (it is the clean parent without one)."""
    found = Path(f"/proc/{started}/task/{started}/children").read_text().split() if contained else []
    parent = int(found[0]) if found else started
    fields = Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def per_submission(assignment, k: int = 12) -> None:
    """The CPU each submission's sandbox costs (its worker and the worker's children), read from the clean
    parent's children's time as each one finishes, one worker at a time, through the grader's pipeline;
    and its wall time."""
    from autograder.intake.loader import Submission
    from autograder.pipeline import Pipeline

    with Pipeline(assignment, workers=1) as pipeline:
        for name, source in (("empty (import torch only)", "import torch"),
                             ("right (alice.py)", (EXAMPLES / "alice.py").read_text()),
                             ("wrong (bob.py)", (EXAMPLES / "bob.py").read_text())):
            subs = [Submission(str(i), None, [source]) for i in range(k)]
            cpu, wall = [], []
            contained = pipeline.isolation == "container"
            last = _workers_cpu(pipeline.pool.server.pid, contained)
            for _, graded in pipeline.grade(subs):
                now = _workers_cpu(pipeline.pool.server.pid, contained)
                cpu.append(now - last)
                wall.append(graded.seconds)
                last = now
            print(f"one submission in the sandbox, {name}: median {statistics.median(cpu) * 1e3:.0f} ms CPU "
                  f"(min {min(cpu) * 1e3:.0f}), {statistics.median(wall) * 1e3:.0f} ms wall "
                  f"(min {min(wall) * 1e3:.0f}); {k} submissions, one worker")


def in_process() -> None:
    t0 = time.perf_counter()
    import torch  # noqa: F401

    t1 = time.perf_counter()
    from autograder.course import find_assignment
    from autograder.pipeline import problem_jobs

    assignment = find_assignment(ASSIGNMENT)
    problem_jobs(assignment, 0)  # the references measured once, as the grader does
    t2 = time.perf_counter()
    print(f"in the grader: import torch {t1 - t0:.2f} s, the rest of the warm-up {t2 - t1:.2f} s")
    per_submission(assignment)

    forks = []
    for _ in range(30):
        t = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        forks.append(time.perf_counter() - t)
    status = Path("/proc/self/status").read_text().splitlines()
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
    print(f"fork + exit + wait of the warmed grader ({rss // 1024} MiB resident): median "
          f"{statistics.median(forks) * 1e3:.1f} ms; a submission costs one (its worker), plus the clean-up")

    from autograder.judge.plan import probe
    from autograder.judge.reference import encoded_cases, expectations
    from autograder.measure.snapshot import Snapshot, activate, guard
    from autograder.pipeline import verdicts_for
    from autograder.report.pages import feedback_page
    from autograder.sandbox import Outcome

    snapshot = Snapshot()
    activate(snapshot)  # as in a worker: the grader's state put back after every call
    cases = {p.name: encoded_cases(p, 0) for p in assignment.problems}
    expected = {p.name: expectations(p, 0) for p in assignment.problems}
    for who in ("alice", "bob"):
        source = (EXAMPLES / f"{who}.py").read_text()
        cpu = time.process_time
        t = cpu()
        namespace = {"__name__": "__main__"}
        exec(compile(source, f"{who}.py", "exec", dont_inherit=True), namespace)  # noqa: S102 - our own example
        cells = cpu() - t
        for p in assignment.problems:  # first calls out of the way
            probe(p, namespace, cases[p.name], 0, expected[p.name])
        outcome, probes, wire = Outcome(), {}, 0.0
        for p in assignment.problems:
            t = cpu()
            snapshot.restore()
            data = probe(p, namespace, cases[p.name], 0, expected[p.name])
            snapshot.restore()
            probes[p.name] = cpu() - t
            t = cpu()
            outcome.data[p.name] = json.loads(json.dumps(data))
            wire += cpu() - t
        profile = cProfile.Profile()
        profile.enable()
        for p in assignment.problems:
            probe(p, namespace, cases[p.name], 0, expected[p.name])
        profile.disable()
        calls = sum(v[1] for k, v in _stats(profile).items() if k[2] == "guard")
        t = cpu()
        for _ in range(200):
            guard()
        per = (cpu() - t) / 200
        t = cpu()
        results = verdicts_for(assignment, outcome, 0)
        judging = cpu() - t
        t = cpu()
        feedback_page(who, assignment.name, results, [], "")
        first = cpu() - t
        t = cpu()
        feedback_page(who, assignment.name, results, [], "")
        again = cpu() - t
        total = sum(probes.values())
        print(f"{who} ({sum(not r.passed for r in results)} checks failed), CPU in one process: cells "
              f"{cells * 1e3:.0f} ms; probes {total * 1e3:.0f} ms ("
              + ", ".join(f"{n} {s * 1e3:.0f}" for n, s in probes.items())
              + f"; guard(): {calls} calls x {per * 1e3:.3f} ms = {calls * per * 1e3:.0f} ms); JSON "
              f"{wire * 1e3:.0f} ms; judging {judging * 1e3:.0f} ms; feedback page {first * 1e3:.0f} ms "
              f"(again, graphs cached: {again * 1e3:.0f} ms)")


def _stats(profile: cProfile.Profile) -> dict:
    import pstats

    return pstats.Stats(profile).stats


FIRST_CHECK = """
import sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
exec(open(sys.argv[1]).read())
from autograder import check
report = check(MyReLU)
report._repr_html_()
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def first_check(k: int = 3) -> None:
    """check(MyReLU) and its HTML in a fresh interpreter, k times, for a right MyReLU (alice.py) and a
    wrong one (bob.py, whose page quotes PyTorch's gradcheck): the seconds beyond import torch."""
    for kind, who in (("right", "alice"), ("wrong", "bob")):
        runs = [subprocess.run([PY, "-c", FIRST_CHECK, str(EXAMPLES / f"{who}.py")], cwd=ROOT,
                               capture_output=True, text=True, check=True) for _ in range(k)]
        beyond = [float(r.stdout.split()[-1]) for r in runs]
        torch_s = [float(r.stdout.split()[-2]) for r in runs]
        print(f"a notebook's first check() and its page, {kind} ({who}.py): median "
              f"{statistics.median(beyond):.2f} s beyond import torch ({statistics.median(torch_s):.2f} s); "
              f"{k} fresh interpreters")


def _cpu_of(command: list[str], **kwargs) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def gradescope(k: int = 3, python: str | None = None) -> None:
    """run_autograder on one right submission, k times, each beside a plain `import torch`, with `python`
    (default: .venv's). Where it or its packages are not world-readable (.venv's Python under a home of
    mode 700), run_autograder takes the path of such an image: the clean parent loads what workers cannot."""
    from autograder.gradescope.build import unpack
    from autograder.gradescope.run import world_readable

    py = python or PY

    work = Path(tempfile.mkdtemp(prefix="overhead-gradescope-"))
    try:
        archive = work / "a.zip"
        subprocess.run([PY, "-m", "autograder", "gradescope", "--assignment", ASSIGNMENT, "--out",
                        str(archive)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        root = work / "autograder"
        for folder in ("source", "submission", "results"):
            (root / folder).mkdir(parents=True)
        unpack(archive, root / "source")
        shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
        shutil.copy(EXAMPLES / "alice.py", root / "submission" / "alice.py")
        subprocess.run([py, "-m", "compileall", "-q", str(root / "source")], check=True,
                       stdout=subprocess.DEVNULL)  # as the image's setup.sh does
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOGRADER", "PYTHON"))}
        env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=py)
        ours, alone = [], []
        for _ in range(k):
            ours.append(_cpu_of([str(root / "run_autograder")], cwd=root, env=env))
            # without the interpreter's teardown, which run_autograder skips too (quick_exit.py)
            alone.append(_cpu_of([py, "-c", "import os, torch; os._exit(0)"]))
        score = json.loads((root / "results" / "results.json").read_text())["score"]
        wall, cpu = (statistics.median(x[i] for x in ours) for i in (0, 1))
        torch_cpu = statistics.median(x[1] for x in alone)
        print(f"Gradescope's run_autograder, one right submission (score {score:g}): median {wall:.2f} s "
              f"wall, {cpu:.2f} s CPU; `import torch` alone {torch_cpu:.2f} s CPU, so "
              f"{cpu - torch_cpu:.2f} s CPU beyond it; {k} runs each, in turn, with {py}"
              f"{'' if world_readable(Path(py)) else ' (not world-readable: the path of such an image)'}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(gradescope_python: str | None = None) -> int:
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)")
    startup()
    in_process()
    first_check()
    gradescope(python=gradescope_python)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
