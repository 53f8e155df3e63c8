"""The editor's first seconds: `mcp-notebook-lsp` as an editor starts it, with a real local MCP server.

The very first completion after `initialized` already says that prompts are
on their way ("connecting to 1 server…", in a list marked incomplete), and
the server's prompts follow. A later start answers the first `/` from the list
the server gave at its last start, then from the fresh one. What the bridge imports before it answers
`initialize`, and before it starts a stdio server, is checked in fresh
interpreters (import checks, not timings: the machine may be busy).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from bridge_harness import BRIDGE, DEADLINE, start_bridge
from lsprotocol import types

pytestmark = pytest.mark.slow

TINY = Path(__file__).with_name("tiny_mcp_server.py")
STATIC = Path(__file__).with_name("static_catalog_server.py")
URI = "file:///work/first.md"


def _config(folder: Path) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"tiny": {"command": sys.executable, "args": [str(TINY), "ok"]}}}))
    return path


async def test_the_first_completion_after_initialized_says_it_is_connecting(tmp_path: Path) -> None:
    command = [*BRIDGE, "--config", str(_config(tmp_path)), "--no-default-config", "--no-kernels"]
    async with start_bridge(command) as bridge:
        # Sent at once: `initialize_session` has just sent `initialized`.
        bridge.open(URI, "/\n")
        seen = len(bridge.client.log_messages)
        first = await bridge.complete(URI, 0, 1, trigger="/")

        assert [item.label for item in first.items] == ["connecting to 1 server…"]
        assert first.items[0].detail == "tiny"
        assert first.is_incomplete is True

        deadline = time.monotonic() + DEADLINE
        later = first
        while not any(item.label == "/tiny:hello" for item in later.items):
            # The editor asks again as the user types; here, after each status line the bridge logs.
            await bridge.wait_for(
                types.WINDOW_LOG_MESSAGE,
                lambda seen=seen: len(bridge.client.log_messages) > seen,
                max(0.0, deadline - time.monotonic()),
            )
            seen = len(bridge.client.log_messages)
            later = await bridge.complete(URI, 0, 1, trigger="/")
        assert [item.label for item in later.items] == ["/tiny:hello"]


async def _until_listed(bridge: Any, label: str) -> types.CompletionList:
    """Ask for `/` after each status line the bridge logs (as an editor asks while the user types) until `label`."""
    deadline = time.monotonic() + DEADLINE
    seen = len(bridge.client.log_messages)
    listed = await bridge.complete(URI, 0, 1, trigger="/")
    while not any(item.label == label for item in listed.items):
        await bridge.wait_for(
            types.WINDOW_LOG_MESSAGE,
            lambda seen=seen: len(bridge.client.log_messages) > seen,
            max(0.0, deadline - time.monotonic()),
        )
        seen = len(bridge.client.log_messages)
        listed = await bridge.complete(URI, 0, 1, trigger="/")
    return listed


async def test_the_first_slash_of_a_later_start_lists_the_stored_prompts_then_the_fresh_ones(tmp_path: Path) -> None:
    command = [*BRIDGE, "--config", str(_config(tmp_path)), "--no-default-config", "--no-kernels"]
    async with start_bridge(command) as bridge:
        bridge.open(URI, "/\n")
        await _until_listed(bridge, "/tiny:hello")
    folder = Path(os.environ["MCP_NOTEBOOK_CACHE_DIR"]) / "lsp-prompts"
    stored = await asyncio.to_thread(lambda: list(folder.glob("tiny-*.json")))
    assert len(stored) == 1  # the server was started and listed: its list is kept for the next start
    # As if the server's prompts had changed since: the stored list names another one.
    stored[0].write_text(stored[0].read_text().replace('"hello"', '"hello_before"'))

    async with start_bridge(command) as bridge:
        bridge.open(URI, "/\n")
        first = await bridge.complete(URI, 0, 1, trigger="/")  # sent right after `initialized`
        assert [item.label for item in first.items] == ["/tiny:hello_before", "connecting to 1 server…"]
        assert first.is_incomplete is True  # the editor asks again as the user types
        fresh = await _until_listed(bridge, "/tiny:hello")
        assert [item.label for item in fresh.items] == ["/tiny:hello"]
    assert "hello_before" not in stored[0].read_text()  # the fresh list replaced the stored one


async def test_a_server_that_never_started_leaves_no_stored_list(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": str(tmp_path / "no-such-program")}}}))
    command = [*BRIDGE, "--config", str(config), "--no-default-config", "--no-kernels"]
    async with start_bridge(command) as bridge:
        bridge.open(URI, "/\n")
        deadline = time.monotonic() + DEADLINE
        while "gone down" not in " ".join(m.message for m in bridge.client.log_messages):
            seen = len(bridge.client.log_messages)
            await bridge.wait_for(
                types.WINDOW_LOG_MESSAGE,
                lambda seen=seen: len(bridge.client.log_messages) > seen,
                max(0.0, deadline - time.monotonic()),
            )
    stored = Path(os.environ["MCP_NOTEBOOK_CACHE_DIR"]) / "lsp-prompts"
    assert not await asyncio.to_thread(lambda: list(stored.glob("*.json")))


async def test_before_the_servers_are_known_the_list_says_it_is_connecting(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps({"servers": {}, "starting": True}))
    async with start_bridge([sys.executable, str(STATIC), str(catalog)]) as bridge:
        bridge.open(URI, "/\n")
        result = await bridge.complete(URI, 0, 1, trigger="/")
    assert [(item.label, item.detail) for item in result.items] == [("connecting to MCP servers…", None)]
    assert result.is_incomplete is True


def _fresh(code: str) -> dict[str, object]:
    """Run `code` in a new interpreter; it prints one JSON object last."""
    completed = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def test_answering_initialize_imports_no_part_of_the_mcp_sdk() -> None:
    result = _fresh(
        """
        import json, sys
        from lsp_bridge.cli import create_parser
        from mcp_notebook.catalog.kernels import KernelWatcher
        from mcp_notebook.catalog.pool import ClientPool
        from lsp_bridge.server import create_server
        create_server(ClientPool())
        heavy = ("mcp", "mcp_types", "pydantic", "httpx", "anyio", "mcp_notebook.client.prompt_client")
        print(json.dumps(sorted(name for name in heavy if name in sys.modules)))
        """
    )
    assert result == []


def test_a_stdio_server_can_start_before_the_sdk_client_is_imported() -> None:
    result = _fresh(
        """
        import json, sys
        from mcp_notebook.client import import_sdk
        seen = {}

        def stdio_first():
            seen["transport"] = "mcp.client.stdio" in sys.modules
            seen["client"] = "mcp.client.client" in sys.modules or "mcp.server.lowlevel" in sys.modules

        import_sdk(stdio_first=stdio_first)
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        seen["after"] = "mcp.client.client" in sys.modules
        print(json.dumps(seen))
        """
    )
    assert result == {"transport": True, "client": False, "after": True}
