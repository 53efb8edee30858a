"""Every default of the grader, once, each with why it is what it is.

The command line's options, Gradescope's settings and the sandbox's limits (sandbox/confine.Limits) take
their defaults from here. This module imports nothing: a worker's confinement reads it too.
"""

# -- time ----------------------------------------------------------------------------------------------
# A lesson notebook runs its cells in a few seconds; a minute leaves room for a slow machine and a first
# import, and still stops a notebook that trains a model or sleeps.
LOAD_SECONDS = 60.0
# Measuring one problem takes well under a second; 20 s stops a Function that loops, not a slow one,
PROBLEM_SECONDS = 20.0
# ... counted in the worker's own CPU time (sandbox/budget.py): a worker starved on a loaded machine keeps
# its seconds. One that waits spends none, and the wall clock stops it at this many times the budget.
PROBLEM_WALL_FACTOR = 3
# Unless --problem-timeout says otherwise, 20 s is only the most a problem gets: its budget is this many
# times what the grader spent computing the reference's outputs and Jacobians (1 to 110 ms), and at least
# the floor, so that a submission that loops costs seconds a problem, not 20. Lesson 2's Functions
# written as element-by-element Python loops (tests/sandbox/slow_honest.py: the slowest honest attempts we
# know) took 6 to 73 ms of CPU to measure, up to 12 times their reference's own time; the floor leaves 40
# times that (and a loaded machine's slower CPU) before an honest attempt could lose a point.
REFERENCE_SCALE = 200
PROBLEM_FLOOR_SECONDS = 3.0

# -- what one worker may use ---------------------------------------------------------------------------
MEMORY_BYTES = 3 * 1024**3  # on top of the clean parent's: torch's tensors of a lesson fit many times over
PROCESSES = 32  # torch's threads fit; a fork bomb does not
FILE_BYTES = 16 * 1024**2  # a notebook may save a picture, not fill the disk
# A worker's own /tmp and working folder (a tmpfs in memory, counted in its memory cgroup where there is
# one): room for a few saved pictures or a small model; filling it fails that submission's writes only.
TMP_BYTES = 64 * 1024**2
TMP_FILES = 16384  # files and folders in it: a loop making empty files fills it too, not the kernel's memory
# The clean parent's own /tmp (each worker mounts its own over it; the parent writes nothing there) and
# the containers' /dev (a few device nodes bound in, and links): small, so that nothing can fill memory.
PARENT_TMP_BYTES = 16 * 1024**2
DEV_BYTES = 64 * 1024
OPEN_FILES = 256  # torch opens a few dozen; a leak of descriptors stops here
OUTPUT_BYTES = 64 * 1024  # printed output kept for the feedback: enough to read, not a flood

# -- drawing what a worker sent (in the grader: drawing.py) -------------------------------------------
# Graphviz lays out the lessons' graphs (under 25 nodes) in tens of milliseconds, and an honest chain of
# 200 operations in under 2 s on a loaded 2-core machine; a graph forged within graphs.py's caps kept it
# busy for minutes. A page waits this long for all its graphs together, then says which were not drawn
# (its verdicts do not depend on them). check() in a notebook draws alike.
DRAW_SECONDS = 5.0
# draw() in a notebook: the learner's own graph, which only the learner waits for. A deadline that stops
# a runaway, never an honest drawing on a slow machine.
OWN_DRAW_SECONDS = 60.0
# dot's address space (pango's threads reserve most of the 200 MB a PNG takes) and what it may write
DRAW_MEMORY_BYTES = 1024**3
DRAW_OUTPUT_BYTES = 16 * 1024**2

# -- zips ----------------------------------------------------------------------------------------------
# Bytes that all the zips of one run may unpack together (into the temporary folder, until the class is
# read): a class of 1,000 students with a 2 MB notebook each fits, and however many zips of a few hundred
# KB a class holds, together they cannot fill a laptop's /tmp (a per-zip cap let three 0.3 MB zips
# unpack to 934 MB). The zip that crosses it and those after it are refused, each with the cause.
UNZIP_BYTES = 2 * 1024**3

# -- workers -------------------------------------------------------------------------------------------
# Two workers per core: a submission that waits (a sleep left in a cell, a file to read) leaves its core
# to another instead of idling it. The same rule for the local batch and for Gradescope.
WORKERS_PER_CORE = 2
MAX_JOBS = 256  # --jobs: beyond this, workers only compete for memory
# What the workers' clean parent imports besides the sandbox's own list (sandbox/server.PRELOAD) and the
# lesson's modules (Assignment.preload): what `from autograder import check, draw, expect_error, ...` loads
# in a notebook (in a worker, check() returns at once: no judging code is loaded). A worker then has them
# without reading them, which it cannot do on Gradescope (/autograder/source is mode 700), and each
# notebook's worker is spared the import. autograder.notebook_builtins: `display` and `get_ipython`, as in
# Jupyter; autograder.expect: the lessons' expect_error(); autograder.prediction: their predict(), which
# returns at once in a worker.
PRELOAD = ("autograder.inline", "autograder.expect", "autograder.measure.graphs",
           "autograder.notebook_builtins", "autograder.prediction")
# On Gradescope only, on top, where Python's packages are not world-readable (run.py warns): the modules
# notebooks commonly import, since a worker then imports only what was loaded before it. Where a worker
# can read them (setup.sh installs them so, and locally), it imports what its notebook uses itself:
# matplotlib's 0.4 s would otherwise be spent on every submission, or delay every batch's first worker.
GRADESCOPE_PRELOAD = ("traceback", "json", "inspect", "math", "random", "itertools", "functools",
                      "collections", "copy", "pickle", "matplotlib", "matplotlib.pyplot")

# -- inputs --------------------------------------------------------------------------------------------
SEED = 0  # the same seed gives the same inputs, so the same results, on every machine
MAX_SEED = 2**31 - 1  # what torch.manual_seed and numpy accept alike

# -- Gradescope ----------------------------------------------------------------------------------------
GRADESCOPE_ROOT = "/autograder"  # where Gradescope lays out source/, submission/ and results/
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")  # Gradescope's own words
VISIBILITY = "visible"  # tests that are not hidden: students learn from them while they can resubmit
HIDDEN_VISIBILITY = "hidden"  # hidden problems and checks: never shown, unless the instructor says so
OUTPUT_FORMATS = ("html", "md", "text")  # Gradescope renders these; html and md carry pictures
OUTPUT_FORMAT = "html"  # pictures, and the widest support in Gradescope's pages
PICTURE_BYTES = 600_000  # base64 PNG in one results.json: Gradescope refuses results of a few MB
MAX_PRINTED = 8000  # characters of a submission's printed output shown back: the start says what went wrong
MAX_CELL_ERROR = 3000  # characters of one cell's traceback: its end names the error

# -- packages ------------------------------------------------------------------------------------------
# What the grader imports at run time (pyproject.toml's dependencies; tests/test_install.py keeps them
# equal), each distribution with the module it provides: every command checks them before it starts
# (packages.py; an install with --no-deps has none of them), and a Gradescope archive pins them
# (gradescope/build.py). pyseccomp, the workers' system-call filter, exists on Linux only.
RUNTIME = {"torch": "torch", "numpy": "numpy", "graphviz": "graphviz", "torchviz": "torchviz",
           "matplotlib": "matplotlib", "jinja2": "jinja2", "rich": "rich",
           "ipython": "IPython", "pyseccomp": "pyseccomp", "pyyaml": "yaml"}
LINUX_ONLY = ("pyseccomp",)

# -- Canvas export -------------------------------------------------------------------------------------
POLICIES = ("best", "latest")  # whose score counts when a student submitted several times
POLICY = "best"  # resubmitting never costs a student points
