"""The SSE event store: random ids, bounded memory, replay of one stream's later events only."""

from __future__ import annotations

import mcp_types as types
from mcp.server.streamable_http import EventMessage

from mcp_notebook.transports.sse_events import RecentEvents


def ping(request_id: int) -> types.JSONRPCMessage:
    return types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="ping")


async def test_replay_sends_the_later_events_of_the_same_stream_only() -> None:
    store = RecentEvents()
    first = await store.store_event("a", None)  # a priming event: nothing to replay
    await store.store_event("a", ping(1))
    await store.store_event("b", ping(2))
    await store.store_event("a", ping(3))
    replayed: list[EventMessage] = []

    async def collect(event: EventMessage) -> None:
        replayed.append(event)

    assert await store.replay_events_after(first, collect) == "a"
    assert [getattr(event.message, "id", None) for event in replayed] == [1, 3]
    assert all(event.event_id for event in replayed)
    assert await store.replay_events_after("not-an-id", collect) is None


async def test_the_store_keeps_only_the_newest_events_and_ids_are_not_guessable() -> None:
    store = RecentEvents(max_events=3)
    ids = [await store.store_event("a", ping(n)) for n in range(10)]
    assert store.count == 3
    assert len(set(ids)) == 10 and all(len(event_id) >= 16 for event_id in ids)

    async def ignore(event: EventMessage) -> None:
        raise AssertionError("an aged-out id replays nothing")

    assert await store.replay_events_after(ids[0], ignore) is None
    assert bool(store)  # the SDK enables event ids only for a store that tests true


async def test_the_store_stays_within_its_size_bound() -> None:
    store = RecentEvents(max_bytes=2_000)
    big = types.JSONRPCResponse(jsonrpc="2.0", id=1, result={"text": "x" * 900})
    ids = [await store.store_event("a", big) for _ in range(5)]
    assert store.count == 2  # about 930 bytes each: the oldest go first

    async def ignore(event: EventMessage) -> None:
        pass

    assert await store.replay_events_after(ids[0], ignore) is None
    assert await store.replay_events_after(ids[-2], ignore) == "a"
