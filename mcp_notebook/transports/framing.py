"""One stdio connection's lines as JSON-RPC messages: what a line decodes to, and how a reply is written.

Each line is screened (`protocol.screening`) before the SDK sees it, so a
malformed one is answered with its proper error instead of being dropped or
taken for a notification. The connection's revision is followed from the
traffic (the `initialize` reply, or the first enveloped 2026-07-28 request)
because two rules depend on it:

* an error whose request id could not be read says `"id": null` up to
  2025-06-18 and leaves `id` out from 2025-11-25 on;
* a JSON-RPC batch (a line holding an array) is served on a 2025-03-26
  connection, the one revision whose receivers must accept batches: its
  elements go to the server one by one, and their answers are held back and
  written together as one array line once the last one is in (nothing at
  all when the batch held only notifications). Elsewhere a batch is -32600.
"""

from __future__ import annotations

import itertools
import json
import logging
from dataclasses import dataclass, field
from typing import Any, Final

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..protocol.prepared import encode_message, plain_message
from ..protocol.screening import (
    BATCH_REVISION,
    Refusal,
    ScreenedBatch,
    UnreadableMessage,
    error_reply,
    is_response,
    parse_json,
    readable_id,
    screen,
    unknown_id_omitted,
)

__all__ = ["LineCodec"]

log = logging.getLogger(__name__)

VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
_REFUSAL_KEY: Final = "\x00batch-refusal-"  # the id a refused batch element travels under to the writer

Item = SessionMessage | UnreadableMessage


@dataclass
class _Batch:
    """One batch's answers, in order; `waiting` holds the ids not answered yet."""

    keys: list[types.RequestId] = field(default_factory=list)
    waiting: set[types.RequestId] = field(default_factory=set)
    answers: dict[types.RequestId, dict[str, Any]] = field(default_factory=dict)


class LineCodec:
    """Decodes the lines one connection reads and encodes the messages it writes."""

    def __init__(self) -> None:
        self.revision: str | None = None
        """The connection's protocol revision, once known."""
        self._initialize_ids: set[types.RequestId] = set()
        self._batches: dict[types.RequestId, _Batch] = {}  # by each id a batch waits for
        self._refusal_ids = itertools.count()

    def read(self, line: bytes) -> list[Item]:
        """What `line` holds: its message or the refusal it gets; none for a blank line, several for a batch."""
        if not line.strip():
            return []
        try:
            value = parse_json(line, "line")
        except UnreadableMessage as problem:
            return [problem]
        verdict = screen(value, batches=self.revision == BATCH_REVISION)
        if isinstance(verdict, ScreenedBatch):
            return self._read_batch(verdict)
        if verdict is not None:
            return [UnreadableMessage(verdict)]
        item = self._message(value)
        return [] if item is None else [item]

    def _message(self, value: Any) -> Item | None:
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

    def _read_batch(self, batch: ScreenedBatch) -> list[Item]:
        pending = _Batch()
        items: list[Item] = []
        for element in batch.items:
            screened = screen(element)  # no batches within a batch
            item = UnreadableMessage(screened) if isinstance(screened, Refusal) else self._message(element)
            if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCRequest):
                request_id = item.message.id
                if item.message.method == "initialize":
                    item = UnreadableMessage(
                        Refusal(types.INVALID_REQUEST, "Invalid Request: initialize cannot be batched", request_id)
                    )
                elif request_id in pending.waiting or request_id in self._batches:
                    item = UnreadableMessage(
                        Refusal(types.INVALID_REQUEST, "Invalid Request: a request id used twice in one batch")
                    )
                else:
                    pending.keys.append(request_id)
                    pending.waiting.add(request_id)
            if isinstance(item, UnreadableMessage):
                # The writer files the refusal in this batch by a private id, and writes the real one.
                key = f"{_REFUSAL_KEY}{next(self._refusal_ids)}"
                pending.keys.append(key)
                pending.waiting.add(key)
                refusal = item.refusal
                pending.answers[key] = error_reply(refusal, BATCH_REVISION)
                item = UnreadableMessage(Refusal(refusal.code, refusal.message, key))
            if item is not None:
                items.append(item)
        for waited in pending.waiting:
            self._batches[waited] = pending
        return items

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

    def encode(self, message: types.JSONRPCMessage) -> bytes | None:
        """`message` as one line to write (with its newline); None while it waits for the rest of its batch."""
        if isinstance(message, types.JSONRPCResponse) and message.id in self._initialize_ids:
            self._initialize_ids.discard(message.id)
            version: Any = message.result.get("protocolVersion")
            if isinstance(version, str):
                self.revision = version
        answering = isinstance(message, types.JSONRPCResponse) and message.id not in self._batches
        if answering and (line := encode_message(message)) is not None:
            return line + b"\n"  # a page serialized once (`protocol.prepared`): written as it is
        message = plain_message(message)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id in self._batches:
            return self._file_in_batch(message)
        exclude = None
        if isinstance(message, types.JSONRPCError) and message.id is None and unknown_id_omitted(self.revision):
            exclude = {"id"}
        return message.model_dump_json(by_alias=True, exclude_unset=True, exclude=exclude).encode() + b"\n"

    def _file_in_batch(self, message: types.JSONRPCResponse | types.JSONRPCError) -> bytes | None:
        assert message.id is not None
        pending = self._batches.pop(message.id)
        pending.waiting.discard(message.id)
        if not (isinstance(message.id, str) and message.id.startswith(_REFUSAL_KEY)):
            pending.answers[message.id] = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if pending.waiting:
            return None
        return json.dumps([pending.answers[key] for key in pending.keys], separators=(",", ":")).encode() + b"\n"
