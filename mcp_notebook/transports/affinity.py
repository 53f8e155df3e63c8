"""Session affinity between the workers of one `serve --workers N`: a session's requests reach its worker.

The workers share one listening socket, so the kernel hands each new
connection to any of them, but a handshake session (`Mcp-Session-Id`) lives
in the worker that opened it. So each worker also listens on a private Unix
socket in a directory only its siblings know (`MCP_NOTEBOOK_WORKER_DIR`),
and names its sessions `<worker id><random>`; a worker that receives a
request for a sibling's session relays it, streaming both ways, to that
sibling, which answers as if the client had reached it directly. Requests
without a session (every 2026-07-28 request, every `initialize`) are served
where they land. Behind a load balancer, with one worker per replica, use
sticky routing on `Mcp-Session-Id` or `--stateless` instead
(docs/deployment.md).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import httpx2
import uvicorn
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["WORKER_ID_LENGTH", "SessionRouter", "new_worker_id"]

log = logging.getLogger(__name__)

WORKER_ID_LENGTH: Final = 8
_HOP_BY_HOP: Final = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"trailer"})


def new_worker_id() -> str:
    return secrets.token_hex(WORKER_ID_LENGTH // 2)


class _QuietServer(uvicorn.Server):
    """A uvicorn server inside another one's process: the outer server owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


class SessionRouter:
    """ASGI middleware: relays requests for a sibling worker's session to that worker (module docstring)."""

    def __init__(self, app: ASGIApp, *, directory: Path, worker_id: str) -> None:
        self.app = app
        self.directory = directory
        self.worker_id = worker_id
        self._listening: socket.socket | None = None

    def socket_of(self, worker_id: str) -> Path:
        return self.directory / f"{worker_id}.sock"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            session = Headers(scope=scope).get("mcp-session-id", "")
            owner = session[:WORKER_ID_LENGTH]
            if len(session) > WORKER_ID_LENGTH and owner != self.worker_id and owner.isalnum():
                path = self.socket_of(owner)
                if path.exists():
                    await self._relay(path, scope, receive, send)
                    return
        await self.app(scope, receive, send)

    def listen(self) -> None:
        """Bind this worker's Unix socket, before the worker opens its first session."""
        path = self.socket_of(self.worker_id)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        sock.listen(128)
        self._listening = sock

    async def serve_siblings(self) -> None:
        """Answer relayed requests on this worker's Unix socket (bound by `listen`) until cancelled."""
        if self._listening is None:
            self.listen()
        assert self._listening is not None
        config = uvicorn.Config(self.app, lifespan="off", log_config=None, log_level="warning")
        config.access_log = False
        server = _QuietServer(config)
        try:
            await server.serve(sockets=[self._listening])
        finally:
            self._listening.close()
            self.socket_of(self.worker_id).unlink(missing_ok=True)

    async def _relay(self, path: Path, scope: Scope, receive: Receive, send: Send) -> None:
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before its request was whole
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                break
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP_BY_HOP]
        target = f"http://worker{scope['path']}" + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=str(path)), timeout=None) as client:
            try:
                async with client.stream(scope["method"], target, headers=headers, content=bytes(body)) as response:
                    await self._stream_back(response, send)
            except httpx2.TransportError:
                log.warning("the worker of session %s did not answer", Headers(scope=scope).get("mcp-session-id"))
                await _not_found(send)

    @staticmethod
    async def _stream_back(response: Any, send: Send) -> None:
        raw: list[tuple[bytes, bytes]] = [
            (k.lower(), v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP
        ]
        await send({"type": "http.response.start", "status": response.status_code, "headers": raw})
        chunks: AsyncIterator[bytes] = response.aiter_raw()
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _not_found(send: Send) -> None:
    body = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Session not found"}}'
    start: Message = {
        "type": "http.response.start",
        "status": 404,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body})
