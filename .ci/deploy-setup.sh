#!/usr/bin/env bash
# Installs nginx from Debian's packages for tests/e2e/test_deploy_nginx.py, which runs the shipped
# examples/deploy/nginx.conf (as a normal process, on loopback) in front of three replicas.
# Idempotent: nothing is installed when nginx is already there. When it cannot be installed it leaves
# test-artifacts/deploy-setup.txt saying why; the nginx tests then skip with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."

marker=test-artifacts/deploy-setup.txt
mkdir -p test-artifacts
rm -f "$marker"

fail() {
    echo "deploy-setup: $1" | tee "$marker" >&2
    exit 1
}

nginx_binary() {
    command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; }
}

if [ -z "$(nginx_binary)" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || fail "apt-get update failed"
    # nginx-light would do, but `nginx` is the name every Debian release has.
    apt-get install -y -q --no-install-recommends nginx >/dev/null || fail "apt-get install nginx failed"
fi
nginx="$(nginx_binary)"
[ -n "$nginx" ] || fail "nginx is not on PATH after installing it"
# The package starts a system nginx on port 80; the tests start their own and need nothing of it.
"$nginx" -v 2>&1 || fail "nginx is installed but does not start"
echo "deploy-setup: ready"
