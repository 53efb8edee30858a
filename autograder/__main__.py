from autograder.cli import main
from autograder.quick_exit import run

run(main)
