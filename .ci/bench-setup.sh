#!/usr/bin/env bash
# Installs wrk from Debian's packages: benchmarks/bench_http's load generator when it is on the PATH
# (it takes less of the cores the servers share with it than the Python one), and
# tests/benchmarks/test_bench_http_smoke.py runs the benchmark with it. Idempotent: nothing is
# installed when wrk is already there. When it cannot be installed it leaves
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

if ! command -v wrk >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || fail "apt-get update failed"
    apt-get install -y -q --no-install-recommends wrk >/dev/null || fail "apt-get install wrk failed"
fi
command -v wrk >/dev/null 2>&1 || fail "wrk is not on the PATH after installing it"
wrk --version 2>&1 | head -1
echo "bench-setup: ready"
