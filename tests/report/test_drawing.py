"""Is a graph drawn by a `dot` that runs as a process of its own, stopped at its deadline with everything it
started, under its limits, and does a page then say which graph was not drawn and why?

`dot` here is a stand-in put first on PATH (conftest.fake_dot) that sleeps, fails or reports its limits, so
that nothing depends on how fast the machine is: a drawing that never ends is stopped at the deadline
(config.DRAW_SECONDS, as the grader uses it), and one that ends at once is drawn well within it."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from autograder import config, drawing
from autograder.measure.graphs import Graph, svg, svgs
from autograder.report.figures import picture
from autograder.report.png import PNG, figure_pngs, graph_pngs
from autograder.report.svg import graph_svgs

HONEST = {"nodes": [["a", "x\n (3)", "leaf"], ["b", "ExpBackward0", "op"]], "edges": [["a", "b"]]}
SLOW_LABEL = "TakesForeverToLayOut"
FORGED = {"nodes": [["a", "x\n (3)", "leaf"], ["b", SLOW_LABEL, "op"]], "edges": [["a", "b"]]}
# dot's stand-in: it leaves its pid and its child's, then sleeps in that child on a graph naming
# SLOW_LABEL, and draws any other graph at once
SLEEPER = f"""echo $$ > "$(dirname "$0")/dot.pid"
if grep -q {SLOW_LABEL}; then
    sleep 1000 &
    echo $! > "$(dirname "$0")/child.pid"
    wait
fi
printf '<svg xmlns="http://www.w3.org/2000/svg"><text>drawn</text></svg>'
"""


def running(pid: int) -> bool:
    """Whether pid is a process that has not ended (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def ends(pid: int) -> bool:
    """Whether pid ends within a minute: a process killed with SIGKILL ends when it is next scheduled."""
    deadline = time.monotonic() + 60
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not running(pid)


def appears(path: Path) -> int:
    """The pid a stand-in writes into path, once it is there (within a minute)."""
    deadline = time.monotonic() + 60
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(path.read_text())


def graph_source(data: dict) -> str:
    from autograder.measure.graphs import digraph

    return digraph(Graph.from_dict(data)).source


def test_a_drawing_past_its_deadline_is_killed_with_all_it_started(fake_dot):
    """A dot still laying out at its deadline: NotDrawn(SLOW), and neither it nor the process it started
    is left running."""
    folder = fake_dot(SLEEPER)
    slow = drawing.Drawing(graph_source(FORGED), "svg", 1.0)
    try:
        dot, child = appears(folder / "dot.pid"), appears(folder / "child.pid")
        assert running(dot) and running(child)
        with pytest.raises(drawing.NotDrawn) as stopped:
            slow.result(time.monotonic())  # the deadline is now: dot is still sleeping
        assert stopped.value.why == drawing.SLOW
    finally:
        slow.close()
    assert ends(dot) and ends(child)


def test_a_slow_graph_costs_its_page_its_picture_only(fake_dot):
    """Graphs drawn together: the one dot cannot lay out in time is a sentence saying so, the others are
    drawn; no process of theirs is left."""
    folder = fake_dot(SLEEPER)
    drawn = graph_svgs([HONEST, FORGED, {"nodes": [["c", "y", "leaf"]], "edges": []}])
    assert "drawn" in drawn[0] and "drawn" in drawn[2]
    assert "This graph was not drawn: Graphviz took more than" in drawn[1] and "<text>drawn" not in drawn[1]
    assert f"{config.DRAW_SECONDS:g} s" in drawn[1]
    assert ends(int((folder / "dot.pid").read_text())) and ends(int((folder / "child.pid").read_text()))


def test_a_graph_too_slow_to_draw_is_said_so_on_the_page(fake_dot):
    """A failed check's graphs on a feedback page (and in check()'s table): the slow one replaced by the
    sentence, the reference's drawn, and the verdict as it was."""
    from autograder.judge.findings import Figure
    from autograder.judge.verdicts import CheckResult
    from autograder.report.pages import checks_table_html

    fake_dot(SLEEPER)
    figure = Figure("graphs", "The graph of backward", [("yours", FORGED), ("reference", HONEST)])
    result = CheckResult("Cube", "companion used", False, 1.0, "not through CubeBackward", "", [figure])
    page = checks_table_html([result])
    assert (f"This graph was not drawn: Graphviz took more than {config.DRAW_SECONDS:g} s to lay it out"
            in page)
    assert page.count("<text>drawn</text>") == 1  # the reference's
    assert "failed" in page and "0/1" in page


def test_a_slow_graph_is_a_placeholder_with_its_reason_in_gradescope(fake_dot):
    """Gradescope's PNG pictures: a grey placeholder whose caption says why, the other graph drawn."""
    from autograder.judge.findings import Figure

    fake_dot(SLEEPER.replace("printf '<svg", "printf '\\211PNG\\r\\n\\032\\n<svg"))
    pictures = figure_pngs(picture(Figure("graphs", "graphs", [("yours", FORGED), ("reference", HONEST)])))
    (yours, slow_png, _, _), (reference, drawn_png, _, _) = pictures
    assert yours == f"yours (not drawn: Graphviz took more than {config.DRAW_SECONDS:g} s to lay it out)"
    assert slow_png.startswith(PNG) and b"drawn" not in slow_png
    assert reference == "reference" and b"drawn" in drawn_png


def test_a_failing_dot_gives_the_graph_as_text(fake_dot):
    """dot failing for another reason: the nodes and edges as text, said so (a placeholder as PNG)."""
    fake_dot("echo 'Error: syntax error in line 1' >&2\nexit 1\n")
    text = svg(Graph.from_dict(HONEST))
    assert "could not draw" in text and "ExpBackward0" in text
    assert graph_pngs([HONEST]) == [(graph_pngs([HONEST])[0][0], "")]
    assert graph_pngs([HONEST])[0][0].startswith(PNG)


@pytest.mark.parametrize("says, why", [("out of memory", drawing.LARGE), ("", drawing.FAILED)])
def test_what_dot_says_tells_too_large_from_failed(fake_dot, says, why):
    """dot's own words when memory runs out (graphviz's allocator: "out of memory")."""
    fake_dot(f"echo '{says}' >&2\nexit 1\n")
    with pytest.raises(drawing.NotDrawn) as error:
        drawing.draw(graph_source(HONEST), "svg", 30)
    assert error.value.why == why
    if why == drawing.LARGE:
        assert "too large" in svgs([Graph.from_dict(HONEST)])[0]


@pytest.mark.skipif(shutil.which("prlimit") is None, reason="prlimit (util-linux) sets dot's limits")
def test_dot_runs_in_a_session_of_its_own_under_its_limits(fake_dot):
    """The limits dot runs under, as the kernel reports them to it, and its session (the deadline kills
    that session whole)."""
    fake_dot("cat /proc/self/limits >&2\nawk '{print $6}' /proc/$$/stat >&2\nexit 1\n")
    with pytest.raises(drawing.NotDrawn) as error:
        drawing.draw(graph_source(HONEST), "svg", 7.5)
    limits = {line[:26].strip(): line[26:].split() for line in str(error.value).splitlines()[1:-1]}
    assert limits["Max address space"][:2] == [str(config.DRAW_MEMORY_BYTES)] * 2
    assert limits["Max file size"][:2] == [str(config.DRAW_OUTPUT_BYTES)] * 2
    assert limits["Max cpu time"][:2] == ["9", "9"]  # the deadline's seconds and one more: a backstop
    assert int(str(error.value).splitlines()[-1]) != os.getsid(0)


def test_no_dot_gives_the_graph_as_text(monkeypatch):
    """Without Graphviz's dot, a graph is text that says how to get it, as before."""
    monkeypatch.setenv("PATH", "")
    text = svg(Graph.from_dict(HONEST))
    assert "Graphviz is not installed" in text and "ExpBackward0" in text
