"""Running an ASGI application inside a tornado server: its lifespan, and one request per handler call.

Jupyter Server is tornado; the MCP endpoint is the same ASGI application
`mcp-notebook serve --http` runs under uvicorn. `AsgiLifespan` drives the
application's lifespan (startup before the first request, shutdown when the
server stops); `relay` hands one tornado request to it and writes the
response back chunk by chunk, flushing each one, so Server-Sent Event
streams reach the client as they are produced (a stream's head is flushed
as soon as it starts, before any event). When the client goes away,
the application is told (`http.disconnect`) and stops streaming.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from http import HTTPStatus
from typing import Any

import anyio
from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

__all__ = ["ASGIApp", "AsgiLifespan", "Relay"]

log = logging.getLogger(__name__)

ASGIApp = Any  # (scope, receive, send) -> awaitable; typed loosely to keep starlette out of this module
Message = dict[str, Any]

_INTERNAL_ERROR = b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "Internal error"}}'


class AsgiLifespan:
    """The ASGI lifespan protocol for one application: `run()` starts it and serves until `stop()`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.started = anyio.Event()
        self.failure: str | None = None
        self._stop = anyio.Event()
        self._startup_sent = False

    def stop(self) -> None:
        """Ask the application to shut down (its `run()` then returns)."""
        self._stop.set()

    async def _receive(self) -> Message:
        if not self._startup_sent:
            self._startup_sent = True
            return {"type": "lifespan.startup"}
        await self._stop.wait()
        return {"type": "lifespan.shutdown"}

    async def _send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.failed":
            self.failure = str(message.get("message") or "the application failed to start")
            self.started.set()
        elif kind == "lifespan.startup.complete":
            self.started.set()

    async def run(self) -> None:
        """Start the application and run it until `stop()`; `failure` says why when it could not start."""
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        try:
            await self.app(scope, self._receive, self._send)
        finally:
            if not self.started.is_set():
                self.failure = self.failure or "the application stopped before it started"
                self.started.set()


class Relay:
    """One tornado request given to an ASGI application, its response written back as it comes.

    `path` is the path the application sees (its own endpoint, whatever the
    server's base URL); headers named in `withheld` are not passed on, since
    the tornado handler has already acted on them (credentials, origin).
    """

    def __init__(self, handler: RequestHandler, *, path: str, withheld: Collection[str] = ()) -> None:
        self.handler = handler
        self.path = path
        self.withheld = frozenset(name.lower() for name in withheld)
        self.disconnected = anyio.Event()
        self.started = False
        self.finished = False
        self.content_type = "application/octet-stream"  # the application's, for a handler that sets its own
        self._body_sent = False

    def scope(self) -> dict[str, Any]:
        request = self.handler.request
        headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.get_all()
            if name.lower() not in self.withheld
        ]
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": request.version.removeprefix("HTTP/"),
            "method": request.method,
            "scheme": request.protocol,
            "path": self.path,
            "raw_path": self.path.encode("ascii"),
            "query_string": request.query.encode("latin-1"),
            "root_path": "",
            "headers": headers,
            "client": (request.remote_ip, 0) if request.remote_ip else None,
            "server": None,
            "state": {},
        }

    async def receive(self) -> Message:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self.handler.request.body or b"", "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self._start(int(message["status"]), message.get("headers", ()))
            if self.content_type.split(";", 1)[0].strip().lower() == "text/event-stream":
                # A stream's head goes out now, as under uvicorn: its first event may be long in coming,
                # and a client waits for the head before it counts the stream as open.
                await self._flush()
        elif kind == "http.response.body" and not self.finished and not self.disconnected.is_set():
            body = message.get("body", b"")
            if body:
                self.handler.write(body)
            if message.get("more_body", False):
                await self._flush()
            else:
                self.finished = True
                await self._finish()

    def _start(self, status: int, headers: Any) -> None:
        self.started = True
        handler = self.handler
        try:
            reason = HTTPStatus(status).phrase
        except ValueError:
            reason = "Unknown"
        handler.set_status(status, reason=reason)
        handler.clear_header("Content-Type")
        seen: set[str] = set()
        for raw_name, raw_value in headers:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            if name.lower() in ("content-length", "transfer-encoding", "connection"):
                continue  # tornado frames the response itself (chunked while streaming)
            if name.lower() == "content-type":
                self.content_type = value
            if name.lower() in seen:
                handler.add_header(name, value)
            else:
                handler.set_header(name, value)
                seen.add(name.lower())

    async def _flush(self) -> None:
        try:
            await self.handler.flush()
        except StreamClosedError:
            self.disconnected.set()

    async def _finish(self) -> None:
        try:
            await self.handler.finish()
        except StreamClosedError:
            self.disconnected.set()

    async def run(self, app: ASGIApp) -> None:
        """Relay the request through `app`; a response it never started becomes a 500."""
        try:
            await app(self.scope(), self.receive, self.send)
        finally:
            self.disconnected.set()  # anything still reading the request learns it is over
        if not self.started:
            log.error("the MCP application returned without a response to %s", self.handler.request.method)
            self._start(500, [(b"content-type", b"application/json")])
            self.handler.write(_INTERNAL_ERROR)
        if not self.finished:
            self.finished = True
            await self._finish()

    def on_connection_close(self) -> None:
        """Call from the handler's `on_connection_close`: the client went away."""
        self.disconnected.set()
