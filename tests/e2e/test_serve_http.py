"""`mcp-notebook serve --http` as a subprocess: every revision on one endpoint, the gate, list_changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from client_harness import ChangeWatcher
from e2e_checks import EXPECTED_NAMES, check_a_client_of
from e2e_processes import (
    ACCEPT,
    ALL_REVISIONS,
    DEADLINE,
    MODERN,
    HttpServer,
    RawHttpSession,
    add_prompt,
    initialize_params,
    write_corpus,
)
from mcp import Client

pytestmark = pytest.mark.slow

TOKEN = "e2e-secret-token"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    folder = tmp_path_factory.mktemp("http") / "prompts"
    write_corpus(folder)
    with HttpServer([str(folder), "--page-size", "2"]) as server:
        yield server


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    folder = tmp_path_factory.mktemp("token") / "prompts"
    write_corpus(folder)
    with HttpServer([str(folder), "--token", TOKEN]) as server:
        yield server


def initialize_body() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}


def test_the_url_is_printed_for_a_free_port_on_127_0_0_1(served: HttpServer) -> None:
    assert served.url.startswith("http://127.0.0.1:")
    assert served.url.endswith("/mcp")
    assert served.stderr_line("mcp-notebook: serving over Streamable HTTP at ") == (
        f"mcp-notebook: serving over Streamable HTTP at {served.url}"
    )


@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_an_http_client_of_each_revision_is_served_completely(served: HttpServer, revision: str) -> None:
    async with httpx2.AsyncClient() as http:
        session = RawHttpSession(http, served.url, revision)
        opened = await session.open()
        if opened is not None:
            assert opened["result"]["protocolVersion"] == revision
            assert opened["result"]["capabilities"]["prompts"] == {"listChanged": True}

        async def request(method: str, params: dict[str, Any] | None) -> dict[str, Any]:
            return await session.request(method, params)

        await check_a_client_of(revision, request)


@pytest.mark.parametrize("era", ["handshake", MODERN])
async def test_malformed_json_over_http_is_a_parse_error_and_serving_goes_on(served: HttpServer, era: str) -> None:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if era == MODERN:
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "prompts/list"}
    async with httpx2.AsyncClient() as http:
        response = await http.post(served.url, content=b'{"jsonrpc": "2.0", "id": 1, "method"', headers=headers)
        session = RawHttpSession(http, served.url, "2025-11-25" if era == "handshake" else MODERN)
        await session.open()
        after = await session.request("prompts/get", {"name": "note0"})
    assert response.status_code == 400
    expected: dict[str, Any] = {"jsonrpc": "2.0", "id": None}  # at 2026-07-28 an unknown id is left out, never null
    if era == MODERN:
        del expected["id"]
    assert response.json() == {
        **expected,
        "error": {"code": -32700, "message": "Parse error: the body is not valid JSON"},
    }
    assert after["result"]["messages"]


async def test_a_foreign_origin_or_host_is_refused(served: HttpServer) -> None:
    base = {"Content-Type": "application/json", "Accept": ACCEPT}
    async with httpx2.AsyncClient() as http:
        origin = await http.post(served.url, json=initialize_body(), headers={**base, "Origin": "http://evil.example"})
        host = await http.post(served.url, json=initialize_body(), headers={**base, "Host": "evil.example:80"})
        unknown_route = await http.get(served.url.replace("/mcp", "/admin"))
    assert origin.status_code == 403
    assert host.status_code == 421
    assert unknown_route.status_code == 404


async def test_a_missing_or_wrong_token_is_401_and_the_right_one_is_served(guarded: HttpServer) -> None:
    base = {"Content-Type": "application/json", "Accept": ACCEPT}
    async with httpx2.AsyncClient() as http:
        missing = await http.post(guarded.url, json=initialize_body(), headers=base)
        wrong = await http.post(guarded.url, json=initialize_body(), headers={**base, "Authorization": "Bearer nope"})
        right = RawHttpSession(http, guarded.url, MODERN, headers={"Authorization": f"Bearer {TOKEN}"})
        listed = await right.request("prompts/list")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert "Authorization: Bearer <token>" in missing.json()["error"]["message"]
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert [p["name"] for p in listed["result"]["prompts"]] == EXPECTED_NAMES
    assert guarded.stderr_line("mcp-notebook: serving over Streamable HTTP at ").endswith("(bearer token required)")


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026-07-28"])
async def test_the_sdk_client_uses_the_server_over_http(served: HttpServer, mode: str) -> None:
    async with Client(served.url, mode=mode) as client:
        names: list[str] = []
        cursor = None
        while True:
            page = await client.list_prompts(cursor=cursor)
            names += [p.name for p in page.prompts]
            if (cursor := page.next_cursor) is None:
                break
        assert names == EXPECTED_NAMES
        result = await client.get_prompt("greet", {"who": "Bo", "style": "formally"})
        content = result.messages[0].content
        assert isinstance(content, types.TextContent) and "Greet Bo formally." in content.text


async def test_saving_a_notebook_notifies_http_clients_of_both_eras(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    watcher = ChangeWatcher()
    with HttpServer([str(folder)]) as server:
        async with (
            Client(server.url, mode="legacy", message_handler=watcher) as old,
            Client(server.url, mode="auto") as new,
        ):
            await old.list_prompts()
            async with new.listen(prompts_list_changed=True) as subscription:
                add_prompt(folder, "fresh")
                with anyio.fail_after(DEADLINE):
                    await watcher.changed.wait()
                    await subscription.__anext__()
            assert "fresh" in [p.name for p in (await old.list_prompts(cache_mode="refresh")).prompts]
            assert "fresh" in [p.name for p in (await new.list_prompts(cache_mode="refresh")).prompts]
