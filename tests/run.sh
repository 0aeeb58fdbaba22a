#!/usr/bin/env bash
# The README's test command: install everything the tests need, then run pytest.
#   bash tests/run.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# Debian's Chromium for the real-browser tests (Playwright cannot download its own here).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian's chromium for the browser tests..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "chromium is missing: install Debian's 'chromium' package (the browser tests need it)" >&2
    fi
fi

# binder/requirements.txt pins the notebook stack: the suite runs on what Binder runs.
"$PY" -m pip install -q -c binder/requirements.txt -e ".[test]"

# Pictures in the stored notebook outputs were drawn by graphviz-pure; a system `dot`
# draws slightly different SVG, so the tests pin the engine that ships with nbtape.
export NBTAPE_GRAPHVIZ="${NBTAPE_GRAPHVIZ:-graphviz-pure}"
exec "$PY" -m pytest "$@"
