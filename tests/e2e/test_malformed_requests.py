"""Every malformed request gets its proper JSON-RPC error over real stdio and HTTP servers, in every revision.

The cases are generated (`malformed_cases`); one server process per
transport (and per revision on stdio) answers all of them in turn, and
after each it must still serve a good request.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from e2e_processes import (
    ACCEPT,
    ALL_REVISIONS,
    DEADLINE,
    HANDSHAKE_REVISIONS,
    MODERN,
    HttpServer,
    StdioServer,
    initialize_params,
    modern_meta,
    sse_messages,
    write_corpus,
)
from malformed_cases import CASES, INVALID_REQUEST, Case, check_reply

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    served = tmp_path_factory.mktemp("malformed") / "prompts"
    write_corpus(served)
    return served


# --- stdio ------------------------------------------------------------------------------------------------------


def send_bytes(server: StdioServer, data: bytes) -> None:
    stdin = server.process.stdin
    assert stdin is not None
    stdin.flush()
    stdin.buffer.write(data + b"\n")
    stdin.buffer.flush()


def next_reply(server: StdioServer) -> dict[str, Any]:
    while True:
        message = server.receive()
        if "method" not in message:
            return message
        server.notifications.append(message)


@pytest.fixture(scope="module", params=ALL_REVISIONS)
def stdio(request: pytest.FixtureRequest, folder: Path) -> Iterator[tuple[str, StdioServer]]:
    revision: str = request.param
    with StdioServer([str(folder)]) as server:
        if revision == MODERN:
            assert "result" in server.request("server/discover", modern=True)  # the connection is modern now
        else:
            assert server.initialize(revision)["result"]["protocolVersion"] == revision
        yield revision, server


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_malformed_line_gets_its_error_over_stdio(stdio: tuple[str, StdioServer], case: Case) -> None:
    revision, server = stdio
    request_id = f"stdio-{case.name}"
    send_bytes(server, case.build(revision, request_id))
    check_reply(case, revision, "stdio", request_id, next_reply(server))
    good = server.request("prompts/get", {"name": "note1"}, modern=revision == MODERN)
    assert good["result"]["messages"], "the server stopped serving"


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
def test_a_request_before_initialize_is_told_to_initialize_first(folder: Path, revision: str) -> None:
    with StdioServer([str(folder)]) as server:
        early = server.request("prompts/list")
        unknown = server.request("no/such-method")
        pinged = server.request("ping")  # allowed before the handshake
        server.initialize(revision)
        after = server.request("prompts/list")
    assert early["id"] == 1
    assert early["error"]["code"] == INVALID_REQUEST
    assert "initialize" in early["error"]["message"]
    assert unknown["error"]["code"] == -32601  # probing clients key off "method not found", initialized or not
    assert pinged["result"] == {}
    assert after["result"]["prompts"]


# --- HTTP -------------------------------------------------------------------------------------------------------


class HttpPoster:
    """Raw POSTs of bytes to one server, as a client of one revision (a session for handshake revisions)."""

    def __init__(self, url: str, revision: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.revision = revision
        self.headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if revision == MODERN:
            self.headers["MCP-Protocol-Version"] = MODERN
            return
        status, headers, replies = self.post(
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(revision)})
        )
        assert status == 200 and replies[0]["result"]["protocolVersion"] == revision
        self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        if revision >= "2025-06-18":
            self.headers["MCP-Protocol-Version"] = revision
        status, _, _ = self.post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        assert status == 202

    def post(self, body: bytes | str) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
        headers = dict(self.headers)
        if self.revision == MODERN:
            headers.update(_stateless_headers(body))
        connection = http.client.HTTPConnection(self.host, self.port, timeout=DEADLINE)
        try:
            connection.request("POST", self.path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read().decode("utf-8", errors="replace")
            received = {key.lower(): value for key, value in response.getheaders()}
        finally:
            connection.close()
        if received.get("content-type", "").startswith("text/event-stream"):
            replies = sse_messages(data)
        else:
            replies = [json.loads(data)] if data.strip() else []
        return response.status, received, replies


def _stateless_headers(body: bytes | str) -> dict[str, str]:
    """`Mcp-Method` / `Mcp-Name` as a 2026-07-28 client sends them, where the body has them (and they fit)."""
    try:
        message = json.loads(body)
    except ValueError:
        return {"Mcp-Method": "prompts/list"}
    if not isinstance(message, dict):
        return {}
    headers: dict[str, str] = {}
    method, params = message.get("method"), message.get("params")
    if isinstance(method, str) and len(method) < 1_000:
        headers["Mcp-Method"] = method
    if isinstance(params, dict):
        name = params.get({"prompts/get": "name", "resources/read": "uri"}.get(str(method), ""))
        if isinstance(name, str) and len(name) < 1_000:
            headers["Mcp-Name"] = name
    return headers


@pytest.fixture(scope="module")
def http_server(folder: Path) -> Iterator[HttpServer]:
    with HttpServer([str(folder)]) as server:
        yield server


@pytest.fixture(scope="module", params=ALL_REVISIONS)
def poster(request: pytest.FixtureRequest, http_server: HttpServer) -> HttpPoster:
    return HttpPoster(http_server.url, request.param)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_malformed_body_gets_its_error_over_http(poster: HttpPoster, case: Case) -> None:
    request_id = f"http-{case.name}"
    status, _, replies = poster.post(case.build(poster.revision, request_id))
    assert status != 202, f"{case.name}: taken for a notification, never answered"
    assert len(replies) == 1, f"{case.name}: HTTP {status} with {replies}"
    check_reply(case, poster.revision, "http", request_id, replies[0])
    good = {"jsonrpc": "2.0", "id": "good", "method": "prompts/get", "params": {"name": "note1"}}
    if poster.revision == MODERN:
        good["params"] = {"name": "note1", "_meta": modern_meta()}
    status, _, replies = poster.post(json.dumps(good))
    assert status == 200 and replies[-1]["result"]["messages"], "the server stopped serving"
