"""Gradescope: builds the autograder archive, and is the program its run_autograder starts.

    python -m autograder gradescope --assignment NAME --out FILE.zip [--extra FILE.py ...]   (build.py)
    python -m autograder.gradescope run [--root /autograder]          (run.py, on Gradescope, per submission)
    python -m autograder.gradescope check [--root /autograder]        (check.py, setup.sh: is the
                                                                       image usable?)

Gradescope unpacks the archive into /autograder/source, runs setup.sh once as root to build an image,
then for each submission starts a container, puts the student's files into /autograder/submission
and runs /autograder/run_autograder, which must leave /autograder/results/results.json. The root
folder is taken from AUTOGRADER_ROOT (default /autograder), so tests can lay out the same tree
anywhere.

Student code runs in the sandbox's workers under user ids of their own, with no capability left, so
/autograder/source (mode 700: the grader, the references, any hidden problems) is closed to it.
That is why setup.sh installs Python and the packages in a world-readable virtual environment.

settings.py: gradescope.json. build.py and scripts/: the archive. run.py: run_autograder, through the
same pipeline as the local batch (pipeline.py); results.py and feedback.py: its results.json.
"""
