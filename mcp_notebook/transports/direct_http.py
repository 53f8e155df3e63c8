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

The gate asks the lane right after screening (`http_bodies.screen_post`),
before `check_message`: a request the lane takes passes those checks anyway
(its envelope was screened, its version header names the body's version by
step 4, and `initialize` is not one of its methods), so they would only
repeat work. The lane writes `X-Content-Type-Options: nosniff` itself.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request, find_duplicated_routing_header
from pydantic_core import to_json
from starlette.requests import Request
from starlette.types import Scope, Send

from ..protocol.direct import DIRECT_METHODS, DirectAnswers
from ..protocol.prepared import plain_result, prepared_json, written
from ..protocol.revisions import MODERN_REVISIONS
from .limits import NOSNIFF

__all__ = ["DirectLane"]

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

    def _result(self, value: Any, scope: Scope) -> dict[str, Any] | None:
        if not isinstance(value, dict) or "id" not in value or value.get("method") not in DIRECT_METHODS:
            return None
        if not _ENVELOPE.issuperset(value):
            return None  # members JSON-RPC does not define: the SDK's path reads the message its way
        params = value.get("params")
        if not isinstance(params, dict):
            return None
        pairs = [(name.decode("latin-1"), text.decode("latin-1")) for name, text in scope["headers"]]
        headers = dict(reversed(pairs))  # the first of repeated headers, as the SDK reads them
        if headers.get("mcp-protocol-version") not in MODERN_REVISIONS:
            return None
        if not headers.get("content-type", "").lower().startswith(_JSON):
            return None
        if not _accepts_both(headers.get("accept", "")) or find_duplicated_routing_header(pairs) is not None:
            return None  # the SDK answers 406 unless both are accepted (it writes SSE once the handler notifies)
        route = classify_inbound_request(value, headers=headers)
        if isinstance(route, InboundLadderRejection):
            return None
        return self.answers.answer(value["method"], params, route.protocol_version)

    async def serve(self, value: Any, scope: Scope, send: Send) -> bool:
        """Answer the screened request `value` (of the HTTP request `scope`) if the lane takes it.

        False: it did not, and nothing was sent.
        """
        result = self._result(value, scope)
        if result is None:
            return False
        body = prepared_json(result)
        if body is None:
            body = to_json(plain_result(result))
        reply = b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (to_json(value["id"]), body)
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
