"""Helpers for the %mcp tests: an isolated IPython shell with the extension loaded, and the test servers."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

# The test servers and process helpers live next to the client tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from client_harness import (
    DEADLINE,
    LEGACY_SERVER,
    SDK_SERVER,
    eventually,
    legacy_config,
    live_children,
    running_http_server,
    running_url_process,
    sdk_config,
    wait_until,
)
from trusted_files import trusted

__all__ = [
    "DEADLINE",
    "LEGACY_SERVER",
    "SDK_SERVER",
    "eventually",
    "isolated_shell",
    "legacy_config",
    "legacy_entry",
    "live_children",
    "running_http_server",
    "running_url_process",
    "sdk_config",
    "wait_until",
    "write_mcp_json",
]


def legacy_entry(*args: str) -> dict[str, Any]:
    """A `mcpServers` entry that starts the stdlib test server."""
    return {"command": sys.executable, "args": [str(LEGACY_SERVER), *args]}


def write_mcp_json(folder: Path, servers: dict[str, dict[str, Any]]) -> Path:
    """A project-local `mcp.json` in `folder`, which the user trusts (it is their own project)."""
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return trusted(path)


@pytest.fixture
def isolated_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    """The IPython shell with `%load_ext mcp_notebook`, in an empty project folder and home.

    The user's real MCP configuration never leaks in; `%unload_ext` runs afterwards.
    """
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("MCP_NOTEBOOK_CONFIG", raising=False)
    monkeypatch.chdir(project)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "mcp_notebook")
