"""Event ids for the SSE streams of handshake-era HTTP sessions, and replay after a reconnect.

From 2025-11-25 a server's SSE streams carry event ids (a priming event
first), so a client whose stream broke can reconnect with `Last-Event-ID`
and get what it missed. The SDK does that once it has an event store; this
one keeps the newest events in memory, across every session, within a
count (`max_events`) and a size (`max_bytes`) bound.
Event ids are random, so a client can only name (and replay) events of a
stream it was sent; an id that has aged out replays nothing.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from typing import Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["MAX_BYTES", "MAX_EVENTS", "RecentEvents"]

MAX_EVENTS: Final = 256
MAX_BYTES: Final = 8 * 1024 * 1024


def _size_of(message: JSONRPCMessage) -> int:
    """How many bytes `message` takes on the wire."""
    return len(message.model_dump_json(by_alias=True, exclude_unset=True))


class RecentEvents(EventStore):
    """An in-memory, bounded `EventStore`: the newest events of all streams, at most `max_events` / `max_bytes`."""

    def __init__(self, max_events: int = MAX_EVENTS, max_bytes: int = MAX_BYTES) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._events: OrderedDict[EventId, tuple[StreamId, JSONRPCMessage | None, int]] = OrderedDict()
        self._bytes = 0

    @property
    def count(self) -> int:
        """How many events are kept (no `__len__`: the SDK tests the store for truth)."""
        return len(self._events)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = secrets.token_urlsafe(12)
        size = _size_of(message) if message is not None else 0
        self._events[event_id] = (stream_id, message, size)
        self._bytes += size
        while len(self._events) > self.max_events or (self._bytes > self.max_bytes and len(self._events) > 1):
            _, (_, _, dropped) = self._events.popitem(last=False)
            self._bytes -= dropped
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        if last_event_id not in self._events:
            return None
        stream_id = self._events[last_event_id][0]
        later = False
        for event_id, (owner, message, _) in list(self._events.items()):
            if later and owner == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
            later = later or event_id == last_event_id
        return stream_id
