"""`.ci/sdk-newest-setup.sh`: the suite against the newest SDK, reported as PASS, FAIL (in the canaries' words), SKIP.

The script runs for real (`ci_scripts`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from ci_scripts import run_script, scratch_checkout

SCRIPT = "sdk-newest-setup.sh"
CANARY_FAILURE = (
    "FAILED tests/protocol/test_sdk_seam.py::test_context_streams_carry_the_senders_context - AssertionError: "
    "mcp 2.9.1 (tested: 2.3): the SDK touchpoint mcp.shared._context_streams changed: no last_context"
)

PIP = """#!/bin/sh
echo "pip $*" >>"$FAKE_LOG"
case "$*" in *mcp*) exit "${FAKE_SPEC_RC:-0}";; esac
exit "${FAKE_PIP_RC:-0}"
"""
PYTHON = """#!/bin/sh
case "$*" in
    *importlib.metadata*) echo "$FAKE_MCP_VERSION" ;;
    *pytest*) for arg in "$@"; do echo "pytest-arg $arg" >>"$FAKE_LOG"; done
              printf '%s\\n' "$FAKE_PYTEST_OUTPUT"; exit "${FAKE_PYTEST_RC:-0}" ;;
esac
"""


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return scratch_checkout(tmp_path, pip=PIP, python=PYTHON)


def run_setup(root: Path, **fake: str) -> tuple[subprocess.CompletedProcess[str], str, list[str]]:
    return run_script(root, SCRIPT, "sdk-newest", unset="MCP_NOTEBOOK_SDK_", FAKE_MCP_VERSION="2.9.1", **fake)


def test_a_passing_run_reports_pass_with_the_version_it_tested(scratch: Path) -> None:
    done, report, calls = run_setup(scratch, FAKE_PYTEST_OUTPUT="5 passed")
    assert done.returncode == 0, done.stderr
    assert report.splitlines() == ["sdk-newest: testing mcp 2.9.1", "sdk-newest: PASS: the tests pass with mcp 2.9.1"]
    assert "sdk-newest: PASS" in done.stdout  # in the CI log too
    argv = [line.removeprefix("pytest-arg ") for line in calls if line.startswith("pytest-arg ")]
    pytest_args = argv[argv.index("pytest") + 1 :]  # after `python -m pytest`
    assert pytest_args[pytest_args.index("-m") + 1] == "not slow"
    assert pytest_args.index("tests/protocol/test_sdk_seam.py") < pytest_args.index("tests")  # the canaries first


def test_a_failing_run_reports_fail_with_the_canary_that_names_the_touchpoint(scratch: Path) -> None:
    done, report, _ = run_setup(scratch, FAKE_PYTEST_OUTPUT=CANARY_FAILURE, FAKE_PYTEST_RC="1")
    assert done.returncode == 0, done.stderr  # an early warning, never a failed build
    assert "sdk-newest: FAIL: with mcp 2.9.1" in report
    assert CANARY_FAILURE in report and CANARY_FAILURE in done.stdout
    assert CANARY_FAILURE in (scratch / "test-artifacts" / "sdk-newest-pytest.txt").read_text(encoding="utf-8")


def test_an_unreachable_registry_is_a_skip_that_says_so(scratch: Path) -> None:
    done, report, _ = run_setup(scratch, FAKE_PIP_RC="1")
    assert done.returncode == 0, done.stderr
    assert report.strip() == "sdk-newest: SKIP: could not install the project (is the package registry reachable?)"


def test_another_range_is_installed_when_asked(scratch: Path) -> None:
    done, report, calls = run_setup(scratch, MCP_NOTEBOOK_SDK_SPEC="mcp<3", FAKE_PYTEST_OUTPUT="5 passed")
    assert done.returncode == 0, done.stderr
    assert "pip install -q --upgrade mcp<3" in calls
    assert "PASS: the tests pass with mcp 2.9.1" in report
    failed, report, _ = run_setup(scratch, MCP_NOTEBOOK_SDK_SPEC="mcp<3", FAKE_SPEC_RC="1")
    assert failed.returncode == 0 and report.strip() == "sdk-newest: SKIP: could not install mcp<3"
