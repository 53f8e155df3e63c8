"""What the gate keeps per header set: the verdict on headers that passed every check, for small sets only and
only so many; the length of the body is not part of it, and a set that failed is judged again each time."""

from __future__ import annotations

import json
from typing import Any

from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports import gate as gate_module
from mcp_notebook.transports.gate import KEPT_HEADER_BYTES, KEPT_HEADER_SETS, AccessGate
from mcp_notebook.transports.http import create_http_app

MODERN = "2026-07-28"
HOST = b"127.0.0.1:8000"
TOKEN = "s3cret"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": META}}).encode()


def _headers(*extra: tuple[bytes, bytes], token: str = TOKEN, length: int = len(BODY)) -> list[tuple[bytes, bytes]]:
    return [
        (b"host", HOST),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"prompts/list"),
        (b"authorization", f"Bearer {token}".encode()),
        (b"content-length", str(length).encode()),
        *extra,
    ]


def _gate() -> AccessGate:
    gate = create_http_app(create_server(PromptRegistry()), allowed_hosts={HOST.decode()}, token=TOKEN)
    assert gate.ready is not None
    gate.ready.set()  # as after the lifespan's start
    return gate


async def _post(gate: AccessGate, headers: list[tuple[bytes, bytes]], body: bytes = BODY) -> tuple[int, Any]:
    sent = False
    answer: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        assert not sent, "the body is read once"
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] = message.get("body", b"")

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers, "server": ("127.0.0.1", 8000)}
    await gate(scope, receive, send)
    return answer["status"], json.loads(answer["body"])


async def test_a_header_set_is_judged_once_whatever_the_length_of_its_body() -> None:
    gate = _gate()
    status, reply = await _post(gate, _headers())
    assert status == 200 and reply["result"]["prompts"] == []
    longer = BODY.replace(b'"id": 1', b'"id": 100')
    status, reply = await _post(gate, _headers(length=len(longer)), longer)
    assert status == 200 and reply["id"] == 100
    assert len(gate._passed) == 1


async def test_a_refused_header_set_is_never_kept_and_refused_every_time() -> None:
    gate = _gate()
    for _ in range(2):
        status, reply = await _post(gate, _headers(token="wrong"))
        assert status == 401 and reply["error"]["data"] == {"reason": "wrong token"}
        status, _ = await _post(gate, [(b"host", b"evil.example"), *_headers()[1:]])
        assert status == 421
    assert gate._passed == {}
    # A kept set is still judged by its path: only /mcp (and GET /ready) are served.
    assert (await _post(gate, _headers()))[0] == 200
    scope_headers = _headers()
    answer: dict[str, Any] = {}

    async def send(message: dict[str, Any]) -> None:
        answer.setdefault("status", message.get("status"))

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": BODY, "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/other",
        "headers": scope_headers,
        "server": ("127.0.0.1", 8000),
    }
    await gate(scope, receive, send)
    assert answer["status"] == 404


async def test_the_version_header_kept_is_the_one_screening_reads() -> None:
    gate = _gate()
    assert (await _post(gate, _headers()))[0] == 200
    mismatched = BODY.replace(MODERN.encode(), b"2025-06-18", 1)  # _meta against the header: -32020
    status, reply = await _post(gate, _headers(length=len(mismatched)), mismatched)
    assert status == 400 and reply["error"]["code"] == -32020


async def test_large_header_sets_are_judged_each_time_and_never_kept() -> None:
    gate = _gate()
    status, _ = await _post(gate, _headers((b"x-padding", b"p" * KEPT_HEADER_BYTES)))
    assert status == 200
    assert gate._passed == {}


async def test_at_most_so_many_header_sets_are_kept() -> None:
    gate = _gate()
    for n in range(KEPT_HEADER_SETS + 50):
        assert (await _post(gate, _headers((b"x-request", str(n).encode()))))[0] == 200
    assert len(gate._passed) == KEPT_HEADER_SETS
    assert gate_module.KEPT_HEADER_SETS * gate_module.KEPT_HEADER_BYTES <= 2 * 1024 * 1024  # a bound in bytes too
