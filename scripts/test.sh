#!/usr/bin/env bash
# Install judgekit with its test extras into ./.venv and run the whole test suite.
# Used by the README's second command and by CI (.ci/run). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[test,labelstudio]'
exec .venv/bin/python -m pytest "$@"
