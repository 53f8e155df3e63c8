"""Closing a connection: the SDK's session stops reading, and the transport that opened the streams closes them.

A transport still reading from the server (an HTTP event stream) may forward one more message after the
session has stopped. Had the session's exit closed the stream, that message met a closed stream, and the SDK
logged "Error parsing SSE message" with a `BrokenResourceError` (seen as stray lines when Jupyter stopped).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from mcp_notebook.client.connection import _opened, _watched

pytestmark = pytest.mark.anyio


class MemoryServer:
    """The far end of a transport: answers the handshake, then can push messages as a server would."""

    def __init__(self) -> None:
        self.to_client, self.client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self.client_writes, self.from_client = anyio.create_memory_object_stream[SessionMessage](0)
        self.transport_closed = False

    @contextlib.asynccontextmanager
    async def transport(self) -> AsyncIterator[tuple[Any, Any]]:
        """What an SDK transport does: it opens the streams, and closes them on its own exit."""
        async with self.to_client, self.client_reads, self.client_writes, self.from_client:
            yield self.client_reads, self.client_writes
        self.transport_closed = True

    async def answer_the_handshake(self) -> None:
        request = (await self.from_client.receive()).message
        assert isinstance(request, JSONRPCRequest) and request.method == "initialize"
        result = {
            "protocolVersion": request.params["protocolVersion"] if request.params else "2025-11-25",
            "capabilities": {"prompts": {"listChanged": True}},
            "serverInfo": {"name": "memory", "version": "1"},
        }
        await self.to_client.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)))
        initialized = (await self.from_client.receive()).message
        assert isinstance(initialized, JSONRPCNotification) and initialized.method == "notifications/initialized"


def a_late_notification() -> SessionMessage:
    return SessionMessage(JSONRPCNotification(jsonrpc="2.0", method="notifications/prompts/list_changed"))


async def test_a_message_the_transport_forwards_after_the_session_ended_meets_an_open_stream() -> None:
    server = MemoryServer()
    async with _watched(server.transport(), on_end=lambda: None) as streams:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.answer_the_handshake)
            async with Client(_opened(streams), mode="legacy") as client:
                assert client.server_info is not None and client.server_info.name == "memory"
        # The session has left its read stream. The transport may still have a message from the server: it
        # waits for a reader, as on any open stream, instead of failing on a closed one.
        with pytest.raises(anyio.WouldBlock):
            server.to_client.send_nowait(a_late_notification())
        assert not server.transport_closed
    # Then the transport's exit closes what it opened.
    assert server.transport_closed
    with pytest.raises(anyio.ClosedResourceError):
        server.to_client.send_nowait(a_late_notification())


async def test_the_end_of_the_servers_messages_is_still_reported() -> None:
    server = MemoryServer()
    ended = anyio.Event()
    async with _watched(server.transport(), on_end=ended.set) as streams, anyio.create_task_group() as tasks:
        tasks.start_soon(server.answer_the_handshake)
        async with Client(_opened(streams), mode="legacy"):
            await server.to_client.aclose()  # the server closed its output
            with anyio.fail_after(10):
                await ended.wait()
