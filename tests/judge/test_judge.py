"""Does each classic mistake get the verdict and the one-sentence diagnosis a student needs?

The wrong Functions are measured and judged in process, exactly as the inline check() does; the batch
grader runs the same probe in a worker and the same judge here.
"""

import gc
import linecache
import runpy
from pathlib import Path

import pytest

from autograder import check
from autograder.course.assignments.registry import find_problem, load
from autograder.judge.diagnose import only_where
from tests.conftest import ROOT
from tests.wrong_functions import (
    CASES,
    HEADER,
    ISSUE22,
    LEARNER,
    LEARNER2,
    MISLEADING,
    NEVER,
    NOT_A_FUNCTION,
    RIGHT,
    RIGHT_GRADCHECK,
    SWISH,
    SWISH_RIGHT,
)

EXAMPLES = sorted((ROOT / "examples").glob("*/*.py"))
pytestmark = pytest.mark.stack  # the catalogue, on every torch the course supports (make test-torch)


def run_check(problem: str, source: str, seed: int = 0):
    """check() on the problem's Function defined by `source`, as a notebook cell would call it (the cell's
    lines are known to tracebacks, as IPython makes them known)."""
    text = HEADER + source
    namespace: dict = {"In": ["", text]}  # IPython's history: check() reads the rules in the cells, too
    filename = f"<cell {abs(hash(text))}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec", dont_inherit=True), namespace)  # noqa: S102 - the test's own fixtures
    name = find_problem(problem).lookup
    namespace["check"] = check
    exec(f"report = check({name}, seed={seed})", namespace)  # noqa: S102 - companions are read from the caller
    return namespace["report"]


def by_check(report) -> dict:
    return {r.check: r for r in report.results}


def test_check_freezes_the_notebooks_objects_only_while_it_runs(monkeypatch):
    """check() keeps the objects the notebook holds out of the collector's passes while it runs, gives them
    back afterwards, and leaves a freeze of the notebook's own as it was."""
    seen = []
    monkeypatch.setattr("autograder.inline._check", lambda *args: seen.append(gc.get_freeze_count()))
    earlier = gc.get_freeze_count()  # a grade run in this process froze torch's objects (import_torch)
    gc.unfreeze()
    try:
        check(object())
        assert seen[0] > 0 and gc.get_freeze_count() == 0
        gc.freeze()
        frozen = gc.get_freeze_count()
        check(object())
        assert seen[1] == frozen and gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
        if earlier:
            gc.freeze()


@pytest.mark.parametrize("source", [source for _, source, _, _ in NOT_A_FUNCTION])
def test_a_cause_every_check_shares_is_said_once(source):
    """Something other than a Function class fails every check for one reason: check()'s text and page
    say it once, above the rows, each row pointing to it (as a feedback page groups shared causes)."""
    report = run_check("Exp", source)
    cause = by_check(report)["forward"].message
    assert {r.message for r in report.results} == {cause} and not report.passed
    text, page = repr(report), report._repr_html_()
    assert text.count(cause) == 1 and text.count("cause 1, above") == len(report.results)
    assert page.count(cause) == 1 and page.count("Cause 1, above.") == len(report.results)


@pytest.mark.parametrize(("problem", "source", "failing", "phrase"), CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[3][:30]}" for c in CASES])
def test_mistake_is_diagnosed(problem, source, failing, phrase):
    """Does the mistake cost points, failing the expected check with a diagnosis that names it, and where
    gradcheck leaves the cause to gradient, does gradient name one (not only where it goes wrong)?"""
    report = run_check(problem, source)
    checks = by_check(report)
    assert not checks[failing].passed, report
    assert phrase in checks[failing].message, checks[failing].message
    assert report.score < sum(r.max_score for r in report.results)
    deferring = checks.get("gradcheck")
    if deferring is not None and "as the reference does" in deferring.message:  # gradcheck points at gradient
        assert not only_where(checks["gradient"].message), ("gradient tells only where", checks["gradient"])


@pytest.mark.parametrize(("problem", "source"), RIGHT, ids=[f"{r[0]}-{i}" for i, r in enumerate(RIGHT)])
def test_right_but_unusual_keeps_full_marks(problem, source):
    """Does a right answer written in an unusual way (torch.where, the output saved, a broadcast-shaped bias
    gradient, float32 within tolerance...) keep every point, a remark at most?"""
    report = run_check(problem, source)
    assert report.passed, report
    for r in report.results:
        assert not r.message or r.message.startswith("Note (costs nothing)"), r.message


@pytest.mark.parametrize(("source", "problem", "words"), NEVER, ids=[n[2][:30] for n in NEVER])
def test_cause_never_gives_wrong_advice(source, problem, words):
    """Is the advice that once pointed the wrong way (Sinh told its result has no history, .detach().numpy()
    passed on, ctx attributes blamed for SinhBad) gone from every message?"""
    report = run_check(problem, source)
    for r in report.results:
        assert words not in r.message + r.details, (r.check, r.message)


@pytest.mark.parametrize(("problem", "source"), [c[:2] for c in ISSUE22],
                         ids=[f"{c[0]}-{c[2]}-{c[3][:30]}" for c in ISSUE22])
def test_no_sentence_points_the_wrong_way(problem, source):
    """Issue 22's attempts: does no row repeat one of the sentences that once sent the learner the wrong
    way (a grader's failure for a wrong shape, float32 with no float32 anywhere, backward blamed for
    forward's in-place change, PyTorch's raw error without a sentence of ours...), and no grader frame?"""
    report = run_check(problem, source)
    for r in report.results:
        for words in MISLEADING:
            assert words not in r.message + r.details, (r.check, words, r.message)


@pytest.mark.parametrize(("problem", "source"), [c[:2] for c in LEARNER + LEARNER2],
                         ids=[f"{c[0]}-{c[2]}-{c[3][:30]}" for c in LEARNER + LEARNER2])
def test_a_raised_error_gets_a_sentence_of_ours(problem, source):
    """The learner's list: where PyTorch or Python raises (a tuple from saved_tensors, math.exp on a
    tensor, a None bias, a Python if on a tensor...), does a sentence of ours say what it means, rather than
    "backward raised TypeError: ..." alone, and is no frame of the grader's shown?"""
    import re

    report = run_check(problem, source)
    for r in report.results:
        assert not re.search(r"\braised \w+(Error|Exception): ", r.message), (r.check, r.message)
        assert "autograder/" not in r.message + r.details, r.check


def test_check_prints_no_warning_of_the_learners_calls():
    """math.exp on a tensor makes PyTorch warn on every call check() makes: is the report, which names the
    mistake, all the learner sees (no warning printed above it)?"""
    import warnings

    source = next(s for p, s, _, words in LEARNER if p == "Exp" and "math.exp" in words)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = run_check("Exp", source)
    assert "math.exp" in by_check(report)["gradient"].message
    assert [str(w.message) for w in caught] == []


def test_an_intermediate_without_history_is_named():
    """An instructor's Swish saving sigmoid(x) computed in forward: do its second derivatives fail with
    that cause (not "differs from finite differences everywhere"), and does a Swish recomputing it in
    backward keep full marks?"""
    import torch

    from autograder.course import Case, Problem, TensorSpec
    from autograder.judge.validate import grade_in_process

    swish = Problem(name="Swish", summary="x * sigmoid(x)", reference=lambda x: x * torch.sigmoid(x),
                    cases=(Case((TensorSpec((3, 4)),)), Case((TensorSpec((5,)),))), double_backward=True,
                    saves=True, elementwise=True)
    results = {}
    for source in (SWISH, SWISH_RIGHT):
        namespace: dict = {}
        exec(HEADER + source, namespace)  # noqa: S102 - the test's own fixtures
        results[source] = {r.check: r for r in grade_in_process(swish, namespace)}
    wrong = results[SWISH]["gradgradcheck"]
    assert not wrong.passed and "an intermediate result has no autograd history" in wrong.message
    assert "2nd tensor passed to save_for_backward" in wrong.message and "everywhere" not in wrong.message
    assert all(r.passed and not r.message for r in results[SWISH_RIGHT].values())


def test_notes_cost_nothing():
    """Are a broadcast-shaped bias gradient and float32 arithmetic within tolerance told as notes, with full
    points?"""
    linear = next(source for problem, source in RIGHT if "keepdim=True" in source)
    returns = by_check(run_check("LinearFunction", linear))["backward returns"]
    assert returns.passed and returns.score == returns.max_score and "sums it down" in returns.message
    float32 = next(source for problem, source in RIGHT if ".float()" in source)
    gradient = by_check(run_check("LinearFunction", float32))["gradient"]
    assert gradient.passed and "float32" in gradient.message


def test_right_functions_pass_everything():
    """Does a right answer to every graded problem pass every check?"""
    namespace: dict = {}
    for path in ("custom-functions/alice.py", "double-backward/frank.py", "modern-functions/heidi.py",
                 "conv-bn-fusion/judy.py"):
        exec((ROOT / "examples" / path).read_text(), namespace)  # noqa: S102
    something = CASES[4][1].replace(
        "input1.abs() * input2.sign(), grad_output * input1.sign() * input2.abs()",
        "input1.sign() * input2.abs(), grad_output * input1.abs() * input2.sign()")
    exec(HEADER + something, namespace)  # noqa: S102
    exec(HEADER + RIGHT_GRADCHECK, namespace)  # noqa: S102
    namespace["check"] = check
    for assignment in load().assignments.values():
        for problem in assignment.problems:
            if problem.lookup not in namespace:
                continue  # a problem another lesson adds, with its own right answer in its own tests
            exec(f"report = check({problem.lookup})", namespace)  # noqa: S102
            assert namespace["report"].passed, namespace["report"]


def test_failure_shows_gradient_shaped_panels_and_no_graph():
    """Does a failing gradient come with yours / right / difference panels laid out like the input and a
    legend that says so, as inline SVG, and no graph (a graph of backward shows nothing of a first
    derivative: only the forward and an unexplained gradient box)?"""
    report = run_check(*CASES[0][:2])
    gradient = by_check(report)["gradient"]
    heat = [f for f in gradient.figures if f.kind == "heatmaps"]
    assert len(heat) == 1 and not [f for f in gradient.figures if f.kind == "graphs"]
    captions = [c for c, _ in heat[0].panels]
    assert captions[:2] == ["your grad_input", "right grad_input"] and captions[2].startswith("difference")
    assert all(len(m) == 3 and len(m[0]) == 8 for _, m in heat[0].panels)  # input is (3, 8)
    assert "shaped like input (3, 8)" in heat[0].legend
    html = report._repr_html_()
    assert html.count("<svg") >= 1 and "KillHeadBackward" not in html and "shaped like input (3, 8)" in html


def test_three_failure_pages_hold_no_grader_frame_and_no_graph_twice():
    """The HTML of three failures (LogSumExp's wrong shape, Cube's companion given x.detach(), Exp's
    detached result): no frame of the grader's code anywhere, and each graph drawn once (Cube's graph was
    drawn under companion used and again under gradgradcheck)?"""
    def source(problem, words):
        return next(c[1] for c in CASES if c[0] == problem and words in c[3])

    pages = [run_check("LogSumExp", source("LogSumExp", "reduced over dimension 0")),
             run_check("Cube", source("Cube", "x.detach()")),
             run_check("Exp", source("Exp", "detached copy"))]
    for report in pages:
        html = report._repr_html_()
        assert "autograder/" not in html and 'File "/' not in html
        graphs = [repr(f.panels) for r in report.results for f in r.figures if f.kind == "graphs"]
        assert len(graphs) == len(set(graphs))
    cube = by_check(pages[1])
    assert [f.kind for f in cube["companion used"].figures] == ["graphs"]
    assert not [f for f in cube["gradgradcheck"].figures if f.kind == "graphs"]
    # both graphs drawn on the case the sentences name (x of shape (2, 3)), not on Cube's scalar case
    assert "With x of shape (2, 3)" in cube["gradgradcheck"].message
    for _, graph in cube["companion used"].figures[0].panels:
        labels = [label for _, label, _ in graph["nodes"]]
        assert any("(2, 3)" in label for label in labels) and not any("()" in label for label in labels)


def test_heat_map_is_of_the_input_named_with_its_difference():
    """Is the picture under "the gradient with respect to input2 is wrong" the gradient of input2, with a
    difference panel that shows the difference (once it was input1's, with an empty difference)?"""
    source = next(c[1] for c in CASES if c[3].startswith("The gradient with respect to input2 lacks"))
    gradient = by_check(run_check("Something", source))["gradient"]
    (figure,) = [f for f in gradient.figures if f.kind == "heatmaps"]
    assert "input2" in figure.title and "input2" in figure.panels[0][0]
    assert any(abs(v) > 1e-6 for row in figure.panels[2][1] for v in row)


def test_second_derivatives_earn_nothing_on_a_wrong_first_derivative():
    """Does gradgradcheck, right by itself, earn nothing while the first derivative is wrong?"""
    source = next(c[1] for c in CASES if c[0] == "Exp" and c[3] == "2 times the right one")
    gradgradcheck = by_check(run_check("Exp", source))["gradgradcheck"]
    assert not gradgradcheck.passed and gradgradcheck.score == 0
    assert "needs gradient and gradcheck to pass first" in gradgradcheck.message


def test_one_traceback_per_failure_with_the_learners_frames_only():
    """Is a traceback shown once per failure, with the learner's own frames and lines only (no torch, no
    grader, no paths of the grader's)?"""
    source = next(c[1] for c in CASES if "CubeBackward.forward(...) directly" in c[3])
    report = run_check("Cube", source)
    shown = [r for r in report.results if "Traceback" in r.details]
    assert len(shown) == 1
    text = shown[0].details
    assert "CubeBackward.forward(ctx, grad_out, x)" in text and "in cube_backward" in text
    assert "site-packages" not in text and "autograder" not in text and "torch/" not in text


def test_untouched_functions_show_no_traceback():
    """Does a body not written yet (NotImplementedError) say so, with no traceback?"""
    report = run_check("KillHead", next(c[1] for c in CASES if c[3] == "not written yet"))
    assert all("Traceback" not in r.details for r in report.results)
    assert "not written yet" in by_check(report)["forward"].message


def test_same_submission_same_results():
    """Does grading the same Function twice give the same results, to the character?"""
    first = repr(run_check(*CASES[3][:2]))
    assert first == repr(run_check(*CASES[3][:2]))


def _verdicts(path: Path, seed: int) -> dict[str, list[tuple[str, bool]]]:
    namespace = runpy.run_path(str(path))
    namespace["check"] = check
    found = {}
    for assignment in load().assignments.values():
        for problem in assignment.problems:
            if problem.lookup in namespace and problem.name not in found:
                exec(f"report = check({problem.lookup}, problem={problem.name!r}, seed={seed})", namespace)  # noqa: S102
                found[problem.name] = [(r.check, r.passed) for r in namespace["report"].results]
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_seeds_give_the_same_verdicts(path):
    """Does every example get the same verdicts with seeds 0 to 3: each check judged against the inputs of
    the seed it ran with (once, a right Softplus failed vmap with seed 1)?"""
    verdicts = [_verdicts(path, seed) for seed in range(4)]
    assert verdicts[0] and all(v == verdicts[0] for v in verdicts[1:])


def test_lesson_7_failures_are_diagnosed():
    """Are ivan's lesson 7 mistakes (a wrong jvp, a Softplus derivative taken at -x, softsign's backward
    missing a square) each failed with its cause?"""
    namespace = runpy.run_path(str(ROOT / "examples" / "modern-functions" / "ivan.py"))
    tanh, softplus, softsign = (by_check(check(namespace[n], problem=n))
                                for n in ("Tanh", "Softplus", "softsign"))
    assert not tanh["forward mode"].passed and "forward mode (jvp)" in tanh["forward mode"].message
    assert tanh["gradient"].passed
    assert not softplus["gradient"].passed and "derivative at -x" in softplus["gradient"].message
    assert not softplus["vmap"].passed and "needs gradient to pass first" in softplus["vmap"].message
    assert not softsign["gradient"].passed and "a square (** 2) is missing" in softsign["gradient"].message
