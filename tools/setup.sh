#!/usr/bin/env bash
# Creates .venv (Python 3.11) with the pinned packages and the autograder in editable mode, and makes sure
# the Debian programs the course needs are present: Graphviz's `dot` always, Chromium with WITH_BROWSER=1,
# npm (to fetch MathJax for the web site) with WITH_SITE=1 or WITH_BROWSER=1.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v dot >/dev/null || need_apt+=(graphviz)
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

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "setup: Python 3.11 is required (found $("$PYTHON" --version 2>&1)); set PYTHON=/path/to/python3.11." >&2
  exit 1
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
  .venv/bin/pip install -q --upgrade pip >/dev/null
  .venv/bin/pip install -q -r requirements.txt
  .venv/bin/pip install -q --no-deps --no-build-isolation -e .
  touch "$stamp"
fi
