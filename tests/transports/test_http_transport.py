"""The Streamable HTTP transport on a real 127.0.0.1 socket: the gate, both eras, list_changed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from client_harness import ChangeWatcher
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports.http import allowed_hosts_for, serve_http, url_for

DEADLINE = 10.0
ACCEPT = "application/json, text/event-stream"
MODERN_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/list"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def greet(name: str = "greet") -> PromptSpec:
    return PromptSpec(
        name=name,
        title="Greet",
        arguments=(PromptArgument("who"),),
        messages=(MessageTemplate("user", TextContent("Hello {{who}}")),),
    )


@pytest.fixture
def registry() -> PromptRegistry:
    reg = PromptRegistry()
    reg.set_group("g.ipynb", [greet()])
    return reg


@asynccontextmanager
async def serving(served: PromptRegistry | PromptServer, **options: Any) -> AsyncIterator[str]:
    """`serve_http` on a free port of 127.0.0.1 until the block ends: a server, or one made for a registry."""
    server = served if isinstance(served, PromptServer) else create_server(served)
    ready = anyio.Event()
    urls: list[str] = []
    shutdown = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: serve_http(server, on_ready=on_ready, shutdown=shutdown, **options))
        with anyio.fail_after(DEADLINE):
            await ready.wait()
        try:
            yield urls[0]
        finally:
            shutdown.set()


def post_json(body: Any, **headers: str) -> dict[str, Any]:
    return {"content": json.dumps(body), "headers": {"Content-Type": "application/json", "Accept": ACCEPT, **headers}}


def initialize_body(revision: str = "2025-06-18") -> dict[str, Any]:
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def test_the_url_names_the_bound_address_and_the_mcp_path() -> None:
    assert url_for("127.0.0.1", 8123) == "http://127.0.0.1:8123/mcp"
    assert url_for("::1", 8123) == "http://[::1]:8123/mcp"
    assert url_for("0.0.0.0", 8123) == "http://127.0.0.1:8123/mcp"


def test_allowed_hosts_are_the_loopback_names_with_the_port() -> None:
    allowed = allowed_hosts_for("127.0.0.1", 8123)
    assert all(host in allowed for host in ("127.0.0.1:8123", "localhost:8123", "[::1]:8123"))
    assert "127.0.0.1:8124" not in allowed
    assert "evil.example:8123" not in allowed
    # Bound to every interface, Host is still checked: the machine's names, never a stranger's.
    everywhere = allowed_hosts_for("0.0.0.0", 8123)
    assert "127.0.0.1:8123" in everywhere
    assert "evil.example:8123" not in everywhere


async def test_port_zero_serves_on_a_free_port_of_127_0_0_1(registry: PromptRegistry) -> None:
    async with serving(registry) as url:
        assert url.startswith("http://127.0.0.1:")
        assert not url.endswith(":0/mcp")
        async with Client(url, mode="legacy") as client:
            assert [p.name for p in (await client.list_prompts()).prompts] == ["greet"]


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_both_eras_share_the_endpoint(registry: PromptRegistry, mode: str) -> None:
    async with serving(registry) as url, Client(url, mode=mode) as client:
        result = await client.get_prompt("greet", {"who": "Ada"})
        content = result.messages[0].content
        assert isinstance(content, types.TextContent) and content.text == "Hello Ada"
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.session.protocol_version == expected


async def test_an_unknown_route_is_404_with_a_hint(registry: PromptRegistry) -> None:
    async with serving(registry) as url, httpx2.AsyncClient() as http:
        response = await http.get(url.replace("/mcp", "/nope"))
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "Not found: the MCP endpoint is /mcp"


async def test_a_foreign_host_header_is_refused(registry: PromptRegistry) -> None:
    async with serving(registry) as url, httpx2.AsyncClient() as http:
        response = await http.post(url, **post_json(initialize_body(), Host="evil.example"))
    assert response.status_code == 421
    assert "DNS rebinding" in response.json()["error"]["message"]


async def test_a_foreign_origin_is_refused_and_a_local_one_is_served(registry: PromptRegistry) -> None:
    async with serving(registry) as url, httpx2.AsyncClient() as http:
        foreign = await http.post(url, **post_json(initialize_body(), Origin="http://evil.example"))
        local = await http.post(url, **post_json(initialize_body(), Origin="http://localhost:6274"))
    assert foreign.status_code == 403
    assert "evil.example" in foreign.json()["error"]["message"]
    assert local.status_code == 200


async def test_a_missing_token_is_401_with_a_bearer_challenge_and_advice(registry: PromptRegistry) -> None:
    async with serving(registry, token="s3cret") as url, httpx2.AsyncClient() as http:
        response = await http.post(url, **post_json(initialize_body()))
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="mcp-notebook"'
    error = response.json()["error"]
    assert "Authorization: Bearer <token>" in error["message"]
    assert error["data"] == {"reason": "missing token"}


async def test_a_wrong_token_is_401_invalid_token(registry: PromptRegistry) -> None:
    async with serving(registry, token="s3cret") as url, httpx2.AsyncClient() as http:
        response = await http.post(url, **post_json(initialize_body(), Authorization="Bearer guess"))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert response.json()["error"]["data"] == {"reason": "wrong token"}


async def test_the_right_token_is_served_in_both_eras(registry: PromptRegistry) -> None:
    async with serving(registry, token="s3cret") as url:
        for mode in ("legacy", "auto"):
            async with (
                httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}) as http,
                Client(streamable_http_client(url, http_client=http), mode=mode) as client,
            ):
                assert [p.name for p in (await client.list_prompts()).prompts] == ["greet"]


@pytest.mark.parametrize("era_headers", [{}, MODERN_HEADERS], ids=["handshake", "2026-07-28"])
async def test_malformed_json_is_a_parse_error_and_the_server_keeps_serving(
    registry: PromptRegistry, era_headers: dict[str, str]
) -> None:
    async with serving(registry) as url, httpx2.AsyncClient() as http:
        broken = await http.post(
            url, content=b'{"jsonrpc": "2.0", "id": 1,', headers={"Content-Type": "application/json"}
        )
        no_headers = await http.post(url, content=b"}{")
        good = await http.post(
            url,
            **post_json(
                {"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": MODERN_META}}
                if era_headers
                else initialize_body(),
                **era_headers,
            ),
        )
    for response in (broken, no_headers):
        assert response.status_code == 400
        assert response.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the body is not valid JSON"},
        }
    assert good.status_code == 200


async def test_an_oversized_body_is_refused(registry: PromptRegistry) -> None:
    async with serving(registry) as url, httpx2.AsyncClient() as http:
        response = await http.post(url, **post_json({"pad": "x" * (5 * 1024 * 1024)}))
    assert response.status_code == 413


async def test_a_handshake_http_client_hears_about_changes(registry: PromptRegistry) -> None:
    watcher = ChangeWatcher()
    async with serving(registry) as url, Client(url, mode="legacy", message_handler=watcher) as client:
        await client.list_prompts()
        await anyio.to_thread.run_sync(registry.set_group, "h.ipynb", [greet("hello")])
        with anyio.fail_after(DEADLINE):
            await watcher.changed.wait()
        names = [p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts]
    assert names == ["greet", "hello"]


async def test_a_2026_07_28_http_client_hears_about_changes_on_its_listen_stream(registry: PromptRegistry) -> None:
    async with serving(registry) as url, Client(url, mode="auto") as client:
        async with client.listen(prompts_list_changed=True) as subscription:
            await anyio.to_thread.run_sync(registry.set_group, "h.ipynb", [greet("hello")])
            with anyio.fail_after(DEADLINE):
                event = await subscription.__anext__()
        assert type(event).__name__ == "PromptsListChanged"
        assert [p.name for p in (await client.list_prompts()).prompts] == ["greet", "hello"]
