"""Serving over stdio: one JSON-RPC message per line on stdin/stdout, every protocol revision.

The SDK's stdio transport silently drops a line that is not a JSON-RPC
message (or takes a request with a malformed id for a notification). Here
such a line gets an answer, as JSON-RPC requires: `-32700 Parse error` for
text that is not JSON, `-32600 Invalid Request` (with the request's id when
it has one) for JSON that is not a message, as `protocol.screening` lays
out. Blank lines are ignored. The SDK locks the era on the first request:
after `initialize` the connection stays handshake-era, after an enveloped
2026-07-28 request it stays modern. Logs go to stderr only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AbstractAsyncContextManager, suppress
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..protocol.screening import UnreadableMessage
from ..protocol.sdk_seam import ReadStream, WriteStream, is_json_invalid
from ..protocol.server import PromptServer
from .pipes import pipe_streams, pipes_supported

__all__ = ["BackgroundTask", "RepliesToBadLines", "StdioStreams", "error_reply_for", "serve_stdio", "stdio_transport"]

log = logging.getLogger(__name__)

BackgroundTask = Callable[[], Coroutine[Any, Any, None]]
"""Something to run next to the server (a folder watcher); cancelled when the server stops."""


def _request_id(value: Any) -> types.RequestId | None:
    if isinstance(value, dict):
        candidate = value.get("id")
        if isinstance(candidate, str) or (isinstance(candidate, int) and not isinstance(candidate, bool)):
            return candidate
    return None


def error_reply_for(problem: ValidationError) -> types.JSONRPCError | None:
    """The JSON-RPC error for a line the SDK could not read as a message; None for a blank line."""
    details = problem.errors()
    if is_json_invalid(problem):
        line = details[0].get("input")
        if isinstance(line, str | bytes) and not line.strip():
            return None
        error = types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not valid JSON")
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    request_id = next((rid for rid in (_request_id(d.get("input")) for d in details) if rid is not None), None)
    error = types.ErrorData(
        code=types.INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    )
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


class RepliesToBadLines:
    """A read stream that answers unreadable lines itself and passes every real message on."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], replies: WriteStream[SessionMessage]) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        # The SDK restores the sender's context from here (see `ReadStream`).
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if isinstance(item, UnreadableMessage):
                refusal = item.refusal
                error = types.ErrorData(code=refusal.code, message=refusal.message)
                reply: types.JSONRPCError | None = types.JSONRPCError(jsonrpc="2.0", id=refusal.id, error=error)
            elif isinstance(item, ValidationError):  # from the SDK's own transport
                reply = error_reply_for(item)
            else:
                return item
            if reply is None:
                continue
            log.warning("answered an unreadable line with %s", reply.error.code)
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._replies.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> RepliesToBadLines:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> RepliesToBadLines:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


StdioStreams = tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]


def stdio_transport(
    stdin: anyio.AsyncFile[str] | None = None, stdout: anyio.AsyncFile[str] | None = None
) -> AbstractAsyncContextManager[StdioStreams]:
    """This process's stdin/stdout (or the given files) as message streams, fds 0 and 1 diverted meanwhile.

    The event loop waits on the pipes itself where it can (`pipes`: no
    worker thread per message, replies to requests already read are written
    when stdin ends); otherwise (Windows, given files, `sys` streams replaced)
    the SDK's transport.
    """
    if stdin is None and stdout is None and pipes_supported():
        return pipe_streams()
    return stdio_server(stdin, stdout)


async def serve_stdio(
    server: Server[Any],
    *,
    tasks: Sequence[BackgroundTask] = (),
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
) -> None:
    """Serve `server` on this process's stdin/stdout (or the given files) until stdin closes.

    `tasks` run in the same task group and are cancelled when the client
    goes away. While serving, stray writes to fd 1 land on stderr (the
    transport diverts them), so nothing but protocol messages reaches stdout.
    """
    if stdin is None and stdout is None and pipes_supported() and isinstance(server, PromptServer):
        # The pipes' framing writes every result through `protocol.prepared` (`LineCodec.encode`).
        server.prepared_results.encode_in_transport()
    async with stdio_transport(stdin, stdout) as (read_stream, write_stream), anyio.create_task_group() as group:
        for task in tasks:
            group.start_soon(task)
        await server.run(
            RepliesToBadLines(read_stream, write_stream), write_stream, server.create_initialization_options()
        )
        group.cancel_scope.cancel()
