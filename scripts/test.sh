#!/usr/bin/env bash
# One command from a fresh clone: set up, lint, and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test  # the package with its test extra (pytest, ruff, …)
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest "$@"
