# Sourced by lowest-setup.sh and sdk-newest-setup.sh (NAME set first): a venv of its own (.venv-NAME) and a
# report, test-artifacts/NAME.txt, each line also in the CI log. The scripts always exit 0: the report says.
set -uo pipefail
cd "$(dirname "$0")/.."

report=test-artifacts/$NAME.txt
venv=.venv-$NAME
mkdir -p test-artifacts
: >"$report"

say() { echo "$NAME: $1" | tee -a "$report"; }

make_venv() { python3 -m venv "$venv" || { say "SKIP: could not create $venv"; exit 0; }; }

# run_tests OUTPUT SECONDS PASSED FAILED PYTEST-ARGUMENTS...: pytest in the venv, its output in
# test-artifacts/OUTPUT.txt; says PASS: PASSED, or FAIL: FAILED with pytest's last lines (and returns 1).
run_tests() {
    local output=test-artifacts/$1.txt seconds=$2 passed=$3 failed=$4
    shift 4
    if timeout "$seconds" "$venv/bin/python" -m pytest -q -p no:cacheprovider -rf "$@" >"$output" 2>&1; then
        say "PASS: $passed"
        return 0
    fi
    say "FAIL: $failed (see $output):"
    tail -n 15 "$output" | tee -a "$report"
    return 1
}
