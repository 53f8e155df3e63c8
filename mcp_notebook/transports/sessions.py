"""The SDK's Streamable HTTP app with bounded handshake sessions: they expire, and no client can hoard them.

The SDK's session manager closes a session that has had no request in
flight for `session_idle_timeout`, and at `max_sessions` refuses every new
`initialize` until some session ends, so one client opening sessions in a
loop locks everyone else out. Ending the least recently used session
instead would let that client end everyone else's. `BoundedSessionManager`
admits a new session by this rule (docs/deployment.md, "Sessions"):

* a session *in use* (a request in flight or an open GET stream) is never
  ended to make room, nor one that has been idle for less than
  `session_evict_after` (60 s): only sessions idle longer are evictable;
* one peer (the client's IP address) holds at most `max_sessions_per_peer`
  sessions (half of `max_sessions` by default), GET streams included; at
  that cap its own least recently used evictable session makes room, else
  its newcomer is refused (503, -32603 "Too many open sessions");
* at `max_sessions` the least recently used evictable session of any peer
  makes room, else the newcomer is refused.

So a flood from one address fills its own share and is refused; the others
keep theirs, and a newcomer from another address is served. The session
manager's private parts this needs (its admission hook `_admit_session`,
its session table and owners) are reached through `protocol/sdk_seam.py`,
where a canary test watches each.

`stateless=True` serves handshake clients without sessions at all (every
request stands alone; see docs/deployment.md for what they lose).
"""

from __future__ import annotations

import contextvars
import logging
import math
from collections.abc import AsyncIterator, Callable, Collection, Coroutine
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..protocol.sdk_seam import admit_session, check_session_manager, open_sessions, session_owners
from .limits import HttpLimits
from .sse_events import RecentEvents

__all__ = ["BoundedSessionManager", "create_session_app"]

log = logging.getLogger(__name__)

_PEER: Final = contextvars.ContextVar[str]("mcp_notebook_peer", default="")
"""The address of the client whose request is being served (set per request by `_tag_peer`)."""


class _PeerTagged:
    """The endpoint, knowing whose request it serves (an ASGI instance, so Starlette routes to it as is)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        _PEER.set(str(client[0]) if client else "")
        await self.app(scope, receive, send)


class BoundedSessionManager(StreamableHTTPSessionManager):
    """A session manager that makes room at its cap by ending the least recently used idle session."""

    sessions_per_peer: int | None = None
    evict_after: float = 60.0

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        # The SDK's hook for each new session (sdk_seam: `admit_session`); None answers 503.
        sessions = open_sessions(self)
        peers: dict[str, str] = self.__dict__.setdefault("_peers", {})
        for gone in [session_id for session_id in peers if session_id not in sessions]:
            del peers[gone]
        peer = _PEER.get()
        if self.sessions_per_peer is not None:
            mine = [session_id for session_id, owner in peers.items() if owner == peer]
            if len(mine) >= self.sessions_per_peer and not self._end_least_recently_used(mine):
                log.warning("Refusing a new session to %s: it holds %d, the most one peer may", peer, len(mine))
                return None
        full = self.max_sessions is not None and len(sessions) >= self.max_sessions
        if full and not self._end_least_recently_used(list(sessions)):
            return None
        transport = admit_session(self, requestor)
        if transport is not None and transport.mcp_session_id is not None:
            peers[transport.mcp_session_id] = peer
        return transport

    def _end_least_recently_used(self, among: Collection[str]) -> bool:
        """End the least recently used of `among` idle for `evict_after` or longer; False if none is."""
        # An idle session's deadline is when its last request ended plus the idle timeout; a request in
        # flight or an open GET stream sets it to infinity (in use: never evicted).
        sessions = open_sessions(self)
        latest = anyio.current_time() + float(self.session_idle_timeout or 0.0) - self.evict_after
        idle = [
            (transport.idle_scope.deadline, session_id, transport)
            for session_id in among
            if (transport := sessions.get(session_id)) is not None
            and transport.idle_scope is not None
            and math.isfinite(transport.idle_scope.deadline)
            and transport.idle_scope.deadline <= latest
        ]
        if not idle:
            return False
        _, session_id, transport = min(idle, key=lambda entry: entry[0])
        log.info("Ending the least recently used idle session %s to open a new one", session_id)
        # Forgotten now, so its ID answers 404 at once; cancelling its idle scope ends its server task.
        sessions.pop(session_id, None)
        session_owners(self).pop(session_id, None)
        assert transport.idle_scope is not None
        transport.idle_scope.cancel()
        return True


def create_session_app(
    server: Server[Any],
    *,
    path: str,
    limits: HttpLimits,
    max_body_bytes: int,
    stateless: bool = False,
    on_startup: Callable[[], Coroutine[Any, Any, None]] | None = None,
    background: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> Starlette:
    """The Streamable HTTP endpoint at `path` with bounded sessions (or none, when `stateless`).

    Start-up awaits `on_startup()`; `background()` then runs until shutdown.
    """
    manager = BoundedSessionManager(
        app=server,
        stateless=stateless,
        # The access gate checks Host and Origin against the real port; the SDK's own check would only repeat it.
        security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max_body_bytes,
        session_idle_timeout=limits.session_idle_timeout,
        max_sessions=limits.max_sessions,
        event_store=RecentEvents(),  # SSE event ids (2025-11-25) and replay after a reconnect; unused when stateless
    )
    manager.sessions_per_peer = limits.sessions_per_peer
    manager.evict_after = limits.session_evict_after
    check_session_manager(manager)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run(), anyio.create_task_group() as group:
            if on_startup is not None:
                await on_startup()
            if background is not None:
                group.start_soon(background)
            yield
            group.cancel_scope.cancel()

    endpoint = _PeerTagged(StreamableHTTPASGIApp(manager))
    return Starlette(routes=[Route(path, endpoint=endpoint)], lifespan=lifespan)
