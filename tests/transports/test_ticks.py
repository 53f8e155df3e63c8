"""An idle HTTP server sleeps: uvicorn's main loop wakes once a second, and at once to stop."""

from __future__ import annotations

import socket
import threading
import time

import anyio
import httpx2
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from mcp_notebook.transports.ticks import TICK_SECONDS, SleepingServer

DEADLINE = 10.0


async def _hello(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


class CountingServer(SleepingServer):
    ticks = 0

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.up = anyio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self.up.set()

    async def on_tick(self, counter: int) -> bool:
        self.ticks += 1
        return await super().on_tick(counter)


def _bound() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def _config() -> uvicorn.Config:
    return uvicorn.Config(_hello, lifespan="off", log_config=None, access_log=False, log_level="warning")


@pytest.mark.slow  # its point is timing: how often it wakes, how soon it stops
async def test_an_idle_server_wakes_about_once_a_second_and_stops_at_once() -> None:
    server = CountingServer(_config())
    sock = _bound()
    async with anyio.create_task_group() as group:
        group.start_soon(lambda: server.serve(sockets=[sock]))
        with anyio.fail_after(DEADLINE):
            await server.up.wait()
        port = sock.getsockname()[1]
        async with httpx2.AsyncClient() as client:
            response = await client.get(f"http://127.0.0.1:{port}/")
        assert response.text == "hello" and response.headers.get("date")
        before = server.ticks
        await anyio.sleep(2.0)  # measuring idleness: nothing to wait for but time itself
        assert server.ticks - before <= 2 / TICK_SECONDS + 1  # uvicorn's own loop: 20
        stopping = time.monotonic()
        threading.Thread(target=setattr, args=(server, "should_exit", True)).start()  # as a signal handler would
        group.cancel_scope.deadline = anyio.current_time() + DEADLINE  # the server returns, or the test fails
    assert not group.cancel_scope.cancelled_caught
    assert time.monotonic() - stopping < TICK_SECONDS / 2  # woken to stop, not at its next tick
    sock.close()
