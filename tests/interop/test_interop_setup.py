"""`.ci/interop-setup.sh`: skips cleanly offline, needs no network once installed; the baseline file is sound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conformance_runs import BASELINE, load_baseline
from interop_harness import ROOT, TOOLS, InteropTools, run_tool

SETUP = ROOT / ".ci" / "interop-setup.sh"


def _offline_path(tmp_path: Path) -> str:
    """A PATH whose `npm` fails like a machine that cannot reach the registry."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\necho 'npm error network request failed' >&2\nexit 1\n", encoding="utf-8")
    npm.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def test_setup_skips_with_a_marker_when_the_npm_registry_is_unreachable(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    run = run_tool(["bash", SETUP], env={"PATH": _offline_path(tmp_path), "MCP_NOTEBOOK_TOOLS": str(tools)})
    assert run.returncode == 0, run.describe()
    assert run.stdout.startswith("SKIP: npm registry unreachable"), run.describe()
    assert (tools / "interop-skip").read_text(encoding="utf-8").startswith("SKIP: npm registry unreachable")


@pytest.mark.interop
def test_setup_needs_no_network_once_every_tool_is_installed(tools: InteropTools, tmp_path: Path) -> None:
    run = run_tool(["bash", SETUP], env={"PATH": _offline_path(tmp_path), "MCP_NOTEBOOK_TOOLS": str(TOOLS)})
    assert run.returncode == 0, run.describe()
    assert "all tools up to date" in run.stderr, run.describe()
    assert not (TOOLS / "interop-skip").exists()


def test_baseline_never_lists_a_scenario_both_whole_and_check_by_check() -> None:
    # Conformance 0.2.x rejects such a file outright.
    baseline = load_baseline("server")
    assert baseline.scenarios.isdisjoint(baseline.checks)
    assert "server-stateless" in baseline.checks


def test_baseline_gives_a_reason_for_every_entry() -> None:
    lines = BASELINE.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if not line.lstrip().startswith("- "):
            continue
        # A reason is a comment on the entry's own line or on the comment block the entry belongs to.
        above = next((previous for previous in reversed(lines[:number]) if not previous.lstrip().startswith("- ")), "")
        assert "#" in line or above.lstrip().startswith("#"), f"line {number + 1} has no reason: {line!r}"
