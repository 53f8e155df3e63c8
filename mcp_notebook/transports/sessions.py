"""The SDK's Streamable HTTP app with bounded handshake sessions: they expire, and no client can hoard them.

The SDK's session manager already closes a session that has had no request
in flight for `session_idle_timeout`; at `max_sessions` it refuses every new
`initialize` with 503 until some session ends, so one client opening sessions
in a loop locks everyone else out. `BoundedSessionManager` instead ends the
least recently used idle session (one with no request in flight and no open
GET stream) to make room; only when every session is busy is a newcomer
refused. The session manager's private parts this needs (its admission
hook `_admit_session`, its session table and owners) are reached through
`protocol/sdk_seam.py`, where a canary test watches each.

`stateless=True` serves handshake clients without sessions at all (every
request stands alone; see docs/deployment.md for what they lose).
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route

from ..protocol.sdk_seam import admit_session, check_session_manager, open_sessions, session_owners
from .limits import HttpLimits
from .sse_events import RecentEvents

__all__ = ["BoundedSessionManager", "create_session_app"]

log = logging.getLogger(__name__)


class BoundedSessionManager(StreamableHTTPSessionManager):
    """A session manager that makes room at its cap by ending the least recently used idle session.

    Session IDs start with `session_prefix` (a worker's ID, so its siblings can route to it).
    """

    session_prefix: str = ""

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        # The SDK's hook for each new session (sdk_seam: `admit_session`).
        sessions, owners = open_sessions(self), session_owners(self)
        if self.max_sessions is not None and len(sessions) >= self.max_sessions:
            self._end_least_recently_used()
        transport = admit_session(self, requestor)
        if transport is not None and self.session_prefix and transport.mcp_session_id is not None:
            # Re-keyed before the transport has served anything, so it only ever knows the prefixed ID.
            plain = transport.mcp_session_id
            transport.mcp_session_id = self.session_prefix + plain
            sessions[transport.mcp_session_id] = sessions.pop(plain)
            if plain in owners:
                owners[transport.mcp_session_id] = owners.pop(plain)
        return transport

    def _end_least_recently_used(self) -> None:
        # An idle session's deadline is when its last request ended plus the idle timeout, so the
        # smallest deadline is the least recently used; a request in flight sets it to infinity.
        idle = [
            (transport.idle_scope.deadline, session_id, transport)
            for session_id, transport in open_sessions(self).items()
            if transport.idle_scope is not None and math.isfinite(transport.idle_scope.deadline)
        ]
        if not idle:
            return
        _, session_id, transport = min(idle, key=lambda entry: entry[0])
        log.info("Ending the least recently used idle session to open a new one (%d open)", len(idle))
        # Forgotten now, so its ID answers 404 at once; cancelling its idle scope ends its server task.
        open_sessions(self).pop(session_id, None)
        session_owners(self).pop(session_id, None)
        assert transport.idle_scope is not None
        transport.idle_scope.cancel()


def create_session_app(
    server: Server[Any],
    *,
    path: str,
    limits: HttpLimits,
    max_body_bytes: int,
    stateless: bool = False,
    on_startup: Callable[[], Coroutine[Any, Any, None]] | None = None,
    background: Callable[[], Coroutine[Any, Any, None]] | None = None,
    session_prefix: str = "",
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
    manager.session_prefix = session_prefix
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

    return Starlette(routes=[Route(path, endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan)
