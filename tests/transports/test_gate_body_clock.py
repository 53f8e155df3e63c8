"""The gate's body timeout on one timer per loop: a late body is a 408, an on-time one is read, and a
cancellation from elsewhere (a server stopping) stays a cancellation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcp_notebook.transports.gate import AccessGate
from mcp_notebook.transports.limits import HttpLimits

HOST = "127.0.0.1:8000"
TIMEOUT = 0.5  # the least a body timeout may be


async def _app(scope: Any, receive: Any, send: Any) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"got " + body})


def _gate() -> AccessGate:
    return AccessGate(_app, allowed_hosts={HOST}, limits=HttpLimits(body_timeout=TIMEOUT))


def _scope() -> dict[str, Any]:
    headers = [(b"host", HOST.encode()), (b"content-type", b"application/json")]
    return {"type": "http", "method": "PUT", "path": "/mcp", "headers": headers, "server": ("127.0.0.1", 8000)}


async def _request(gate: AccessGate, parts: list[tuple[float, bytes, bool]]) -> tuple[int, bytes]:
    """Send the body in `parts` (delay before, bytes, more to come), then wait for a disconnect; the answer."""
    pending = list(parts)
    answer: dict[str, Any] = {}

    async def receive() -> dict[str, Any]:
        if not pending:
            await asyncio.Event().wait()  # never more: the client is still there
        delay, body, more = pending.pop(0)
        await asyncio.sleep(delay)  # the client is slow: the point of the test
        return {"type": "http.request", "body": body, "more_body": more}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["body"] = message.get("body", b"")

    await gate(_scope(), receive, send)
    return answer["status"], answer["body"]


async def test_a_late_body_is_a_408_and_an_on_time_one_beside_it_is_read() -> None:
    gate = _gate()
    loop = asyncio.get_running_loop()
    began = loop.time()
    late, on_time = await asyncio.gather(
        _request(gate, [(0, b"{", True), (TIMEOUT * 10, b"}", False)]),
        _request(gate, [(0, b"{", True), (TIMEOUT / 4, b"}", False)]),
    )
    assert late[0] == 408 and b"did not arrive within 0.5 s" in late[1]
    assert on_time == (200, b"got {}")
    assert TIMEOUT <= loop.time() - began < TIMEOUT * 5


async def test_requests_one_after_another_each_get_the_whole_timeout() -> None:
    gate = _gate()
    for _ in range(3):  # each within the timeout, together well over it
        assert await _request(gate, [(TIMEOUT * 0.6, b"{}", False)]) == (200, b"got {}")
    status, body = await _request(gate, [(TIMEOUT * 3, b"{}", False)])
    assert status == 408, body


async def test_a_cancellation_from_elsewhere_is_not_taken_for_a_late_body() -> None:
    gate = _gate()
    reading = asyncio.ensure_future(_request(gate, [(TIMEOUT * 10, b"{}", False)]))
    await asyncio.sleep(TIMEOUT / 4)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    # The clock forgot it: a later request is served as usual.
    assert await _request(gate, [(0, b"{}", False)]) == (200, b"got {}")
    assert json.loads(gate.late_body())["error"]["code"] == -32600
