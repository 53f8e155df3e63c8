"""What the HTTP gate does with a POST body before the SDK sees it: screening, header checks, batches.

* Every body is screened (`protocol.screening`): a malformed one gets 400
  and its proper JSON-RPC error, with the request id whenever it could be
  read; the SDK would take a request with a null or fractional id for a
  notification (202, never answered) or answer with a validation dump.
* A body enveloped for 2026-07-28 (`_meta` names a protocol version) whose
  `MCP-Protocol-Version` header is missing or names another version gets
  400 with -32020 (header mismatch); the SDK would route it to the
  handshake transport and answer "Missing session ID".
* `initialize` sent with the 2026-07-28 header gets 404 with -32601, naming
  every revision this server speaks and how to reach each.
* A JSON-RPC batch (an array) is served at 2025-03-26, the one revision
  whose receivers must accept batches (a client that sends no
  `MCP-Protocol-Version` header is taken to speak it, as the transport
  spec allows): each element goes through the SDK app on its own, and the
  answers come back as one JSON array (202 when only notifications were
  sent). Other revisions get -32600.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import anyio
import mcp_types as types
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Scope, Send

from ..protocol.revisions import HANDSHAKE_REVISIONS, KNOWN_REVISIONS, MODERN_REVISIONS, is_modern
from ..protocol.screening import (
    BATCH_REVISION,
    Refusal,
    ScreenedBatch,
    UnreadableMessage,
    error_reply,
    excerpt,
    parse_json,
    readable_id,
    screen,
)

__all__ = [
    "HEADER_MISMATCH",
    "VERSION_HEADER",
    "AcceptedBody",
    "RefusedBody",
    "check_message",
    "screen_post",
    "serve_batch",
]

HEADER_MISMATCH: Final = -32020
VERSION_HEADER: Final = "mcp-protocol-version"
VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"


class RefusedBody:
    """The answer to a POST body refused before the SDK: an HTTP status and a JSON-RPC error body."""

    def __init__(self, status: int, reply: dict[str, Any]) -> None:
        self.status = status
        self.body = json.dumps(reply).encode()


class AcceptedBody:
    """A POST body that passed the screening: one JSON-RPC message, decoded (`value`), to be served."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _known(header: str | None) -> str | None:
    return header if header in KNOWN_REVISIONS else None


def screen_post(body: bytes, header: str | None) -> RefusedBody | ScreenedBatch | AcceptedBody:
    """The refusal for a POST body that is no JSON-RPC message (or batch), the batch it is, or its message;
    `header` is the request's (first) `MCP-Protocol-Version`.

    A message accepted here still goes through `check_message` before the SDK sees it.
    """
    try:
        value = parse_json(body, "body")
    except UnreadableMessage as problem:
        return RefusedBody(400, error_reply(problem.refusal, _known(header)))
    verdict = screen(value, batches=header is None or header == BATCH_REVISION)
    if isinstance(verdict, ScreenedBatch):
        return verdict
    if verdict is not None:
        return _refused(verdict, _known(header))
    return AcceptedBody(value)


def check_message(value: Any, header: str | None) -> RefusedBody | None:
    """The refusal for a screened message that the SDK would misread (module docstring), or None; `header` is
    the request's (first) `MCP-Protocol-Version`."""
    refusal = _refusal_for_message(value, header)
    return None if refusal is None else _refused(refusal, _known(header))


def _refused(refusal: Refusal, revision: str | None) -> RefusedBody:
    status = 404 if refusal.code == types.METHOD_NOT_FOUND else 400
    return RefusedBody(status, error_reply(refusal, revision))


def _refusal_for_message(value: Any, header: str | None) -> Refusal | None:
    request_id = readable_id(value)
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return Refusal(types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", request_id)
    if not isinstance(message, types.JSONRPCRequest | types.JSONRPCNotification):
        return None
    meta = (message.params or {}).get("_meta")
    enveloped = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    if isinstance(enveloped, str) and enveloped != header:
        sent = f"names {excerpt(header)}" if header is not None else "is missing"
        return Refusal(
            HEADER_MISMATCH,
            f"Header mismatch: the request's _meta names protocol version {excerpt(enveloped)}, "
            f"but the MCP-Protocol-Version header {sent}",
            request_id,
        )
    if message.method == "initialize" and header is not None and is_modern(header):
        return Refusal(
            types.METHOD_NOT_FOUND,
            f"Method not found: initialize does not exist at {excerpt(header)} (send server/discover). "
            f"This server speaks {', '.join(MODERN_REVISIONS)} without a handshake and "
            f"{', '.join(HANDSHAKE_REVISIONS)} through initialize sent without the {excerpt(header)} header",
            request_id,
        )
    return None


# --- batches (2025-03-26) -------------------------------------------------------------------------------------------


async def _forward_one(app: ASGIApp, scope: Scope, element: bytes) -> tuple[str, bytes]:
    """Run one batch element through `app` as its own POST; returns its content type and body."""
    delivered = False
    done = anyio.Event()
    content_type, chunks = "", bytearray()

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": element, "more_body": False}
        await done.wait()  # the app may watch for a disconnect while it streams: none comes until it is done
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal content_type
        if message["type"] == "http.response.start":
            content_type = Headers(raw=message.get("headers", [])).get("content-type", "")
        elif message["type"] == "http.response.body":
            chunks.extend(message.get("body", b""))
            if not message.get("more_body", False):
                done.set()

    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(element)).encode()))
    await app({**scope, "headers": headers}, receive, send)
    done.set()
    return content_type, bytes(chunks)


def _replies_in(content_type: str, body: bytes) -> list[Any]:
    if content_type.startswith("text/event-stream"):
        lines = body.decode("utf-8", errors="replace").splitlines()
        return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()]
    if body.strip():
        return [json.loads(body)]
    return []


def _answer_for(element: Any, replies: Sequence[Any]) -> dict[str, Any] | None:
    request_id = readable_id(element)
    if request_id is None:
        return None  # a notification: no answer
    for reply in replies:
        if isinstance(reply, dict) and reply.get("id") == request_id and ("result" in reply or "error" in reply):
            return reply
    for reply in replies:  # an HTTP-level refusal (no session, say) answers with id null: it is this element's
        if isinstance(reply, dict) and "error" in reply:
            return {**reply, "id": request_id}
    return error_reply(Refusal(types.INTERNAL_ERROR, "Internal error: the request got no answer", request_id), None)


async def serve_batch(app: ASGIApp, scope: Scope, batch: ScreenedBatch, send: Send) -> None:
    """Answer a 2025-03-26 batch: each element served on its own, the answers in one JSON array."""
    answers: list[dict[str, Any]] = []
    seen: set[object] = set()
    for element in batch.items:
        screened = screen(element)  # no batches within a batch
        refusal = screened if isinstance(screened, Refusal) else _refusal_for_message(element, None)
        request_id = readable_id(element)
        if refusal is None and isinstance(element, dict) and element.get("method") == "initialize":
            refusal = Refusal(types.INVALID_REQUEST, "Invalid Request: initialize cannot be batched", request_id)
        if refusal is None and request_id is not None and request_id in seen:
            refusal = Refusal(types.INVALID_REQUEST, "Invalid Request: a request id used twice in one batch", None)
        if refusal is not None:
            answers.append(error_reply(refusal, BATCH_REVISION))
            continue
        seen.add(request_id)
        content_type, body = await _forward_one(app, scope, json.dumps(element).encode())
        try:
            replies = _replies_in(content_type, body)
        except ValueError:
            replies = []
        answer = _answer_for(element, replies)
        if answer is not None:
            answers.append(answer)
    payload = json.dumps(answers).encode() if answers else b""
    await send(
        {
            "type": "http.response.start",
            "status": 200 if answers else 202,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})
