#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04 or 24.04).
# It installs Graphviz, a Python >= 3.11 and the pinned CPU packages of requirements.txt into a virtual
# environment that every user may read: students' code runs under user ids of its own, which may not
# enter /autograder/source (mode 700), so nothing it imports may live there.
set -euo pipefail
SOURCE=/autograder/source
VENV=/opt/autograd-course/venv
export DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1

apt-get update -qq
apt-get install -y -qq --no-install-recommends graphviz ca-certificates >/dev/null

PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    PYTHON="$candidate"
    break
  fi
done
if [ -z "$PYTHON" ]; then  # Ubuntu 22.04 ships 3.10; its 3.11 is a package away
  apt-get install -y -qq --no-install-recommends python3.11 >/dev/null
  PYTHON=python3.11
fi
version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
apt-get install -y -qq --no-install-recommends "python${version}-venv" >/dev/null || true
echo "setup.sh: Python $("$PYTHON" --version) from $(command -v "$PYTHON")"

mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# PyTorch for the CPU from PyTorch's own index (the PyPI wheel carries CUDA, gigabytes unused here);
# then the rest, which finds this torch already satisfying its pin.
"$VENV/bin/pip" install -q --index-url https://download.pytorch.org/whl/cpu "$(grep -E '^torch==' "$SOURCE/requirements.txt")"
"$VENV/bin/pip" install -q -r "$SOURCE/requirements.txt"
chmod -R a+rX "$(dirname "$VENV")"
# The grader's bytecode written once here: run_autograder sets PYTHONDONTWRITEBYTECODE (the source folder
# is the image's), and would otherwise compile every module again for every submission (0.1 to 0.3 s).
"$VENV/bin/python" -m compileall -q "$SOURCE" >/dev/null
chmod 700 "$SOURCE"

# Fail the build here, not on the first student: import everything and draw one graph.
PYTHONPATH="$SOURCE" "$VENV/bin/python" -m autograder.gradescope check --root /autograder
