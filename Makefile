# autograd-course: the two commands are `make demo` and `make test`; both set up what they need.
PY := .venv/bin/python
LINT := .venv/bin/ruff check autograder tools tests
SOLUTIONS ?= 1
export PYTHONHASHSEED := 0
# C++ warnings (vmap's fallback in lesson 8) reach notebook outputs only sometimes: left out
export TORCH_CPP_LOG_LEVEL := ERROR

.PHONY: setup setup-lab setup-browser demo test test-torch test-fast lab student solutions site dist bench clean lint

setup:
	@tools/setup.sh

setup-lab:  ## only what the course needs: the package, JupyterLab and a kernel (no test or site tools)
	@SETUP=lab tools/setup.sh

setup-browser:
	@WITH_BROWSER=1 tools/setup.sh

demo: setup  ## grade the bundled example class and write the feedback
	$(PY) -m autograder.demo

test: setup-browser  ## everything: lint, unit tests, notebooks (nbval), student sync, site in a browser
	$(LINT)
	$(PY) -m pytest -n 2 --dist loadfile tests
	$(PY) -m pytest -p no:cacheprovider --nbval --nbval-sanitize-with tests/nbval_sanitize.cfg solutions

test-torch: setup  ## the tests marked `stack` on the oldest and the newest torch supported (GBs the first time)
	$(PY) -m tools.torch_matrix $(TORCH_MATRIX)

test-fast: setup  ## the package's unit tests only
	$(PY) -m pytest -n 2 tests -m "not slow and not browser"

lab: setup-lab  ## open the student notebooks in JupyterLab
	.venv/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) course/

student: setup  ## regenerate course/ from solutions/
	$(PY) -m tools.make_student solutions course

solutions: setup  ## re-execute the solution notebooks in place (refresh committed outputs)
	$(PY) -m tools.execute solutions/*.ipynb

site:  ## build the static site into build/site/ (SOLUTIONS=0 leaves solutions out)
	@WITH_SITE=1 tools/setup.sh
	$(PY) -m tools.build_site --solutions $(SOLUTIONS)

dist: setup  ## the release's wheel and sdist into dist/, each installed by the set-up cell and graded elsewhere
	$(PY) -m tools.dist

bench: setup  ## autograder against nbgrader on a generated class
	$(PY) -m tools.bench

lint: setup  ## ruff, as make test runs it first (pyproject.toml's [tool.ruff]: lines of at most 110 characters)
	$(LINT)

clean:
	rm -rf build dist .pytest_cache .jupyter_cache demo-feedback .venv-torch
