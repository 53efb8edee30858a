from autograder.gradescope.run import main
from autograder.quick_exit import run

run(main)
