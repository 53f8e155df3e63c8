#!/usr/bin/env bash
# Install what the JupyterHub test (tests/jupyter_server/test_jupyterhub.py) needs besides the Python test extras
# (jupyterhub, jupyter_server): configurable-http-proxy from npm, into .tools/hub/ (gitignored).
#
# The version is pinned by tests/jupyter_server/npm/hub/package.json + package-lock.json, installed with `npm ci`.
# Idempotent: when the lock file has not changed since the last successful install, nothing is done (no network).
#
# When the npm registry cannot be reached (or npm is missing), this prints "SKIP: npm registry unreachable ...",
# writes the same line to .tools/hub-skip and exits 0: the JupyterHub test then skips with that reason.
# Any other failure exits non-zero, and the test fails saying the proxy is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${MCP_NOTEBOOK_TOOLS:-$ROOT/.tools}"
LOCK="$ROOT/tests/jupyter_server/npm/hub"
DEST="$TOOLS/hub"
SKIP_MARKER="$TOOLS/hub-skip"
PROXY="$DEST/node_modules/.bin/configurable-http-proxy"

log() { printf 'hub-setup: %s\n' "$*" >&2; }

skip() {
    mkdir -p "$TOOLS"
    printf 'SKIP: %s\n' "$1" | tee "$SKIP_MARKER"
    exit 0
}

stamp="$(cat "$LOCK/package.json" "$LOCK/package-lock.json" | sha256sum | cut -d' ' -f1)"
mkdir -p "$TOOLS"
rm -f "$SKIP_MARKER"

if [[ -x "$PROXY" && -f "$DEST/.hub-stamp" && "$(cat "$DEST/.hub-stamp")" == "$stamp" ]]; then
    log "configurable-http-proxy up to date in $DEST"
    exit 0
fi

command -v npm >/dev/null 2>&1 || skip "npm registry unreachable (npm is not installed)"
command -v node >/dev/null 2>&1 || skip "npm registry unreachable (node is not installed)"
# Ask the registry first, so an offline machine skips instead of failing halfway through.
if ! timeout 60 npm ping >/dev/null 2>&1; then
    skip "npm registry unreachable ($(npm config get registry 2>/dev/null || echo '?'))"
fi

log "installing configurable-http-proxy into $DEST"
rm -rf "$DEST"
mkdir -p "$DEST"
cp "$LOCK/package.json" "$LOCK/package-lock.json" "$DEST/"
(cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error)
"$PROXY" --version >/dev/null
echo "$stamp" >"$DEST/.hub-stamp"
log "configurable-http-proxy $("$PROXY" --version) ready in $DEST"
