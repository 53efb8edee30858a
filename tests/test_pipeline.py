"""Does the one pipeline (load -> run isolated -> judge) grade what the batch and Gradescope hand it: a right
submission full marks, one that could not be read 0 with its reason and without a worker, each as its
own Graded record?"""

from pathlib import Path

import pytest

from autograder.course import find_assignment
from autograder.intake.loader import Submission
from autograder.judge.checks import max_score
from autograder.pipeline import Pipeline, warm_up

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "custom-functions"


def test_warm_up_is_the_same_for_every_caller():
    """One preload list: the lesson's modules, then config.PRELOAD; Gradescope's addition is explicit."""
    from autograder import config

    assignment = find_assignment("custom-functions")
    preload, _ = warm_up(assignment)
    assert preload == tuple(assignment.preload) + config.PRELOAD
    preload, _ = warm_up(assignment, config.GRADESCOPE_PRELOAD)
    assert preload == tuple(assignment.preload) + config.PRELOAD + config.GRADESCOPE_PRELOAD


@pytest.mark.slow
def test_pipeline_grades_and_fails_unreadable_without_a_worker():
    assignment = find_assignment("custom-functions")
    right = Submission("alice", EXAMPLES / "alice.py", [(EXAMPLES / "alice.py").read_text()], sha256="a" * 64)
    broken = Submission("erin", EXAMPLES / "erin.ipynb",
                        error="erin.ipynb is not a readable Jupyter notebook.")
    with Pipeline(assignment, workers=1) as pipeline:
        graded = list(pipeline.grade([right, broken]))
    (first, failed), (second, ok) = graded
    assert first is broken and failed.score == 0 and failed.seconds == 0 and not failed.cell_errors
    assert all(not r.passed and "not a readable Jupyter notebook" in r.message for r in failed.results)
    assert second is right and ok.submission == "alice" and ok.sha256 == "a" * 64
    assert ok.score == ok.max_score == max_score(assignment) and ok.seconds > 0


@pytest.mark.slow
@pytest.mark.parametrize("prime", [True, False])
def test_pytorchs_words_come_whether_the_clean_parent_primed_or_the_worker_imports_them(prime):
    """With prime=False (Gradescope, where a worker can read the packages), the clean parent leaves torch's
    symbolic shapes and sympy to a worker whose gradcheck needs them: a wrong submission still gets
    PyTorch's own words, the worker importing them itself, and its verdicts are the primed ones."""
    assignment = find_assignment("custom-functions")
    wrong = Submission("bob", EXAMPLES / "bob.py", [(EXAMPLES / "bob.py").read_text()])
    with Pipeline(assignment, workers=1, prime=prime) as pipeline:
        ((_, graded),) = list(pipeline.grade([wrong]))
    gradcheck = next(r for r in graded.results if r.problem == "KillHead" and r.check == "gradcheck")
    said = gradcheck.message + gradcheck.details
    assert not gradcheck.passed and "torch.autograd.gradcheck says: GradcheckError" in said
    assert 0 < graded.score < graded.max_score
