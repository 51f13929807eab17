#!/usr/bin/env bash
# Create .venv (if missing) and install the project with its test extra. Idempotent.
# The install builds the C extensions (setup.py; the seen-set's probe loops,
# plain paths' base slugs, the feed's and state's lines) with the system's C compiler;
# without one it still installs, and the same work runs in Python.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] \
  || [ -n "$(find discovery_crawler \( -name '*.c' -o -name '*.h' \) -newer "$stamp")" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test]"
  touch "$stamp"
fi
# Bytecode for the project's modules, as pip writes it for an installed package: an editable
# install has none, and where PYTHONDONTWRITEBYTECODE is set each run (the spider and its
# sitemap worker) compiled every module again (~0.15 s of CPU, measured). Quick when current.
.venv/bin/python -m compileall -q discovery_crawler settings_profiles >/dev/null
