#!/usr/bin/env bash
# Create .venv (if missing) and install the project into it. Idempotent.
#   scripts/setup.sh           the package with its test extra (pytest, hypothesis, ruff,
#                              playwright): what scripts/test.sh needs
#   scripts/setup.sh package   the package alone: what a crawl needs (scripts/demo.sh)
#   scripts/setup.sh EXTRA     the package with EXTRA (pyproject.toml: test, render, redis)
# The install builds the C extensions (setup.py; the seen-set's probe loops,
# plain paths' base slugs, the feed's and state's lines) with the system's C compiler;
# without one it still installs, and the same work runs in Python.
set -euo pipefail
cd "$(dirname "$0")/.."
extra=${1:-test}
case "$extra" in
  package) spec="." ;;
  test | render | redis | test,render | render,test) spec=".[$extra]" ;;
  *)
    echo "error: scripts/setup.sh $extra: no such extra; give package, test, render or redis" >&2
    exit 2
    ;;
esac
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
# One stamp per install, so a venv the demo set up with the package alone still gets the
# test extra when scripts/test.sh runs; an install with an extra includes the package.
current() {
  [ -f "$1" ] && [ ! pyproject.toml -nt "$1" ] && [ ! setup.py -nt "$1" ] \
    && [ -z "$(find discovery_crawler \( -name '*.c' -o -name '*.h' \) -newer "$1")" ]
}
stamp=".venv/.installed-${extra//,/-}"
up_to_date=0
if current "$stamp"; then
  up_to_date=1
elif [ "$extra" = package ]; then
  for other in .venv/.installed-*; do
    if current "$other"; then up_to_date=1; fi
  done
fi
if [ "$up_to_date" = 0 ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e "$spec"
  touch "$stamp"
fi
# Bytecode for the project's modules, as pip writes it for an installed package: an editable
# install has none, and where PYTHONDONTWRITEBYTECODE is set each run (the spider and its
# sitemap worker) compiled every module again (~0.15 s of CPU, measured). Quick when current.
.venv/bin/python -m compileall -q discovery_crawler settings_profiles >/dev/null
