#!/usr/bin/env bash
# Installs the browser stack for tests/browser: Debian's chromium (apt) and JupyterLab + Playwright
# (pip, into .venv). Idempotent: every step is skipped when its result is already there.
# Never runs `playwright install`: the tests drive /usr/bin/chromium, so no browser build is downloaded.
# When a registry cannot be reached it leaves test-artifacts/browser-setup.txt saying why; the
# browser tests then skip with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."

marker=test-artifacts/browser-setup.txt
mkdir -p test-artifacts
rm -f "$marker"

fail() {
    echo "browser-setup: $1" | tee "$marker" >&2
    exit 1
}

if ! command -v chromium >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || fail "apt-get update failed"
    apt-get install -y -q --no-install-recommends chromium fonts-liberation >/dev/null \
        || fail "apt-get install chromium failed"
fi
chromium --version || fail "chromium is installed but does not start"

if [ ! -x .venv/bin/python ]; then
    fail "no .venv: create it first (python3 -m venv .venv && .venv/bin/pip install -e '.[test]')"
fi
if ! .venv/bin/python -c "import jupyterlab, playwright" >/dev/null 2>&1; then
    .venv/bin/pip install -q jupyterlab playwright || fail "pip install jupyterlab playwright failed"
fi
.venv/bin/python -c "import jupyterlab, playwright; print('jupyterlab', jupyterlab.__version__)" \
    || fail "jupyterlab/playwright did not import"
echo "browser-setup: ready"
