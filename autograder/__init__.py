"""autograd-course's autograder: the inline check() of the notebooks and the batch grader.

Imports are lazy so that `from autograder import check` stays cheap inside a grading worker.
"""

# The one place that names the course's release: the package version (pyproject.toml reads it), the public
# repository and the tag the student notebooks install this package from (their first cell, written by
# tools/make_student.py), and where the site's Binder and Colab links open those notebooks (site/conf.py).
# A fork changes REPOSITORY; a release changes __version__, runs `make dist` and `make student`, then creates
# and pushes the tag RELEASE (tests/test_release.py fails while the repository has no such tag).
# The version is also part of every graded result's key (batch.py): results of another version are graded
# again, so a release that changes a verdict, a score or what the result files say changes it.
__version__ = "0.1.0"
REPOSITORY = "https://github.com/autograd-course/autograd-course"
RELEASE = f"v{__version__}"
PACKAGE_URL = f"{REPOSITORY}/archive/{RELEASE}.zip"  # what pip installs: the release's source, no git needed
WHEEL = f"autograd_course-{__version__}-py3-none-any.whl"  # what `make dist` writes, for offline installs

# What notebooks import: only these names, so that moving the package's modules never breaks a lesson.
__all__ = ["__version__", "check", "draw", "expect_error", "predict", "warn_if_no_graphviz"]


def __getattr__(name):
    if name == "check":
        from autograder.inline import check

        return check
    if name == "draw":
        from autograder.measure.graphs import draw

        return draw
    if name == "expect_error":
        from autograder.expect import expect_error

        return expect_error
    if name == "predict":
        from autograder.prediction import predict

        return predict
    if name == "warn_if_no_graphviz":
        from autograder.measure.graphs import warn_if_no_graphviz

        return warn_if_no_graphviz
    raise AttributeError(name)
