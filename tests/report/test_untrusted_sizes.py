"""Is the grader's work on what a submission produced bounded by caps on its size, or by an algorithm linear
in it, wherever it could grow with what a student controls? (The drawing of graphs, bounded by a deadline,
is tests/report/test_drawing.py.)

Found costly, and capped here: a forged graph's edge list read to its end at every reading; a frame's line
of code of 20,000 characters read by the judge's regular expressions (35 s for one); the path filter of
every text a student reads (63 s for 64 KB of printed output). Nothing is timed: the caps are asserted,
and the linear path filter is held to the very results of the expression it replaces."""

from __future__ import annotations

import random
import re

from autograder.measure.contract import CODE, StudentError
from autograder.measure.graphs import MAX_EDGES, Graph
from autograder.pipeline import Private, without_temporary

# The path filter as it was (quadratic in a run of folders that leads to no worker's folder): the meaning
# the linear one keeps.
QUADRATIC = re.compile(r"(?:/[^/\s'\"<>]+)*/autograder-\d+-[A-Za-z0-9_-]+/")
PIECES = ["/", "a", " ", '"', "<", "autograder-", "1", "-", "x", "/autograder-12-ab/", "//", "(", "\n",
          "/tmp", "\u00e9", "\t", "autograder-1-y/", "_"]


def test_the_path_filter_takes_out_what_it_did_on_any_text():
    rnd = random.Random(0)
    for _ in range(20_000):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randrange(30)))
        assert without_temporary(text) == QUADRATIC.sub("", text), repr(text)


def test_the_path_filter_takes_out_nested_temporary_folders_and_leaves_other_paths():
    """A zip unpacked inside another's folder, a worker's folder, and a long run of folders leading to no
    temporary folder (which the old expression read to its end from every "/")."""
    text = ('File "/tmp/autograder-7-unzip-a1/autograder-7-unzip-b2/alice/nb.py", line 3\n'
            "/tmp/autograder-12-x_y/helpers.py\n" + "/a" * 32_768)
    assert Private()(text) == 'File "alice/nb.py", line 3\nhelpers.py\n' + "/a" * 32_768


def test_a_frames_line_of_code_is_read_as_long_as_a_worker_sends_it():
    """The judge reads a frame's line with regular expressions: a forged line is cut to the worker's own
    length (calls.student_frames), and the traceback and message keep theirs."""
    forged = {"type": "RuntimeError", "message": "m" * 5000,
              "frames": [{"file": "<cell 3>", "line": 1, "name": "backward", "code": "a" * 20_000}] * 60}
    error = StudentError.from_plain(forged)
    assert len(error.frames) == 50 and all(f.code == "a" * CODE for f in error.frames)
    assert error.message == "m" * 5000


def test_a_forged_edge_list_is_read_no_further_than_a_graphs_edges_go():
    nodes = [["a", "x", "leaf"], ["b", "ExpBackward0", "op"]]
    padding = [["nowhere", "else"]] * 1_000_000  # edges between nodes that do not exist
    assert Graph.from_dict({"nodes": nodes, "edges": [*padding, ["a", "b"]]}).edges == []
    honest = [["a", "b"]] * (2 * MAX_EDGES - 1) + [["b", "a", "dotted"]]  # repeated, as torchviz may
    assert Graph.from_dict({"nodes": nodes, "edges": honest}).edges == [("n0", "n1", ""),
                                                                         ("n1", "n0", "dotted")]
