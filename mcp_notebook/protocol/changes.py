"""Telling every connected client that the prompt list changed.

A `ChangeFeed` lives as long as a running server (it is the server's lifespan
state). It listens to the registry, whose listeners may be called from any
thread, hops onto the server's event loop, and fans each change out to

* every handshake-era connection (2024-11-05 … 2025-11-25), as a plain
  `notifications/prompts/list_changed` on its standalone channel (the stdio
  pipe, or the HTTP session's GET stream). The SDK does not keep a list of
  connections, so `ConnectionTracker` remembers each one when it first sends
  a request and forgets it when the connection ends (or stops reading);
* every 2026-07-28 `subscriptions/listen` stream (`answers.Answers.listen`
  opens one on `listen_handler`), through the SDK's subscription bus, which
  stamps the subscription id and filters by kind.

Bursts coalesce: changes that arrive while a fan-out is running produce one
more notification, not one each; and only a change of the prompts themselves
(their fingerprint) is announced.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ResourcesListChanged

from ..registry import PromptRegistry, RegistrySnapshot
from .revisions import is_modern
from .sdk_seam import connection_of

__all__ = ["ChangeFeed", "ConnectionTracker"]

log = logging.getLogger(__name__)

PROMPTS_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCES_CHANGED: Final = "notifications/resources/list_changed"


class ChangeFeed:
    """Fans registry changes out to handshake connections and listen streams while a server runs."""

    def __init__(self, registry: PromptRegistry, *, resources: bool = False, send_timeout: float = 5.0) -> None:
        self.registry = registry
        self.resources = resources
        self.send_timeout = send_timeout
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self._connections: set[Connection] = set()
        self._wake_send: MemoryObjectSendStream[None] | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._loop_thread: int | None = None
        self._asyncio_loop: asyncio.AbstractEventLoop | None = None
        self._announced = ""  # fingerprint of the prompt set clients last heard about

    @property
    def connection_count(self) -> int:
        """How many handshake-era connections would get the next notification."""
        return len(self._connections)

    def track(self, session: ServerSession) -> None:
        """Remember the handshake-era connection behind `session` until it ends."""
        connection = connection_of(session)
        if connection is None or connection in self._connections:
            return
        self._connections.add(connection)
        connection.exit_stack.callback(self._connections.discard, connection)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ChangeFeed]:
        """Follow the registry until the block ends; then close every listen stream gracefully."""
        # One slot: changes that arrive while a fan-out is pending are covered by it.
        wake_send, wake_receive = anyio.create_memory_object_stream[None](1)
        self._wake_send = wake_send
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        self._asyncio_loop = (
            self._token.native_token if isinstance(self._token.native_token, asyncio.AbstractEventLoop) else None
        )
        self._announced = self.registry.snapshot().fingerprint
        remove_listener = self.registry.add_listener(self.on_registry_change)
        try:
            async with wake_send, wake_receive, anyio.create_task_group() as tasks:
                tasks.start_soon(self._pump, wake_receive)
                try:
                    yield self
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            remove_listener()
            self.listen_handler.close()
            self._token = None
            self._wake_send = None

    def on_registry_change(self, snapshot: RegistrySnapshot) -> None:
        """Registry listener: may run on any thread; schedules a fan-out on the server's loop.

        A change of warnings only (a notebook that failed to reload keeps its
        last good prompts) leaves the prompt set as it was: nobody is told.
        """
        token = self._token
        if token is None or snapshot.fingerprint == self._announced:
            return
        self._announced = snapshot.fingerprint
        if threading.get_ident() == self._loop_thread:
            self._wake()
            return
        try:
            if self._asyncio_loop is not None:
                # Non-blocking: the publishing thread (a kernel's main thread, say) never waits for the server.
                self._asyncio_loop.call_soon_threadsafe(self._wake)
            else:
                anyio.from_thread.run_sync(self._wake, token=token)
        except (anyio.RunFinishedError, RuntimeError):
            log.debug("prompt change after the server stopped; nobody to tell")

    def _wake(self) -> None:
        if self._wake_send is None:
            return
        # When full, a fan-out is already pending and will cover this change too.
        with suppress(anyio.WouldBlock, anyio.ClosedResourceError):
            self._wake_send.send_nowait(None)

    async def _pump(self, wakes: MemoryObjectReceiveStream[None]) -> None:
        async for _ in wakes:
            try:
                await self.publish()
            except Exception:  # a failed fan-out must not stop later ones
                log.exception("could not announce a prompt list change")

    async def publish(self) -> None:
        """Announce a change now to every listen stream and handshake connection."""
        await self.bus.publish(PromptsListChanged())
        if self.resources:
            await self.bus.publish(ResourcesListChanged())
        for connection in list(self._connections):
            with anyio.move_on_after(self.send_timeout) as scope:
                await connection.notify(PROMPTS_CHANGED, None)
                if self.resources:
                    await connection.notify(RESOURCES_CHANGED, None)
            if scope.cancelled_caught:
                log.warning("a client stopped reading; it will get no more change notifications")
                self._connections.discard(connection)


class ConnectionTracker:
    """Server middleware: hands each handshake-era connection to the running `ChangeFeed`."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        feed = ctx.lifespan_context
        # `initialize` is skipped: the connection only counts once the handshake went through.
        if isinstance(feed, ChangeFeed) and ctx.method != "initialize" and not is_modern(ctx.protocol_version):
            feed.track(ctx.session)
        return await call_next(ctx)
