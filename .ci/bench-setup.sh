#!/usr/bin/env bash
# Installs what benchmarks/bench_http's load generators need from Debian's packages: a C compiler for
# benchmarks/load.c (the default generator; it takes the least of the cores the servers share with it)
# and wrk, which the benchmark can use instead; tests/benchmarks/test_bench_http_smoke.py runs the
# benchmark with each. Idempotent: nothing is installed when both are already there. When it cannot be installed it leaves
# test-artifacts/bench-setup.txt saying why; the wrk smoke test then skips with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."

marker=test-artifacts/bench-setup.txt
mkdir -p test-artifacts
rm -f "$marker"

fail() {
    echo "bench-setup: $1" | tee "$marker" >&2
    exit 1
}

wanted=()
command -v wrk >/dev/null 2>&1 || wanted+=(wrk)
command -v cc >/dev/null 2>&1 || wanted+=(gcc libc6-dev)
if ((${#wanted[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || fail "apt-get update failed"
    apt-get install -y -q --no-install-recommends "${wanted[@]}" >/dev/null || fail "apt-get install ${wanted[*]} failed"
fi
command -v wrk >/dev/null 2>&1 || fail "wrk is not on the PATH after installing it"
command -v cc >/dev/null 2>&1 || fail "no C compiler (cc) on the PATH after installing gcc"
wrk --version 2>&1 | head -1
echo "bench-setup: ready"
