"""The HTTP floor: a raw ASGI app that answers every request with canned bytes, ours, captured beforehand.

It runs under the same uvicorn (httptools, uvloop) as the servers measured,
reads each request body to its end and answers with the status, headers and
body that mcp-notebook gave for that request's `Mcp-Method`, framed as ours by
its `Content-Length` (uvicorn would otherwise send it chunked), with no parsing,
no protocol and no notebooks: what HTTP alone costs on this machine, the
figure no MCP server can beat. `bench_http` captures the responses, writes
them to the JSON file named by `HTTP_FLOOR_RESPONSES` and starts this app as
`uvicorn --factory benchmarks.http_floor:create_floor_app`.

This file imports only the standard library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["Canned", "create_floor_app"]

Canned = tuple[int, list[tuple[bytes, bytes]], bytes]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _load(path: Path) -> dict[bytes, Canned]:
    document = json.loads(path.read_text())
    return {method.encode(): _canned(answer) for method, answer in document.items()}


def _canned(answer: dict[str, Any]) -> Canned:
    body = answer["body"].encode()
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in answer["headers"]]
    # Framed as ours is, by its length (without it uvicorn would send the body chunked).
    return int(answer["status"]), [*headers, (b"content-length", str(len(body)).encode())], body


def create_floor_app() -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The ASGI app answering each `Mcp-Method` with the response captured for it (`HTTP_FLOOR_RESPONSES`)."""
    canned = _load(Path(os.environ["HTTP_FLOOR_RESPONSES"]))

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        method = next((value for name, value in scope["headers"] if name == b"mcp-method"), b"")
        status, headers, body = canned.get(method, (404, [], b""))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app
