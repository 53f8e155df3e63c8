"""One stdio connection's lines as JSON-RPC messages: what a line decodes to, and how a reply is written.

Each line is screened (`protocol.screening`) before the SDK sees it, so a
malformed one is answered with its proper error instead of being dropped or
taken for a notification. The connection's revision is followed from the
traffic (the `initialize` reply, or the first enveloped 2026-07-28 request)
because the id rule of an error depends on it: an error whose request id
could not be read says `"id": null` up to 2025-06-18 and leaves `id` out
from 2025-11-25 on.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..protocol.screening import (
    Refusal,
    UnreadableMessage,
    is_response,
    parse_json,
    readable_id,
    screen,
    unknown_id_omitted,
)

__all__ = ["LineRules"]

log = logging.getLogger(__name__)

VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"


class LineRules:
    """Decodes the lines one connection reads and encodes the messages it writes."""

    def __init__(self) -> None:
        self.revision: str | None = None
        """The connection's protocol revision, once known."""
        self._initialize_ids: set[types.RequestId] = set()

    def read(self, line: bytes) -> SessionMessage | UnreadableMessage | None:
        """The message on `line`, the refusal it gets, or None (a blank line, or a response nobody can match)."""
        if not line.strip():
            return None
        try:
            value = parse_json(line, "line")
        except UnreadableMessage as problem:
            return problem
        verdict = screen(value)
        if verdict is not None:
            assert isinstance(verdict, Refusal)  # batches are not allowed here
            return UnreadableMessage(verdict)
        try:
            message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        except ValidationError:
            if is_response(value):
                log.info("dropped a response the server cannot match to a request")
                return None
            refusal = Refusal(types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", readable_id(value))
            return UnreadableMessage(refusal)
        self._follow_request(message)
        return SessionMessage(message)

    def _follow_request(self, message: types.JSONRPCMessage) -> None:
        if self.revision is not None or not isinstance(message, types.JSONRPCRequest):
            return
        if message.method == "initialize":
            self._initialize_ids.add(message.id)
            return
        meta = (message.params or {}).get("_meta")
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
        if isinstance(version, str) and len(version) < 32:
            self.revision = version

    def encode(self, message: types.JSONRPCMessage) -> bytes:
        """`message` as one line to write (with its newline)."""
        if isinstance(message, types.JSONRPCResponse) and message.id in self._initialize_ids:
            self._initialize_ids.discard(message.id)
            version: Any = message.result.get("protocolVersion")
            if isinstance(version, str):
                self.revision = version
        exclude = None
        if isinstance(message, types.JSONRPCError) and message.id is None and unknown_id_omitted(self.revision):
            exclude = {"id"}
        return message.model_dump_json(by_alias=True, exclude_unset=True, exclude=exclude).encode() + b"\n"
