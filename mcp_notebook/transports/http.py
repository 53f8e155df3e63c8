"""Serving over Streamable HTTP at `/mcp`: the application, its socket and its uvicorn.

`create_http_app` builds the whole ASGI application every HTTP host runs:
the access gate (`gate.py`: Host, Origin, token, body limits, readiness,
screening) in front of the SDK's Streamable HTTP app with bounded sessions
(`sessions.py`), the stateless requests answered by the server's `Answers`
on the way (`answering.py`). Handshake clients (no `MCP-Protocol-Version:
2026-07-28` header) get sessions (`Mcp-Session-Id`); 2026-07-28 clients are
served statelessly. `bind_socket` and `port_sharing` hold the port,
`uvicorn_config` and `serve_http` run the application under uvicorn with the
guarded protocol (`limits.py`).
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
import threading
from collections.abc import Callable, Container, Coroutine, Sequence
from typing import Any

import anyio
import uvicorn
from mcp.server.lowlevel import Server

from ..protocol.server import PromptServer
from .answering import StatelessRequests
from .gate import MAX_BODY_BYTES, MCP_PATH, AccessGate
from .hosts import LOOPBACK_NAMES, WILDCARD_HOSTS, HostAllowList, bracketed
from .limits import GuardedHttpToolsProtocol, HttpLimits
from .sessions import create_session_app
from .stdio import BackgroundTask
from .ticks import SleepingServer

__all__ = [
    "allowed_hosts_for",
    "bind_socket",
    "create_http_app",
    "is_loopback",
    "port_sharing",
    "serve_http",
    "url_for",
    "uvicorn_config",
]

log = logging.getLogger(__name__)

_bracketed = bracketed


def is_loopback(host: str) -> bool:
    return host.strip("[]").lower() in LOOPBACK_NAMES


def url_for(host: str, port: int) -> str:
    """The URL a local client uses; a wildcard bind is reached through 127.0.0.1."""
    shown = "127.0.0.1" if host in WILDCARD_HOSTS else host
    return f"http://{_bracketed(shown)}:{port}{MCP_PATH}"


def allowed_hosts_for(host: str, port: int, extra: Sequence[str] = ()) -> HostAllowList:
    """The `Host` header values to accept when bound to `host`:`port`, on every bind (`hosts.py`)."""
    return HostAllowList.for_bind(host, port, extra)


def bind_socket(host: str, port: int, *, shared_port: bool = False) -> socket.socket:
    """A listening socket on `host`:`port` (0 = any free port); connections queue until serving starts.

    `shared_port` (where `port_sharing()`): bound but not listening, with `SO_REUSEPORT` and without
    `SO_REUSEADDR`, so that each worker can bind a socket of its own to the same port (`workers.py`)
    and no other user can bind it while no worker listens; a busy port still fails here.
    """
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    if shared_port:
        return _port_holder(family, kind, proto, address)
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _port_holder(family: int, kind: int, proto: int, address: Any) -> socket.socket:
    """The socket that holds a port the workers share: the port is ours from the moment it is bound.

    On Linux another user's bind is refused by this socket as long as it lacks `SO_REUSEADDR`
    (which lets anyone join a port on which nothing listens) and has `SO_REUSEPORT` (which lets
    only sockets of this user's join, and only sockets that ask for it).
    """
    # First a plain bind, which fails on a port held by anyone, `SO_REUSEPORT` or not: another server
    # of this user's on the port is a busy port too, never a sibling whose connections get shared.
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(address)
        address = probe.getsockname()
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except OSError as error:
        sock.close()
        if error.errno != errno.EADDRINUSE:
            raise
        # Free to a socket with `SO_REUSEADDR`, busy without it: connections of a server that stopped
        # without `SO_REUSEPORT` are still closing (TIME_WAIT, at most a minute on Linux).
        raise OSError(
            errno.EADDRINUSE,
            "Address in use by connections still closing from a server that just stopped; "
            "try again within a minute, or without --workers",
        ) from None
    return sock


def port_sharing() -> bool:
    """Whether worker processes can each listen on one port and have the system balance new connections
    between them: Linux's `SO_REUSEPORT` does (elsewhere it picks one socket, or is not there)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def create_http_app(
    server: Server[Any],
    *,
    allowed_hosts: Container[str] | None,
    token: str | None = None,
    limits: HttpLimits | None = None,
    stateless: bool = False,
    prepare: Callable[[], Coroutine[Any, Any, None]] | None = None,
    tasks: Sequence[BackgroundTask] = (),
    on_ready: Callable[[], None] | None = None,
    token_hint: str | None = None,
) -> AccessGate:
    """The whole ASGI application: the gate in front of the Streamable HTTP endpoint at `/mcp`.

    Its lifespan awaits `prepare()` (indexing the prompts) during start-up, so a
    server starts accepting requests only once there is something to serve;
    then `on_ready()` is called and `tasks` (the folder watch) run until
    shutdown. `stateless` serves handshake clients without sessions.
    """
    limits = limits or HttpLimits()
    ready = threading.Event()

    async def run_tasks() -> None:
        async with anyio.create_task_group() as group:
            for task in tasks:
                group.start_soon(task)

    async def start() -> None:
        if prepare is not None:
            await prepare()
        ready.set()
        if on_ready is not None:
            on_ready()

    sdk_app = create_session_app(
        server,
        path=MCP_PATH,
        limits=limits,
        max_body_bytes=MAX_BODY_BYTES,
        stateless=stateless,
        on_startup=start,
        background=run_tasks,
    )
    return AccessGate(
        sdk_app,
        allowed_hosts=allowed_hosts,
        token=token,
        limits=limits,
        ready=ready,
        token_hint=token_hint,
        answering=StatelessRequests(server.answers) if isinstance(server, PromptServer) else None,
    )


def uvicorn_config(app: Any, limits: HttpLimits, **options: Any) -> uvicorn.Config:
    """uvicorn settings for serving `app` within `limits`: the protocol with the header timeout and cap.

    With `factory=True` (the workers of `serve --workers N`, which uvicorn starts from a pickled copy of
    these settings) the protocol class is the plain one, and the factory bounds it (`asgi.create_app`)."""
    factory = bool(options.get("factory"))
    return uvicorn.Config(
        app,
        http=GuardedHttpToolsProtocol if factory else GuardedHttpToolsProtocol.bounded_by(limits),
        lifespan="on",
        log_config=None,
        access_log=False,
        log_level="warning",
        timeout_keep_alive=limits.keep_alive_timeout,
        timeout_graceful_shutdown=max(1, round(limits.drain_timeout)),
        **options,
    )


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
    limits: HttpLimits | None = None,
    stateless: bool = False,
    prepare: Callable[[], Coroutine[Any, Any, None]] | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve `server` over Streamable HTTP at http://`host`:`port`/mcp until stopped.

    `port` 0 picks a free port; `sock`, when given, is an already bound
    listening socket (bound before the prompts are indexed, so a busy port is
    refused at once). `prepare()` runs before requests are served and
    `on_ready(url)` is called once they are. `tasks` run beside the server.
    Setting `shutdown` (or SIGINT / SIGTERM) stops it, letting requests in
    flight finish within the drain timeout. Binding to a non-loopback host is
    the caller's decision: the CLI asks for `--allow-remote` and prints a warning.
    """
    limits = limits or HttpLimits(drain_timeout=2)
    if sock is None:
        sock = bind_socket(host, port)
    bound_port = int(sock.getsockname()[1])
    url = url_for(host, bound_port)
    gate = create_http_app(
        server,
        allowed_hosts=allowed_hosts_for(host, bound_port, allowed_hosts),
        token=token,
        limits=limits,
        stateless=stateless,
        prepare=prepare,
        tasks=tasks,
        on_ready=(lambda: on_ready(url)) if on_ready else None,
        token_hint=token_hint,
    )
    web = SleepingServer(uvicorn_config(gate, limits))

    async def stop_when_asked() -> None:
        assert shutdown is not None
        await shutdown.wait()
        web.should_exit = True

    try:
        async with anyio.create_task_group() as group:
            if shutdown is not None:
                group.start_soon(stop_when_asked)
            await web.serve(sockets=[sock])
            group.cancel_scope.cancel()
    finally:
        sock.close()
