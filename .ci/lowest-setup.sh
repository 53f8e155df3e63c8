#!/usr/bin/env bash
# Runs the fast suite with every dependency of the product at the lowest version pyproject.toml allows, in its
# own venv (.venv-lowest): the lower bounds are tested, not hoped for. Each `name>=X` of the dependencies (and of
# the `jupyter` extra) becomes the constraint `name==X`; when pip cannot install them together, a bound is lower
# than anything that works and the report says so. Then uvicorn's seam canaries run again at the highest uvicorn
# the pin allows (tests/transports/test_uvicorn_seam.py): both ends of the range the seam claims.
#
# The test extra is installed around those pins, but for the packages in LEFT_OUT, which need newer versions of
# our dependencies than our lower bounds (only slow tests use them, and skip without them).
#
# The report is test-artifacts/lowest.txt: PASS, FAIL (with pytest's last lines) or SKIP (no registry);
# tests/test_ci_lowest.py fails the suite on FAIL. Bounded in time: install 300 s, suite 600 s, canaries 120 s.
# MCP_NOTEBOOK_LOWEST_TESTS replaces the pytest arguments (default: every test not marked slow).
NAME=lowest
# shellcheck source=venv-report.sh
source "$(dirname "$0")/venv-report.sh"
LEFT_OUT="fastmcp"  # the FastMCP server of the typed-form tests (slow) needs starlette>=1.0.1

constraints=test-artifacts/lowest-constraints.txt
extras=test-artifacts/lowest-test-requirements.txt
if ! python3 - "$constraints" "$extras" "$LEFT_OUT" <<'EOF'
import re
import sys
import tomllib

constraints, extras, left_out = sys.argv[1], sys.argv[2], set(sys.argv[3].split())
with open("pyproject.toml", "rb") as file:
    project = tomllib.load(file)["project"]
lowest = []
for requirement in [*project["dependencies"], *project["optional-dependencies"]["jupyter"]]:
    found = re.match(r"^([A-Za-z0-9_.\-]+)\s*>=\s*([^,;\s]+)[^;]*(;.*)?$", requirement)
    if found is None:
        sys.exit(f"{requirement!r} has no lower bound (name>=X): every dependency needs one")
    lowest.append(f"{found[1]}=={found[2]}{found[3] or ''}")
with open(constraints, "w") as file:
    file.write("\n".join(lowest) + "\n")
tests = [r for r in project["optional-dependencies"]["test"] if re.split(r"[<>=!~;\[ ]", r)[0] not in left_out]
with open(extras, "w") as file:
    file.write("\n".join(tests) + "\n")
EOF
then
    say "FAIL: pyproject.toml's dependencies cannot be read as lower bounds (above)"
    exit 0
fi

make_venv
if ! timeout 300 "$venv/bin/pip" install -q -c "$constraints" -e . -r "$extras" >test-artifacts/lowest-pip.txt 2>&1; then
    if grep -qiE "ResolutionImpossible|conflict|No matching distribution" test-artifacts/lowest-pip.txt; then
        say "FAIL: the lowest allowed versions cannot be installed together; raise the bound pip names:"
        tail -n 15 test-artifacts/lowest-pip.txt | tee -a "$report"
    else
        say "SKIP: could not install the project (is the package registry reachable?)"
    fi
    exit 0
fi
say "testing $(tr '\n' ' ' <"$constraints")"
# shellcheck disable=SC2086  # the override is a list of pytest arguments
run_tests lowest-pytest 600 "the fast suite passes at the lowest allowed versions" \
    "at the lowest allowed versions" ${MCP_NOTEBOOK_LOWEST_TESTS:--m "not slow" tests} || exit 0

uvicorn_spec=$(grep -o '"uvicorn[^"]*"' pyproject.toml | head -n 1 | tr -d '"')
if ! timeout 120 "$venv/bin/pip" install -q --upgrade "$uvicorn_spec" >>test-artifacts/lowest-pip.txt 2>&1; then
    say "SKIP: could not install the newest $uvicorn_spec for the seam's canaries"
    exit 0
fi
newest=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("uvicorn"))')
run_tests lowest-uvicorn-newest 120 "uvicorn's seam canaries pass at uvicorn $newest, the highest $uvicorn_spec allows" \
    "uvicorn's seam canaries at uvicorn $newest" tests/transports/test_uvicorn_seam.py
exit 0
