#!/usr/bin/env bash
# Runs the fast suite against the newest `mcp` release the pin in pyproject.toml allows, in its own venv
# (.venv-sdk-newest), and reports the result without failing CI: an early warning that a new SDK release
# moved one of the touchpoints in mcp_notebook/protocol/sdk_seam.py (the canaries in
# tests/protocol/test_sdk_seam.py then name it). MCP_NOTEBOOK_SDK_SPEC tries another range,
# e.g. MCP_NOTEBOOK_SDK_SPEC='mcp<3' for the newest 2.x before moving the pin; MCP_NOTEBOOK_SDK_TESTS
# replaces the pytest arguments (default: the canaries first, then every test not marked slow).
# The report is test-artifacts/sdk-newest.txt; this script always exits 0.
NAME=sdk-newest
# shellcheck source=venv-report.sh
source "$(dirname "$0")/venv-report.sh"

make_venv
if ! "$venv/bin/pip" install -q --upgrade --upgrade-strategy eager -e '.[test]'; then
    say "SKIP: could not install the project (is the package registry reachable?)"
    exit 0
fi
if [ -n "${MCP_NOTEBOOK_SDK_SPEC:-}" ]; then
    "$venv/bin/pip" install -q --upgrade "$MCP_NOTEBOOK_SDK_SPEC" \
        || { say "SKIP: could not install $MCP_NOTEBOOK_SDK_SPEC"; exit 0; }
fi
version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')
say "testing mcp $version"
# shellcheck disable=SC2086  # the override is a list of pytest arguments
run_tests sdk-newest-pytest 600 "the tests pass with mcp $version" "with mcp $version" \
    ${MCP_NOTEBOOK_SDK_TESTS:--m "not slow" tests/protocol/test_sdk_seam.py tests}
exit 0
