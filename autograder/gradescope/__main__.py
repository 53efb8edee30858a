import sys

from autograder.gradescope import main

sys.exit(main())
