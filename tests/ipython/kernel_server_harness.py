"""Helpers for the kernel server tests: a stand-in kernel main thread, and SDK clients with the bearer token."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

DEADLINE = 20.0


class MainLoop:
    """A thread running an event loop: the tests' stand-in for a kernel's main thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fake-kernel-main", daemon=True)
        self.thread.start()

    def post(self, fn: Callable[[], None]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def run(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the loop thread and wait for its result (everything posted earlier runs first)."""
        return asyncio.run_coroutine_threadsafe(self._call(fn), self.loop).result(DEADLINE)

    @staticmethod
    async def _call(fn: Callable[[], Any]) -> Any:
        return fn()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(DEADLINE)
        self.loop.close()


class Notifications:
    """Collects a handshake-era client's notifications; `wait_for(method)` waits for the next one of a kind."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._changed = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.seen.append(method)
            self._changed.set()

    async def wait_for(self, method: str, *, after: int = 0) -> None:
        async with asyncio.timeout(DEADLINE):
            while method not in self.seen[after:]:
                self._changed.clear()
                await self._changed.wait()


@contextlib.asynccontextmanager
async def connect(
    url: str, token: str | None, *, mode: str = "legacy", message_handler: Any = None
) -> AsyncIterator[Client]:
    """An SDK client of the kernel's server, sending the bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, message_handler=message_handler) as client:
            yield client
