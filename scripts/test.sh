#!/usr/bin/env bash
# Install judgekit with its test extras into ./.venv and run the whole test suite.
# Used by the README's second command and by CI (.ci/run). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# The distribution was called `judgekit` before it became judgekit-trust (`judgekit` on PyPI is an
# unrelated package with the same import name and command): a `judgekit` in this venv would clash.
if .venv/bin/python -m pip show -q judgekit >/dev/null 2>&1; then
  echo "removing the 'judgekit' distribution from .venv (judgekit-trust replaces it)" >&2
  .venv/bin/python -m pip uninstall -y -q judgekit
fi
.venv/bin/pip install -q --disable-pip-version-check -e '.[test,labelstudio,inspect,hf,mlflow,postgres]'
# promptfoo for tests/integrations/test_promptfoo.py: Node from Debian's packages and promptfoo from
# npm (pinned: the last tested with Node 20, which Debian ships), into .cache/promptfoo, when missing
if [ ! -x .cache/promptfoo/node_modules/.bin/promptfoo ]; then
  if ! command -v npm >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  fi
  if command -v npm >/dev/null 2>&1; then
    mkdir -p .cache/promptfoo
    npm install --prefix .cache/promptfoo --no-audit --no-fund --silent promptfoo@0.121.20 || echo "npm could not install promptfoo" >&2
  fi
fi
# PostgreSQL for the store tests on the second backend (tests/pg_server.py starts a throwaway
# server from its binaries: initdb and pg_ctl on PATH or under /usr/lib/postgresql/*/bin)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null \
      || echo "apt-get could not install postgresql" >&2
  fi
fi
exec .venv/bin/python -m pytest "$@"
