"""Canary for the one private part of sse-starlette this project reaches (`transports/sse_seam.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette import EventSourceResponse

from mcp_notebook.transports import sse_seam


def test_the_shutdown_watcher_is_where_the_seam_looks_for_it() -> None:
    assert sse_seam.missing_touchpoints() == []


def _watchers() -> list[asyncio.Task[Any]]:
    return [task for task in asyncio.all_tasks() if "_shutdown_watcher" in repr(task.get_coro())]


async def test_a_stream_leaves_the_watcher_running_until_the_seam_ends_it() -> None:
    async def one_event() -> AsyncIterator[dict[str, str]]:
        yield {"data": "hi"}

    sent: list[dict[str, Any]] = []
    requests = iter([{"type": "http.request", "body": b"", "more_body": False}])

    async def receive() -> dict[str, Any]:
        message = next(requests, None)
        if message is None:
            await asyncio.Event().wait()  # the client stays connected
        assert message is not None
        return message

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "headers": [], "asgi": {"version": "3.0"}}
    await EventSourceResponse(one_event())(scope, receive, send)
    assert any(m.get("body", b"").startswith(b"data: hi") for m in sent)
    if hasattr(sse_seam.sse, "_shutdown_watcher"):  # releases before the per-loop watcher (3.0) start none
        assert _watchers(), "a stream starts sse-starlette's shutdown watcher on its loop, and nothing ends it"
    await sse_seam.end_shutdown_watcher()
    assert _watchers() == []
