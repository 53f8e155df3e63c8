"""The direct lane of the HTTP gate: plain stateless 2026-07-28 requests answered without the SDK's transport.

A stateless request for `prompts/get`, `prompts/list` or
`completion/complete` that the SDK would answer with `200` and a JSON body
is answered here with that same body (`protocol.direct`), from the body the
gate has already read and screened. The lane takes a request only when the
SDK's Streamable HTTP transport would reach its handler with it, by the same
checks in the same order:

1. `MCP-Protocol-Version` names a 2026-07-28-era revision (else the
   handshake transport serves it);
2. `Content-Type` is `application/json` (else 400) and `Accept` names both
   `application/json` and `text/event-stream`, or wildcards for them (else
   406);
3. the body is one request (it has an id) of one of those methods, with
   params and no members JSON-RPC does not define;
4. no routing header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) is
   sent twice, and the SDK's own envelope ladder (`classify_inbound_request`:
   the `_meta` pair, each header against the body, a supported version)
   passes; else -32020, -32602 or -32022;

and only when the server answers it directly (`DirectAnswers.answer` is not
None). Everything else goes on to the SDK, unchanged, and is answered there.

On the ASGI path the gate asks the lane right after screening
(`http_bodies.screen_post`), before `check_message`; on arrival it asks
`takes_headers` first and screens the body after (a header set that passed
is judged once: `AccessGate.answer_arrived`). A request the lane takes
passes `check_message` anyway (its envelope was screened, its version
header names the body's version by step 4, and `initialize` is not one of
its methods), so it would only repeat work. The lane writes
`X-Content-Type-Options: nosniff` itself.

The gate asks it from two places: its ASGI `__call__` (any ASGI server),
and, under uvicorn, `DirectHttpToolsProtocol` as soon as a request's body
has arrived (`AccessGate.answer_arrived`), without an ASGI cycle at all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, Protocol

from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request, find_duplicated_routing_header
from pydantic_core import to_json
from starlette.requests import Request
from starlette.types import Scope, Send

from ..protocol.direct import DIRECT_METHODS, DirectAnswers
from ..protocol.prepared import plain_result, prepared_json, written
from ..protocol.revisions import MODERN_REVISIONS
from .limits import NOSNIFF, GuardedHttpToolsProtocol
from .uvicorn_seam import TRACE_LOG_LEVEL, HttpToolsProtocol

__all__ = ["BATCHED_BYTES", "HOLD_BYTES", "ArrivalAnswers", "DirectHttpToolsProtocol", "DirectLane", "Reply"]

log = logging.getLogger(__name__)

_JSON: Final = "application/json"

_CONTENT_TYPE: Final = (b"content-type", b"application/json")
_ENVELOPE: Final = frozenset({"jsonrpc", "id", "method", "params"})
_REMEMBERED_ACCEPT: Final = 256  # longer `Accept` values are judged afresh each time, not kept


def _accepts_both(accept: str) -> bool:
    """Whether the SDK's transport takes a request whose (first) `Accept` header is `accept`: its own verdict."""
    if len(accept) > _REMEMBERED_ACCEPT:
        return _judge_accept(accept)
    return _remembered_accept(accept)


def _judge_accept(accept: str) -> bool:
    scope: Scope = {"type": "http", "headers": [(b"accept", accept.encode("latin-1"))]}
    return all(check_accept_headers(Request(scope)))


# A client sends the same `Accept` on every request: its verdict is kept, not parsed again per request.
_remembered_accept = lru_cache(maxsize=64)(_judge_accept)


class DirectLane:
    """Answers the plain stateless requests the gate hands it (module docstring); the rest it declines."""

    def __init__(self, answers: DirectAnswers) -> None:
        self.answers = answers

    @staticmethod
    def takes_headers(raw: Sequence[tuple[bytes, bytes]]) -> dict[str, str] | None:
        """The headers `raw` of a request as the lane reads them, if they are ones it takes (steps 1, 2 and the
        duplicates of 4 in the module docstring); None if they are not. What the lane reads of them depends on
        nothing else, so a caller may keep the verdict for the same headers."""
        pairs = [(name.decode("latin-1"), text.decode("latin-1")) for name, text in raw]
        headers = dict(reversed(pairs))  # the first of repeated headers, as the SDK reads them
        if headers.get("mcp-protocol-version") not in MODERN_REVISIONS:
            return None
        if not headers.get("content-type", "").lower().startswith(_JSON):
            return None
        if not _accepts_both(headers.get("accept", "")) or find_duplicated_routing_header(pairs) is not None:
            return None  # the SDK answers 406 unless both are accepted (it writes SSE once the handler notifies)
        return headers

    def _result(self, value: Any, headers: Mapping[str, str]) -> dict[str, Any] | None:
        if not isinstance(value, dict) or "id" not in value or value.get("method") not in DIRECT_METHODS:
            return None
        if not _ENVELOPE.issuperset(value):
            return None  # members JSON-RPC does not define: the SDK's path reads the message its way
        params = value.get("params")
        if not isinstance(params, dict):
            return None
        route = classify_inbound_request(value, headers=headers)
        if isinstance(route, InboundLadderRejection):
            return None
        return self.answers.answer(value["method"], params, route.protocol_version)

    def reply(self, value: Any, scope: Scope) -> tuple[Reply, dict[str, Any]] | None:
        """The JSON-RPC reply to the screened request `value` (of the HTTP request `scope`), in pieces, and
        the result in it, if the lane takes it; None if it does not. Once the reply is written, call
        `written(result)`."""
        headers = self.takes_headers(scope["headers"])
        return None if headers is None else self.reply_with(value, headers)

    def reply_with(self, value: Any, headers: Mapping[str, str]) -> tuple[Reply, dict[str, Any]] | None:
        """`reply`, for a request whose headers `takes_headers` took (and gave as `headers`)."""
        result = self._result(value, headers)
        if result is None:
            return None
        body = prepared_json(result)
        if body is None:
            body = to_json(plain_result(result))
        # In pieces: the result's JSON is not copied to be sent (a 500-prompt page is about 200 KB).
        return (b'{"jsonrpc":"2.0","id":' + to_json(value["id"]) + b',"result":', body, b"}"), result

    async def serve(self, value: Any, scope: Scope, send: Send) -> bool:
        """Answer the screened request `value` (of the HTTP request `scope`) if the lane takes it.

        False: it did not, and nothing was sent.
        """
        answer = self.reply(value, scope)
        if answer is None:
            return False
        pieces, result = answer
        reply = b"".join(pieces)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", str(len(reply)).encode()), _CONTENT_TYPE, NOSNIFF],
            }
        )
        await send({"type": "http.response.body", "body": reply})
        written(result)
        return True


Reply = tuple[bytes, ...]
"""A reply's bytes, in the pieces that make it."""


class ArrivalAnswers(Protocol):
    """What `DirectHttpToolsProtocol` asks of the access gate (`http.AccessGate`) about a request it read whole."""

    def answer_arrived(
        self, headers: list[tuple[bytes, bytes]], body: bytes, server: tuple[str, int | None] | None
    ) -> tuple[Reply, dict[str, Any]] | None: ...

    def late_body(self) -> bytes: ...


HOLD_BYTES: Final = 64 * 1024
"""The largest body a request may declare and still be read by the protocol for the lane."""

BATCHED_BYTES: Final = 16 * 1024
"""Answers up to this size are written together at the end of the loop's turn; larger ones at once."""

_JSON_HEADERS: Final = b"content-type: application/json\r\nx-content-type-options: nosniff\r\ncontent-length: "


class DirectHttpToolsProtocol(GuardedHttpToolsProtocol):
    """The guarded protocol, answering a request the direct lane takes as soon as its body is read.

    uvicorn starts an ASGI cycle (a scope, a task, `receive` and `send`) for
    every request as soon as its headers are in: on this machine that costs
    as much as the whole answer of a `prompts/get`. A request that may be one
    the lane takes (`POST /mcp`, a `Content-Length` of at most `HOLD_BYTES`,
    HTTP/1.1 kept alive, no `Expect`, nothing before it still being answered)
    is held instead, its body read here; once it is whole, the gate answers it
    (`AccessGate.answer_arrived`: the gate's checks, then the lane), in order
    with any requests pipelined behind it. A request the gate does not answer
    there is handed to uvicorn's cycle as it came, and served on the ASGI path
    like every other request: refusals, errors and everything the lane
    declines keep their answers.

    An answer of up to `BATCHED_BYTES` is written at the end of the loop's
    turn, with the others of that turn: on the machine measured a write
    between two reads cost about three times the system time of one among
    others (benchmarks/README.md). A larger one, or one that closes the
    connection, is written at once: many large ones at the end of a turn
    outgrow what the sockets take.

    A held body has `body_timeout` to arrive, as on the ASGI path (then 408,
    in the gate's words). Nothing is held where uvicorn must see every
    request: with its access log or trace log on, a concurrency limit or a
    root path.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        answers: ArrivalAnswers | None = getattr(self.config, "mcp_gate", None)
        sees_all = self.access_log or self.limit_concurrency is not None or self.logger.isEnabledFor(TRACE_LOG_LEVEL)
        self._answers = None if sees_all or self.root_path else answers
        self._held: bytearray | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._draining = False
        self._later: list[tuple[Reply, bool]] | None = None  # answers written at the end of this turn of the loop

    def _may_hold(self) -> bool:
        """Whether the request whose headers just arrived may be one the lane takes (class docstring)."""
        if self._answers is None or self._draining or self.url != b"/mcp" or self.expect_100_continue:
            return False
        if self.pipeline or (self.cycle is not None and not self.cycle.response_complete):
            return False
        parser = self.parser
        if parser.get_method() != b"POST" or parser.get_http_version() != "1.1" or parser.should_upgrade():
            return False
        if not parser.should_keep_alive():
            return False
        length: bytes | None = None
        for name, value in self.headers:
            if name == b"content-length":
                if length is not None:
                    return False
                length = value
            elif name == b"transfer-encoding":
                return False
        return length is not None and length.isdigit() and int(length) <= HOLD_BYTES

    def on_headers_complete(self) -> None:
        if not self._may_hold():
            super().on_headers_complete()
            return
        self._headers_arrived()
        self._held = bytearray()

    def on_body(self, body: bytes) -> None:
        if self._held is None:
            super().on_body(body)
        else:
            self._held += body  # at most HOLD_BYTES: the parser reads no more than Content-Length

    def on_message_complete(self) -> None:
        held = self._held
        if held is None:
            super().on_message_complete()
            return
        self._held = None
        self._stop_body_timer()
        answers = self._answers
        assert answers is not None
        try:
            answer = answers.answer_arrived(self.headers, bytes(held), self.server)
        except Exception:  # a bug of ours must not cost the request: the ASGI path serves it
            log.exception("answering a request as it arrived failed; the request is served the usual way")
            answer = None
        if answer is None:
            self._hand_over(held)
            return
        reply, result = answer
        self._write(b"HTTP/1.1 200 OK\r\n", reply, closing=self._draining)
        try:
            written(result)
        except Exception:
            log.exception("after an answer was written")
        self.on_response_complete()

    def _hand_over(self, held: bytearray) -> None:
        """Give the held request to uvicorn's ASGI cycle, as if it had never been held."""
        HttpToolsProtocol.on_headers_complete(self)  # the guarded part (`_headers_arrived`) has run already
        if self._draining:
            self.cycle.keep_alive = False
        if held:
            HttpToolsProtocol.on_body(self, bytes(held))
        HttpToolsProtocol.on_message_complete(self)

    def _write(self, status_line: bytes, body: Reply, *, closing: bool) -> None:
        length = sum(map(len, body))
        head = [status_line]
        for name, value in self.server_state.default_headers:  # uvicorn's `date` and `server`, as on every answer
            head += (name, b": ", value, b"\r\n")
        head += (_JSON_HEADERS, str(length).encode(), b"\r\n")
        if closing:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        if self._later is None and (closing or length > BATCHED_BYTES):
            self._send((b"".join(head), *body), closing)  # the body's pieces as they are: no copy of a large one
            return
        answer = ((b"".join(head + list(body)),), closing)
        if self._later is not None:  # an answer of this connection waits for the end of the turn: this one follows it
            self._later.append(answer)
        else:
            self._later = [answer]
            self.loop.call_soon(self._send_later)

    def _send_later(self) -> None:
        later, self._later = self._later or [], None
        for data, closing in later:
            self._send(data, closing)

    def _send(self, pieces: Reply, closing: bool) -> None:
        if self.transport.is_closing():
            return
        for data in pieces:  # uvloop sends what is buffered together, with one `writev`
            self.transport.write(data)
        if closing:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._held is not None and self._body_timer is None:  # the body goes on in later packets
            self._body_timer = self.loop.call_later(self._limits.body_timeout, self._on_body_timeout)

    def _on_body_timeout(self) -> None:
        self._body_timer = None
        if self._held is None or self.transport.is_closing():
            return
        self._held = None
        assert self._answers is not None
        self._write(b"HTTP/1.1 408 Request Timeout\r\n", (self._answers.late_body(),), closing=True)

    def _stop_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_body_timer()
        self._held = None
        super().connection_lost(exc)

    def shutdown(self) -> None:
        self._draining = True  # nothing more is held; a held request is answered, then the connection closes
        if self._held is None:
            super().shutdown()
