"""`mcp-notebook serve` as a subprocess over stdio, once per protocol revision, raw and through the SDK client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from client_harness import ChangeWatcher
from e2e_checks import EXPECTED_NAMES, check_a_client_of
from e2e_processes import (
    ALL_REVISIONS,
    DEADLINE,
    HANDSHAKE_REVISIONS,
    MODERN,
    StdioServer,
    add_prompt,
    modern_meta,
    write_corpus,
)
from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.slow


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "prompts")
    return tmp_path / "prompts"


def open_stdio(server: StdioServer, revision: str) -> None:
    if revision == MODERN:
        discovered = server.request("server/discover", modern=True)["result"]
        assert discovered["supportedVersions"] == [MODERN]
        assert discovered["capabilities"]["prompts"] == {"listChanged": True}
    else:
        result = server.initialize(revision)["result"]
        assert result["protocolVersion"] == revision
        assert result["capabilities"]["prompts"] == {"listChanged": True}


@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_a_stdio_client_of_each_revision_is_served_completely(folder: Path, revision: str) -> None:
    with StdioServer([str(folder), "--page-size", "2"]) as server:
        open_stdio(server, revision)

        async def request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            return server.request(method, params, modern=revision == MODERN)

        await check_a_client_of(revision, request)

        server.send_line('{"jsonrpc": "2.0", "id": 99, "method": "prompts/list"')  # cut short
        parse_error = server.receive()
        expected: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": None,  # JSON-RPC 2.0's unknown id; from 2025-11-25 on the schema leaves it out instead
            "error": {"code": -32700, "message": "Parse error: the line is not valid JSON"},
        }
        if revision >= "2025-11-25":
            del expected["id"]
        assert parse_error == expected
        assert (await request("prompts/get", {"name": "note1"}))["result"]["messages"]


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_saving_a_notebook_notifies_a_handshake_stdio_client(folder: Path, revision: str) -> None:
    with StdioServer([str(folder)]) as server:
        open_stdio(server, revision)
        assert server.request("prompts/list")["result"]["prompts"]
        add_prompt(folder, "fresh")
        notification = server.notification("notifications/prompts/list_changed")
        assert notification == {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
        names = [p["name"] for p in server.request("prompts/list")["result"]["prompts"]]
    assert "fresh" in names


def test_saving_a_notebook_notifies_a_2026_07_28_stdio_listen_stream(folder: Path) -> None:
    with StdioServer([str(folder)]) as server:
        open_stdio(server, MODERN)
        listen = {
            "jsonrpc": "2.0",
            "id": "watch",
            "method": "subscriptions/listen",
            "params": {"notifications": {"promptsListChanged": True}, "_meta": modern_meta()},
        }
        server.send(listen)
        ack = server.notification("notifications/subscriptions/acknowledged")
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "watch"
        add_prompt(folder, "fresh")
        changed = server.notification("notifications/prompts/list_changed")
        assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "watch"}
        names = [p["name"] for p in server.request("prompts/list", modern=True)["result"]["prompts"]]
    assert "fresh" in names


def test_stdout_carries_only_protocol_messages_and_the_summary_goes_to_stderr(folder: Path) -> None:
    (folder / "broken.ipynb").write_text("{ not a notebook")
    with StdioServer([str(folder)]) as server:
        summary = server.stderr_line("mcp-notebook: 5 prompts from")
        warning = server.stderr_line("mcp-notebook: warning: broken.ipynb")
        reply = server.initialize("2025-11-25")  # the first stdout line is this reply: nothing was printed before
    assert "4 notebooks" in summary  # the broken one is served too, with no prompts until it loads
    assert "broken.ipynb" in warning
    assert reply["id"] == 1


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_the_sdk_client_uses_the_server_over_stdio(folder: Path, mode: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_notebook", "serve", str(folder)])
    watcher = ChangeWatcher()
    async with Client(params, mode=mode, message_handler=watcher) as client:
        assert [p.name for p in (await client.list_prompts()).prompts] == EXPECTED_NAMES
        result = await client.get_prompt("explain", {"topic": "tides"})
        content = result.messages[0].content
        assert isinstance(content, types.TextContent) and "Explain tides simply." in content.text
        completion = await client.complete(types.PromptReference(name="greet"), {"name": "style", "value": "f"})
        assert completion.completion.values == ["formally"]
        if mode == "legacy":
            add_prompt(folder, "fresh")
            with anyio.fail_after(DEADLINE):
                await watcher.changed.wait()
        else:
            async with client.listen(prompts_list_changed=True) as subscription:
                add_prompt(folder, "fresh")
                with anyio.fail_after(DEADLINE):
                    await subscription.__anext__()
        names = [p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts]
    assert "fresh" in names


def test_a_half_written_notebook_keeps_its_last_good_prompts_served(folder: Path) -> None:
    with StdioServer([str(folder)]) as server:
        open_stdio(server, "2025-11-25")
        assert server.request("prompts/list")["result"]["prompts"]
        (folder / "greet.ipynb").write_text('{"cells": [', encoding="utf-8")  # an editor caught mid-save
        add_prompt(folder, "fresh")  # saved after it: its notification means the broken save was seen
        server.notification("notifications/prompts/list_changed")
        got = server.request("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})
    assert "Greet Ada warmly." in got["result"]["messages"][0]["content"]["text"]
