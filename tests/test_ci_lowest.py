""".ci/lowest-setup.sh: the fast suite at the lowest allowed versions, and what its report does to the build.

The script runs for real (`ci_scripts`). The last test reads this checkout's report: when the script found a
lower bound that does not work, the suite fails, so CI does.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from ci_scripts import REPO, run_script, scratch_checkout

SCRIPT = "lowest-setup.sh"
REPORT = REPO / "test-artifacts" / "lowest.txt"

PIP = """#!/bin/sh
echo "pip $*" >>"$FAKE_LOG"
case "$*" in *--upgrade*) exit 0;; esac
printf '%s\\n' "$FAKE_PIP_OUTPUT"
exit "${FAKE_PIP_RC:-0}"
"""
PYTHON = """#!/bin/sh
case "$*" in
    *importlib.metadata*) echo "0.54.0" ;;
    *test_uvicorn_seam*) echo "canaries $*" >>"$FAKE_LOG"; exit "${FAKE_CANARY_RC:-0}" ;;
    *pytest*) echo "suite $*" >>"$FAKE_LOG"; printf '%s\\n' "$FAKE_PYTEST_OUTPUT"; exit "${FAKE_PYTEST_RC:-0}" ;;
esac
"""


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return scratch_checkout(tmp_path, pip=PIP, python=PYTHON)


def run_setup(root: Path, **fake: str) -> tuple[subprocess.CompletedProcess[str], str, list[str]]:
    return run_script(root, SCRIPT, "lowest", unset="MCP_NOTEBOOK_LOWEST_", **fake)


def _declared() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["jupyter"]]


def test_every_dependency_is_pinned_to_its_lower_bound_and_the_fast_suite_runs(scratch: Path) -> None:
    done, report, calls = run_setup(scratch, FAKE_PYTEST_OUTPUT="5 passed")
    assert done.returncode == 0, done.stderr
    pins = (scratch / "test-artifacts" / "lowest-constraints.txt").read_text(encoding="utf-8").splitlines()
    assert len(pins) == len(_declared())
    assert "uvicorn==0.51" in pins and "mcp==2.3" in pins
    assert "uvloop==0.19; sys_platform != 'win32'" in pins  # its marker kept
    extras = (scratch / "test-artifacts" / "lowest-test-requirements.txt").read_text(encoding="utf-8")
    assert "pytest>=8" in extras and "fastmcp" not in extras
    [install] = [call for call in calls if call.startswith("pip install") and "--upgrade" not in call]
    assert " -c test-artifacts/lowest-constraints.txt -e . -r test-artifacts/lowest-test-requirements.txt" in install
    [suite] = [call for call in calls if call.startswith("suite ")]
    assert suite.endswith("-m not slow tests")
    assert report.splitlines()[1:] == [
        "lowest: PASS: the fast suite passes at the lowest allowed versions",
        "lowest: PASS: uvicorn's seam canaries pass at uvicorn 0.54.0, the highest uvicorn>=0.51,<0.55 allows",
    ]
    assert any(call.startswith("pip install -q --upgrade uvicorn>=0.51,<0.55") for call in calls)


def test_bounds_that_cannot_be_installed_together_fail_and_say_which(scratch: Path) -> None:
    conflict = "ERROR: ResolutionImpossible: fastmcp 4.0 depends on starlette>=1.0.1"
    done, report, _ = run_setup(scratch, FAKE_PIP_RC="1", FAKE_PIP_OUTPUT=conflict)
    assert done.returncode == 0, done.stderr
    assert report.startswith("lowest: FAIL: the lowest allowed versions cannot be installed together")
    assert conflict in report


def test_a_failing_suite_fails_with_its_last_lines_and_the_canaries_are_not_run(scratch: Path) -> None:
    failure = "FAILED tests/test_x.py::test_y - AttributeError: module 'anyio' has no attribute 'z'"
    done, report, calls = run_setup(scratch, FAKE_PYTEST_OUTPUT=failure, FAKE_PYTEST_RC="1")
    assert done.returncode == 0, done.stderr
    assert "lowest: FAIL: at the lowest allowed versions" in report and failure in report
    assert not any(call.startswith("canaries") for call in calls)


def test_the_canaries_failing_at_the_newest_uvicorn_fail(scratch: Path) -> None:
    done, report, _ = run_setup(scratch, FAKE_PYTEST_OUTPUT="5 passed", FAKE_CANARY_RC="1")
    assert done.returncode == 0, done.stderr
    assert "lowest: FAIL: uvicorn's seam canaries at uvicorn 0.54.0" in report


def test_an_unreachable_registry_is_a_skip_that_says_so(scratch: Path) -> None:
    done, report, _ = run_setup(scratch, FAKE_PIP_RC="1", FAKE_PIP_OUTPUT="network is unreachable")
    assert done.returncode == 0, done.stderr
    assert report.strip() == "lowest: SKIP: could not install the project (is the package registry reachable?)"


def test_a_dependency_without_a_lower_bound_fails(scratch: Path) -> None:
    pyproject = scratch / "pyproject.toml"
    pyproject.write_text(re.sub(r'"nbformat>=[^"]*"', '"nbformat"', pyproject.read_text(encoding="utf-8")), "utf-8")
    done, report, _ = run_setup(scratch)
    assert done.returncode == 0, done.stderr
    assert "'nbformat' has no lower bound" in done.stderr
    assert report.startswith("lowest: FAIL: pyproject.toml's dependencies cannot be read as lower bounds")


def test_the_lowest_allowed_versions_pass() -> None:
    """The verdict of this checkout's last `.ci/lowest-setup.sh` (.ci/test runs it before the suite)."""
    if not REPORT.exists():
        pytest.skip("no test-artifacts/lowest.txt: run `bash .ci/lowest-setup.sh` (CI does)")
    report = REPORT.read_text(encoding="utf-8")
    if re.search(r"^lowest: FAIL", report, re.MULTILINE):
        pytest.fail(f"{REPORT.relative_to(REPO)}:\n{report}", pytrace=False)
    if not re.search(r"^lowest: (PASS|SKIP)", report, re.MULTILINE):
        pytest.skip("the lowest versions are being tested now (this is that run)")
    if report.startswith("lowest: SKIP"):
        pytest.skip(report.strip())
