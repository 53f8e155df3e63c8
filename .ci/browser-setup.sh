#!/usr/bin/env bash
# Installs the browser stack for tests/browser: Debian's chromium (apt) and JupyterLab, Jupyter
# Notebook 7 + Playwright (pip, into .venv). Idempotent: every step is skipped when its result is already there.
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
# Notebook 7 is a server extension of the same jupyter server as Lab: the tests open its UI at /notebooks/.
has_stack='import jupyterlab, playwright, notebook; assert notebook.__version__.startswith("7.")'
if ! .venv/bin/python -c "$has_stack" >/dev/null 2>&1; then
    .venv/bin/pip install -q jupyterlab playwright 'notebook>=7,<8' \
        || fail "pip install jupyterlab playwright notebook>=7 failed"
fi
.venv/bin/python -c "$has_stack
print('jupyterlab', jupyterlab.__version__, '/ notebook', notebook.__version__)" \
    || fail "jupyterlab/playwright/notebook 7 did not import"
echo "browser-setup: ready"
