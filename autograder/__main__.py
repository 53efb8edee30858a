from autograder.quick_exit import run
from autograder.several import main  # cli.main, or several grade commands joined by --and in one start

run(main)
