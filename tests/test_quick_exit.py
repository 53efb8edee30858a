"""Does a command-line run that skips the interpreter's teardown still run its exit handlers, flush what it
printed, exit with its command's status, and stay quiet when its reader goes away?"""

import subprocess
import sys

from tests.conftest import ROOT


def run_python(source: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", source], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False, **kwargs)


def test_handlers_run_output_is_flushed_and_the_status_kept():
    done = run_python("import atexit, sys\n"
                      "from autograder.quick_exit import run\n"
                      "atexit.register(lambda: print('handler ran'))\n"
                      "def main():\n"
                      "    sys.stdout.write('no newline, still buffered')\n"
                      "    return 3\n"
                      "run(main)\n")
    assert done.returncode == 3, done.stderr
    assert done.stdout == "no newline, still bufferedhandler ran\n"


def test_an_error_exits_as_usual():
    done = run_python("from autograder.quick_exit import run\n"
                      "def main():\n"
                      "    raise SystemExit('autograder: bad input')\n"
                      "run(main)\n")
    assert done.returncode == 1 and done.stderr == "autograder: bad input\n"


def test_a_reader_that_goes_away_gets_no_traceback():
    """`python -m autograder list | head -1`: the rest of the listing has nowhere to go."""
    reader = subprocess.Popen([sys.executable, "-m", "autograder", "list"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    reader.stdout.readline()
    reader.stdout.close()  # as head does after its line
    stderr = reader.stderr.read()
    reader.wait(timeout=300)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
