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

The relay is no side door: the access gate has checked the request (Host,
Origin, token, JSON, size, time) before it is relayed, so the siblings'
sockets must take nothing else. So the folder must be this user's own,
mode 0700 and no symlink (`worker_dir_problem`, else the worker refuses to
start); each socket is 0600; and a relayed request carries the launch's
secret (`RELAY_HEADER`), without which a sibling answers 403. The secret is
made once per launch: `serve --workers N` hands it to its workers in their
environment (`RELAY_SECRET_ENV`); under another process manager the first
worker writes it to a 0600 file in the folder, named after the manager's
process, where its siblings read it. The body is streamed to the sibling,
never held whole (the gate has bounded it to 4 MiB already; the relay counts
again).
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import socket
import stat
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.lowlevel
import httpx2
import uvicorn
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .uvicorn_seam import QuietServer

__all__ = [
    "RELAY_HEADER",
    "RELAY_SECRET_ENV",
    "WORKER_DIR_ENV",
    "WORKER_ID_LENGTH",
    "SessionRouter",
    "launch_secret",
    "new_worker_id",
    "worker_dir_problem",
]

log = logging.getLogger(__name__)

WORKER_ID_LENGTH: Final = 8
WORKER_DIR_ENV: Final = "MCP_NOTEBOOK_WORKER_DIR"
RELAY_SECRET_ENV: Final = "MCP_NOTEBOOK_RELAY_SECRET"
RELAY_HEADER: Final = b"x-mcp-notebook-relay"
_HOP_BY_HOP: Final = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"trailer"})
_NOT_RELAYED: Final = _HOP_BY_HOP | {b"content-length", RELAY_HEADER}  # the relay sets these itself
_REFUSED: Final = (
    b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, '
    b'"message": "Refused: this socket serves the other workers of this server only"}}'
)


def new_worker_id() -> str:
    return secrets.token_hex(WORKER_ID_LENGTH // 2)


def worker_dir_problem(path: Path) -> str | None:
    """Why `path` may not be where workers meet (it must be ours, 0700, not a symlink); None when it may."""
    try:
        info = os.lstat(path)
    except OSError as error:
        return f"{WORKER_DIR_ENV}={path} cannot be used: {error.strerror or error}"
    what = None
    if stat.S_ISLNK(info.st_mode):
        what = "it is a symlink"
    elif not stat.S_ISDIR(info.st_mode):
        what = "it is not a folder"
    elif hasattr(os, "getuid") and info.st_uid != os.getuid():
        what = f"it belongs to user id {info.st_uid}, not to this user ({os.getuid()})"
    elif info.st_mode & 0o077:
        what = f"its mode is {stat.S_IMODE(info.st_mode):04o}"
    if what is None:
        return None
    return f"{WORKER_DIR_ENV}={path} is refused: {what}; it must be a folder of this user's with mode 0700"


def launch_secret(directory: Path, environ: Mapping[str, str] | None = None) -> str:
    """The secret the workers of this launch relay with (module docstring): from the environment, else shared."""
    environ = os.environ if environ is None else environ
    given = environ.get(RELAY_SECRET_ENV, "")
    if given:
        return given
    # Another process manager: its workers are siblings under one parent process; the first writes it.
    path = directory / f"launch-{os.getppid()}.secret"
    draft = directory / f".launch-{os.getpid()}.secret"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(secrets.token_hex(32))
    try:
        os.link(draft, path)  # atomic: one secret per launch, whole when seen
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_text().strip()


class _SiblingsOnly:
    """What a worker's socket serves: relayed requests bearing the launch's secret; 403 for anything else."""

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app = app
        self.secret = secret.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        presented = next((value for name, value in scope["headers"] if name == RELAY_HEADER), b"")
        if not hmac.compare_digest(presented, self.secret):
            log.warning("refused a request on the worker socket without the relay secret")
            await _respond(send, 403, _REFUSED)
            return
        await self.app(scope, receive, send)


class SessionRouter:
    """ASGI middleware: relays requests for a sibling worker's session to that worker (module docstring)."""

    def __init__(
        self, app: ASGIApp, *, directory: Path, worker_id: str, secret: str, max_body_bytes: int = 4 * 1024 * 1024
    ) -> None:
        self.app = app
        self.directory = directory
        self.worker_id = worker_id
        self.secret = secret
        self.max_body_bytes = max_body_bytes
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
        try:
            sock.bind(str(path))
            # The folder is 0700 already (worker_dir_problem), so no one else reaches it meanwhile.
            os.chmod(path, 0o600)
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        self._listening = sock

    async def serve_siblings(self) -> None:
        """Answer relayed requests on this worker's Unix socket (bound by `listen`) until cancelled."""
        if self._listening is None:
            self.listen()
        assert self._listening is not None
        config = uvicorn.Config(
            _SiblingsOnly(self.app, self.secret), lifespan="off", log_config=None, log_level="warning"
        )
        config.access_log = False
        server = QuietServer(config)
        try:
            await server.serve(sockets=[self._listening])
        finally:
            self._listening.close()
            self.socket_of(self.worker_id).unlink(missing_ok=True)

    async def _relay(self, path: Path, scope: Scope, receive: Receive, send: Send) -> None:
        first = await receive()
        if first["type"] != "http.request":
            return  # the client went away before its request began
        # Cancelled when the body ends early (the client left) or outgrows the limit: nothing is answered.
        abandon = anyio.CancelScope()
        content: bytes | AsyncIterator[bytes] = first.get("body", b"")
        if first.get("more_body", False):
            content = self._body(first.get("body", b""), receive, abandon)
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _NOT_RELAYED]
        headers.append((RELAY_HEADER, self.secret.encode()))
        target = f"http://worker{scope['path']}" + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        async with httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(uds=str(path)), timeout=None) as client:
            try:
                with abandon:
                    async with client.stream(scope["method"], target, headers=headers, content=content) as response:
                        await self._stream_back(response, send)
            except httpx2.TransportError:
                log.warning("the worker of session %s did not answer", Headers(scope=scope).get("mcp-session-id"))
                await _respond(send, 404, _NOT_FOUND)

    async def _body(self, first: bytes, receive: Receive, abandon: anyio.CancelScope) -> AsyncIterator[bytes]:
        """The request body as it arrives, chunk by chunk, within the body limit."""
        sent = len(first)
        if first:
            yield first
        while True:
            message = await receive()
            chunk = message.get("body", b"")
            sent += len(chunk)
            if message["type"] != "http.request" or sent > self.max_body_bytes:
                abandon.cancel()
                await anyio.lowlevel.checkpoint()  # the cancellation lands here, before a byte more is sent
            if chunk:
                yield chunk
            if not message.get("more_body", False):
                return

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


_NOT_FOUND: Final = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Session not found"}}'


async def _respond(send: Send, status: int, body: bytes) -> None:
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    await send(start)
    await send({"type": "http.response.body", "body": body})
