"""Serving over Streamable HTTP at `/mcp`: every protocol revision on one endpoint, local by default.

In front of the SDK's Streamable HTTP app sits an `AccessGate`, checking in
this order:

1. `Host` must name the bound address (loopback names and the port), so a
   DNS-rebinding page cannot reach the server through its own hostname → 421;
2. `Origin`, when sent, must be a loopback origin (any port) or an allowed
   host → 403;
3. the path must be `/mcp` → 404;
4. with a token, `Authorization: Bearer <token>` must match (compared in
   constant time) → 401 with `WWW-Authenticate: Bearer` and a body saying
   what to send;
5. a POST body must be JSON → 400 with `-32700 Parse error` (id null), in
   either era, whatever the other headers say; over 4 MiB → 413.

Error bodies are JSON-RPC error objects with id null. Handshake clients
(no `MCP-Protocol-Version: 2026-07-28` header) get sessions
(`Mcp-Session-Id`); 2026-07-28 clients are served statelessly.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .stdio import BackgroundTask

__all__ = [
    "MAX_BODY_BYTES",
    "MCP_PATH",
    "AccessGate",
    "allowed_hosts_for",
    "bind_socket",
    "is_loopback",
    "serve_http",
    "url_for",
]

log = logging.getLogger(__name__)

MCP_PATH: Final = "/mcp"
MAX_BODY_BYTES: Final = 4 * 1024 * 1024
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_HOSTS: Final = frozenset({"", "0.0.0.0", "::"})


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def is_loopback(host: str) -> bool:
    return host.strip("[]").lower() in LOOPBACK_NAMES


def url_for(host: str, port: int) -> str:
    """The URL a local client uses; a wildcard bind is reached through 127.0.0.1."""
    shown = "127.0.0.1" if host in WILDCARD_HOSTS else host
    return f"http://{_bracketed(shown)}:{port}{MCP_PATH}"


def allowed_hosts_for(host: str, port: int, extra: Sequence[str] = ()) -> frozenset[str] | None:
    """The `Host` header values to accept; None (no check) when bound to every interface."""
    if host in WILDCARD_HOSTS:
        return None
    names = {_bracketed(name) for name in LOOPBACK_NAMES} | {_bracketed(host.lower())}
    names |= {_bracketed(name.lower()) for name in extra}
    allowed = {f"{name}:{port}" for name in names}
    if port == 80:
        allowed |= names
    return frozenset(allowed)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0 = any free port); connections queue until serving starts."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _error_body(message: str, code: int = -32600, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()


async def _respond(send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class AccessGate:
    """ASGI middleware that keeps the MCP endpoint local, authenticated and fed with JSON (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: frozenset[str] | None,
        token: str | None = None,
        on_ready: Callable[[], None] | None = None,
        token_hint: str | None = None,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.token = token
        # Where the token comes from, in the 401's words; the server's own CLI by default.
        self.token_hint = token_hint or "the token given to 'mcp-notebook serve --token' (or in MCP_NOTEBOOK_TOKEN)"
        self.on_ready = on_ready
        extra_origins = {host.rsplit(":", 1)[0].strip("[]") for host in allowed_hosts or ()}
        self.origin_hosts = LOOPBACK_NAMES | extra_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._watch_startup(send))
            return
        if scope["type"] != "http":
            return  # no websockets here
        headers = Headers(scope=scope)
        rejection = self._reject(scope, headers)
        if rejection is not None:
            status, body, extra = rejection
            log.warning("refused %s %s: HTTP %d", scope["method"], scope["path"], status)
            await _respond(send, status, body, extra)
            return
        if scope["method"] == "POST":
            await self._check_json_then_forward(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _watch_startup(self, send: Send) -> Send:
        async def watched(message: Message) -> None:
            await send(message)
            if message["type"] == "lifespan.startup.complete" and self.on_ready is not None:
                self.on_ready()

        return watched

    def _reject(self, scope: Scope, headers: Headers) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
        host = (headers.get("host") or "").lower()
        if self.allowed_hosts is not None and host not in self.allowed_hosts:
            return 421, _error_body(f"Refused: Host {host!r} is not this server (DNS rebinding protection)"), []
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return 403, _error_body(f"Refused: requests from the web origin {origin!r} are not allowed"), []
        if scope["path"] != MCP_PATH:
            return 404, _error_body(f"Not found: the MCP endpoint is {MCP_PATH}"), []
        if self.token is not None:
            return self._check_token(headers)
        return None

    def _origin_allowed(self, origin: str) -> bool:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.origin_hosts

    def _check_token(self, headers: Headers) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
        assert self.token is not None
        scheme, _, presented = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), self.token.encode()):
            return None
        challenge = 'Bearer realm="mcp-notebook"'
        if presented:
            challenge += ', error="invalid_token", error_description="the bearer token does not match"'
        message = (
            f"This server needs a bearer token: send the header 'Authorization: Bearer <token>' with {self.token_hint}"
        )
        data = {"reason": "wrong token" if presented else "missing token"}
        return 401, _error_body(message, data=data), [(b"www-authenticate", challenge.encode())]

    async def _check_json_then_forward(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = bytearray()
        trailing: list[Message] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                trailing.append(message)  # the client went away; let the app see it
                break
            body.extend(message.get("body", b""))
            if len(body) > MAX_BODY_BYTES:
                await _respond(send, 413, _error_body(f"Request body over {MAX_BODY_BYTES} bytes"))
                return
            if not message.get("more_body", False):
                break
        if not trailing:
            try:
                json.loads(body)
            except (ValueError, RecursionError):
                await _respond(send, 400, _error_body("Parse error: the body is not valid JSON", code=-32700))
                return
        replay: deque[Message] = deque([{"type": "http.request", "body": bytes(body), "more_body": False}, *trailing])

        async def replayed() -> Message:
            return replay.popleft() if replay else await receive()

        await self.app(scope, replayed, send)


async def serve_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    tasks: Sequence[BackgroundTask] = (),
    on_ready: Callable[[str], None] | None = None,
    shutdown: anyio.Event | None = None,
    token_hint: str | None = None,
) -> None:
    """Serve `server` over Streamable HTTP at http://`host`:`port`/mcp until stopped.

    `port` 0 picks a free port; `on_ready(url)` is called once requests are
    served. `tasks` run beside the server. Setting `shutdown` (or SIGINT /
    SIGTERM) stops it. Binding to a non-loopback host is the caller's
    decision: the CLI asks for `--allow-remote` and prints a warning.
    """
    sock = bind_socket(host, port)
    bound_port = int(sock.getsockname()[1])
    url = url_for(host, bound_port)
    hosts = allowed_hosts_for(host, bound_port, allowed_hosts)
    sdk_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        # The gate checks Host and Origin against the real port; the SDK's own check would only repeat it.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=MAX_BODY_BYTES,
    )
    ready = (lambda: on_ready(url)) if on_ready else None
    gate = AccessGate(sdk_app, allowed_hosts=hosts, token=token, on_ready=ready, token_hint=token_hint)
    config = uvicorn.Config(
        gate,
        lifespan="on",
        log_config=None,
        access_log=False,
        log_level="warning",
        # Open GET and listen streams never end by themselves: do not wait for them for long.
        timeout_graceful_shutdown=2,
    )
    web = uvicorn.Server(config)

    async def stop_when_asked() -> None:
        assert shutdown is not None
        await shutdown.wait()
        web.should_exit = True

    try:
        async with anyio.create_task_group() as group:
            for task in tasks:
                group.start_soon(task)
            if shutdown is not None:
                group.start_soon(stop_when_asked)
            await web.serve(sockets=[sock])
            group.cancel_scope.cancel()
    finally:
        sock.close()
