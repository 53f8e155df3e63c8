"""Raw JSON-RPC against an in-process server, serialised exactly as the stdio transport writes it.

The SDK client always negotiates the newest handshake revision; to pin an
older one, and to see what is really on the wire (not what a pydantic model
shows after parsing), tests speak JSON-RPC dicts through `RawWire`.
"""

from __future__ import annotations

import itertools
import json
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

DEADLINE = 5.0
MODERN = "2026-07-28"
HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ALL_REVISIONS = (*HANDSHAKE_REVISIONS, MODERN)


def modern_meta(revision: str = MODERN, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
    }


class RawWire:
    """One connection to `server`; `revision` is a handshake revision to initialize with, or 2026-07-28.

    `capabilities` are the client capabilities declared (in `initialize`, or in every modern `_meta`).
    """

    def __init__(self, server: Server[Any], revision: str, capabilities: dict[str, Any] | None = None) -> None:
        self.server = server
        self.revision = revision
        self.capabilities = capabilities or {}
        self.notifications: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._tasks: TaskGroup | None = None

    async def __aenter__(self) -> RawWire:
        self._to_server, server_read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        server_write, self._from_server = anyio.create_memory_object_stream[SessionMessage](16)
        self._tasks = await anyio.create_task_group().__aenter__()
        self._tasks.start_soon(self.server.run, server_read, server_write, self.server.create_initialization_options())
        if self.revision != MODERN:
            self.initialize_result = await self.initialize(self.revision)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._to_server.close()
        assert self._tasks is not None
        self._tasks.cancel_scope.cancel()
        await self._tasks.__aexit__(exc_type, exc, tb)
        self._from_server.close()

    async def send(self, message: dict[str, Any]) -> None:
        await self._to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))

    async def receive(self) -> dict[str, Any]:
        """The next message from the server, within `DEADLINE` seconds."""
        with anyio.fail_after(DEADLINE):
            item = await self._from_server.receive()
        wire: dict[str, Any] = json.loads(item.message.model_dump_json(by_alias=True, exclude_unset=True))
        return wire

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its whole response (notifications seen meanwhile are kept)."""
        request_id = next(self._ids)
        if self.revision == MODERN:
            params = {**(params or {}), "_meta": modern_meta(capabilities=self.capabilities)}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            reply = await self.receive()
            if reply.get("id") == request_id:
                return reply
            self.notifications.append(reply)

    async def initialize(self, revision: str) -> dict[str, Any]:
        params = {
            "protocolVersion": revision,
            "capabilities": self.capabilities,
            "clientInfo": {"name": "raw-test", "version": "0"},
        }
        reply = await self.request("initialize", params)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def next_notification(self) -> dict[str, Any]:
        if self.notifications:
            return self.notifications.pop(0)
        return await self.receive()
