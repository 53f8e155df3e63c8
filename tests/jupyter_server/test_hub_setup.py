"""`.ci/hub-setup.sh`: skips cleanly without the npm registry, needs no network once installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hub_harness import PROXY, SKIP_MARKER, TOOLS, locate_proxy
from jupyter_harness import REPO

SETUP = REPO / ".ci" / "hub-setup.sh"


def offline_path(tmp_path: Path) -> str:
    """A PATH whose `npm` fails like a machine that cannot reach the registry."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\necho 'npm error network request failed' >&2\nexit 1\n", encoding="utf-8")
    npm.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def run_setup(tmp_path: Path, tools: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": offline_path(tmp_path), "MCP_NOTEBOOK_TOOLS": str(tools)}
    return subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, env=env, timeout=120)


def test_setup_skips_with_a_marker_when_the_npm_registry_is_unreachable(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    done = run_setup(tmp_path, tools)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("SKIP: npm registry unreachable"), done.stdout + done.stderr
    assert (tools / "hub-skip").read_text(encoding="utf-8").startswith("SKIP: npm registry unreachable")


@pytest.mark.interop  # needs configurable-http-proxy from npm, installed by the setup: not in the fast suite
def test_setup_needs_no_network_once_the_proxy_is_installed(tmp_path: Path) -> None:
    locate_proxy()  # skips only where the setup itself could not reach npm
    done = run_setup(tmp_path, TOOLS)
    assert done.returncode == 0, done.stderr
    assert "configurable-http-proxy up to date" in done.stderr
    assert not SKIP_MARKER.exists()
    assert PROXY.exists()
