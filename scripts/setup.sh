#!/usr/bin/env bash
# Create .venv (if missing) and install the project with its test extra. Idempotent.
# The install builds the seen-set's C loops (discovery_crawler/urls/_seen_table.c) with the
# system's C compiler; without one it still installs, and the loops run in Python.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] \
  || [ discovery_crawler/urls/_seen_table.c -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test]"
  touch "$stamp"
fi
