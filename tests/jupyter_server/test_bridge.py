"""The ASGI-in-tornado bridge on its own: a real tornado server on loopback relaying to small ASGI apps."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler

from mcp_notebook.jupyter.bridge import AsgiLifespan, Relay

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
DEADLINE = 10


class RelayHandler(RequestHandler):
    def initialize(self, app: App) -> None:
        self.app = app
        self.relay: Relay | None = None

    async def _relay(self) -> None:
        self.relay = Relay(self, path="/mcp", withheld=("authorization",))
        await self.relay.run(self.app)

    get = post = _relay

    def on_connection_close(self) -> None:
        if self.relay is not None:
            self.relay.on_connection_close()


@asynccontextmanager
async def serving(app: App) -> AsyncIterator[str]:
    sockets = bind_sockets(0, "127.0.0.1")
    server = HTTPServer(Application([(r"/base/mcp", RelayHandler, {"app": app})]))
    server.add_sockets(sockets)
    try:
        yield f"http://127.0.0.1:{sockets[0].getsockname()[1]}/base/mcp"
    finally:
        server.stop()
        await server.close_all_connections()


async def test_each_chunk_reaches_the_client_before_the_next_is_produced() -> None:
    second_may_go = anyio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b"data: one\n\n", "more_body": True})
        await second_may_go.wait()  # only the client having read the first chunk lets this go on
        await send({"type": "http.response.body", "body": b"data: two\n\n", "more_body": False})

    async with serving(app) as url, httpx2.AsyncClient() as http, http.stream("GET", url) as response:
        chunks = response.aiter_raw()
        with anyio.fail_after(DEADLINE):
            first = await anext(chunks)
        second_may_go.set()
        rest = b"".join([chunk async for chunk in chunks])
    assert response.headers["content-type"] == "text/event-stream"
    assert first == b"data: one\n\n"
    assert rest == b"data: two\n\n"


async def test_the_app_sees_its_own_path_the_body_and_no_withheld_header() -> None:
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen["path"], seen["headers"] = scope["path"], dict(scope["headers"])
        seen["message"] = await receive()
        await send({"type": "http.response.start", "status": 202, "headers": [(b"x-one", b"1"), (b"x-one", b"2")]})
        await send({"type": "http.response.body", "body": b""})

    async with serving(app) as url, httpx2.AsyncClient() as http:
        response = await http.post(url, content=b'{"a": 1}', headers={"Authorization": "token s3cret", "X-Kept": "k"})
    assert response.status_code == 202
    assert response.headers.get_list("x-one") == ["1", "2"]
    assert seen["path"] == "/mcp"
    assert seen["message"] == {"type": "http.request", "body": b'{"a": 1}', "more_body": False}
    assert b"authorization" not in seen["headers"] and seen["headers"][b"x-kept"] == b"k"


async def test_a_client_that_goes_away_is_a_disconnect_for_the_app() -> None:
    told = anyio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()  # the body
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        if (await receive())["type"] == "http.disconnect":
            told.set()

    async with serving(app) as url:
        async with httpx2.AsyncClient() as http, http.stream("GET", url) as response:
            await anext(response.aiter_raw())
        with anyio.fail_after(DEADLINE):
            await told.wait()


async def test_an_app_that_never_answers_gives_a_json_rpc_internal_error() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        return None

    async with serving(app) as url, httpx2.AsyncClient() as http:
        response = await http.post(url, content=b"{}")
    assert response.status_code == 500
    assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "Internal error"}}


@pytest.mark.parametrize("fails", [False, True])
async def test_the_lifespan_starts_the_app_and_stops_it(fails: bool) -> None:
    events: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "lifespan"
        events.append((await receive())["type"])
        if fails:
            await send({"type": "lifespan.startup.failed", "message": "no folder"})
            return
        await send({"type": "lifespan.startup.complete"})
        events.append((await receive())["type"])
        await send({"type": "lifespan.shutdown.complete"})

    lifespan = AsgiLifespan(app)
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            group.start_soon(lifespan.run)
            await lifespan.started.wait()
            lifespan.stop()
    assert lifespan.failure == ("no folder" if fails else None)
    assert events == (["lifespan.startup"] if fails else ["lifespan.startup", "lifespan.shutdown"])
