#!/usr/bin/env bash
# Builds the JupyterLab extension from its source (jupyterlab/: `npm ci` from the lockfile, then
# jupyterlab/build.mjs) in a copy, and checks that the result is exactly the prebuilt extension committed in
# jupyterlab/labextension/ (what the wheel ships). Usage: .ci/labextension-check.sh [OUTPUT_DIR]
# Exit 0: identical (or skipped: no Node/npm, or the npm registry cannot be reached; the reason is printed and
# left in test-artifacts/labextension-check.txt). Exit 1: the build differs (rebuild with
# `cd jupyterlab && npm ci && npm run build` and commit labextension/).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-$root/test-artifacts/labextension-build}
marker=$root/test-artifacts/labextension-check.txt
mkdir -p "$root/test-artifacts"
rm -f "$marker"

skip() {
    echo "labextension-check: skipped: $1" | tee "$marker" >&2
    exit 0
}

command -v node >/dev/null 2>&1 || skip "no node on PATH (Node 20 builds the extension)"
command -v npm >/dev/null 2>&1 || skip "no npm on PATH"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The same path on every machine would not matter: the output names only hash the content.
mkdir -p "$work/jupyterlab"
cp -r jupyterlab/package.json jupyterlab/package-lock.json jupyterlab/tsconfig.json jupyterlab/build.mjs jupyterlab/webpack.config.js \
    jupyterlab/src jupyterlab/style jupyterlab/schema "$work/jupyterlab/"
cd "$work/jupyterlab"
if ! npm ci --no-audit --no-fund --ignore-scripts >npm-ci.log 2>&1; then
    if grep -q -E "ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|network" npm-ci.log; then
        skip "the npm registry cannot be reached: $(tail -1 npm-ci.log)"
    fi
    cat npm-ci.log >&2
    echo "labextension-check: npm ci failed" >&2
    exit 1
fi
if ! npm run -s build >build.log 2>&1; then
    cat build.log >&2
    echo "labextension-check: the build failed" >&2
    exit 1
fi
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -r labextension "$out"
if ! diff -r "$out" "$root/jupyterlab/labextension"; then
    echo "labextension-check: jupyterlab/labextension/ is not what the source builds to:" \
        "run \`cd jupyterlab && npm ci && npm run build\` and commit jupyterlab/labextension/" >&2
    exit 1
fi
echo "labextension-check: the committed build is what the source builds to ($(find "$out" -type f | wc -l) files)"
