import sys

from autograder.gradescope.run import main

sys.exit(main())
