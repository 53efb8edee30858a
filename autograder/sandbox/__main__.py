from autograder.sandbox.server import main

main()
