#!/usr/bin/env bash
# Creates .venv with the autograder in editable mode and what a command needs, pinned by requirements.txt:
#   SETUP=lab   the course only (the package, JupyterLab, a kernel): what `make lab` needs
#   (default)   everything requirements.txt pins (tests, notebooks, site tools): `make demo`, `make test`
# and makes sure the Debian programs are present: Graphviz's `dot` (for lab only a warning without it:
# check() then shows graphs as text), Chromium with WITH_BROWSER=1, npm (to fetch MathJax for the web
# site) with WITH_SITE=1 or WITH_BROWSER=1. Any Python from MIN_PYTHON on will do; PYTHON=... picks one.
set -euo pipefail
case $0 in */*) cd "${0%/*}/.." ;; *) cd .. ;; esac  # no dirname: this must run where PATH has nothing
MIN_PYTHON=3.11  # pyproject.toml's requires-python (tests/test_install.py keeps them equal)
LEVEL=${SETUP:-full}

# -- Python ---------------------------------------------------------------------------------------------
suitable() {  # a Python at least MIN_PYTHON that can create virtual environments
  "$1" -c "import sys, ensurepip, venv; sys.exit(sys.version_info < tuple(map(int, '$MIN_PYTHON'.split('.'))))" \
    >/dev/null 2>&1
}
found=()
if [ -n "${PYTHON:-}" ]; then
  candidates=("$PYTHON")
else
  candidates=(python3.11 python3.12 python3.13 python3.14 python3 python)
fi
for candidate in "${candidates[@]}"; do
  command -v "$candidate" >/dev/null 2>&1 || continue
  found+=("$candidate ($("$candidate" -c 'import platform; print(platform.python_version())' 2>/dev/null || echo '?'))")
  if suitable "$candidate"; then PYTHON=$candidate; break; fi
  PYTHON=
done
if [ -z "${PYTHON:-}" ]; then
  {
    echo "setup: the course needs Python $MIN_PYTHON or newer, with its venv module;" \
         "found ${found[*]:-no Python at all}."
    echo "       Install one: Debian/Ubuntu 'sudo apt-get install python3 python3-venv' (python3.11-venv etc." \
         "for a versioned python3.X), macOS 'brew install python', Windows https://www.python.org/downloads/."
    echo "       Then run make again, or name it: make lab PYTHON=/path/to/python3.12"
  } >&2
  exit 1
fi

# -- Debian programs -----------------------------------------------------------------------------------
need_apt=()
if ! command -v dot >/dev/null; then
  if [ "$LEVEL" = lab ] && ! { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }; then
    echo "setup: Graphviz's dot is missing: check() will show graphs as text. To draw them, install Graphviz" \
         "(sudo apt-get install graphviz; macOS: brew install graphviz)." >&2
  else
    need_apt+=(graphviz)
  fi
fi
if [ "${WITH_BROWSER:-0}" = 1 ] && ! command -v chromium >/dev/null; then need_apt+=(chromium); fi
# The web site (make site, and make test, which builds it) fetches MathJax once with npm.
if { [ "${WITH_SITE:-0}" = 1 ] || [ "${WITH_BROWSER:-0}" = 1 ]; } && ! command -v npm >/dev/null; then
  need_apt+=(npm)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: missing programs. Install the Debian/Ubuntu packages '${need_apt[*]}'" >&2
    echo "       (sudo apt-get install ${need_apt[*]}; on macOS: brew install graphviz) and run make again." >&2
    exit 1
  fi
fi

# -- the virtual environment ---------------------------------------------------------------------------
# .venv/.installed: everything is in; .venv/.installed-lab: the course is. Either is redone when
# requirements.txt or pyproject.toml is newer than it.
fresh() { [ -f "$1" ] && [ ! requirements.txt -nt "$1" ] && [ ! pyproject.toml -nt "$1" ]; }
# The package's bytecode, as an installed wheel has it: where PYTHONDONTWRITEBYTECODE is set, every
# `python -m autograder` would compile its modules again (0.1 to 0.3 s each time). Only what changed.
compiled() { .venv/bin/python -m compileall -q autograder tools >/dev/null || true; }
if fresh .venv/.installed || { [ "$LEVEL" = lab ] && fresh .venv/.installed-lab; }; then compiled; exit 0; fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  "$PYTHON" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null
if [ "$LEVEL" = lab ]; then
  echo "setup: installing the course's packages into .venv (the versions requirements.txt pins)"
  .venv/bin/pip install -q -c requirements.txt -e '.[course]'
  touch .venv/.installed-lab
else
  echo "setup: installing every package requirements.txt pins into .venv"
  .venv/bin/pip install -q -r requirements.txt
  .venv/bin/pip install -q --no-deps --no-build-isolation -e .
  touch .venv/.installed .venv/.installed-lab
fi
compiled
