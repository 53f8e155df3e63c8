"""Stateless 2026-07-28 requests over HTTP, answered by the server's one implementation (`protocol.answers`).

A 2026-07-28 request stands alone: no session, no handshake, nothing sent
but its reply. The access gate hands every such POST it has read and
screened to `StatelessRequests.serve`, which takes it through the checks the
SDK's Streamable HTTP transport makes before its dispatch, in its order:

1. `Accept` names `application/json` (and `text/event-stream`), or wildcards
   for them; else 406;
2. the body is one request (it has an id) with params or none, and no
   members JSON-RPC does not define;
3. no routing header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) is
   sent twice, and the envelope ladder (`classify_inbound_request`: the
   `_meta` pair, each header against the body, a supported version) passes;
   else -32020, -32602 or -32022.

A request that fails one of them, a `subscriptions/listen` stream (the SDK's
transport streams it, to the handler that calls `Answers.listen`), and
anything else `Answers.answer` does not take (notifications, methods not
served), goes on to the SDK's transport, which says so (or serves it) in its
words. The rest
is answered here: `Answers.answer` gives its result JSON, or raises the
error the client gets, written with the HTTP status the transport maps it
to, as a JSON body.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from mcp.server.streamable_http import check_accept_headers
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from pydantic_core import to_json
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Scope, Send

from ..protocol.answers import Answers
from ..protocol.revisions import MODERN_REVISIONS
from .limits import NOSNIFF

__all__ = ["KEPT_HEADER_BYTES", "KEPT_HEADER_SETS", "StatelessRequests"]

_CONTENT_TYPE: Final = (b"content-type", b"application/json")
_ENVELOPE: Final = frozenset({"jsonrpc", "id", "method", "params"})
_REMEMBERED_ACCEPT: Final = 256  # longer `Accept` values are judged afresh each time, not kept
KEPT_HEADER_SETS: Final = 256
"""How many header sets' verdicts are kept (then the oldest goes), each of at most `KEPT_HEADER_BYTES`."""
KEPT_HEADER_BYTES: Final = 4096
_Raw = tuple[tuple[bytes, bytes], ...]


def _judge_accept(accept: str) -> bool:
    scope: Scope = {"type": "http", "headers": [(b"accept", accept.encode("latin-1"))]}
    return all(check_accept_headers(Request(scope)))


# A client sends the same `Accept` on every request: the SDK's verdict on it is kept, not made again per request.
_remembered_accept = lru_cache(maxsize=64)(_judge_accept)


def _accepts_both(accept: str) -> bool:
    return _judge_accept(accept) if len(accept) > _REMEMBERED_ACCEPT else _remembered_accept(accept)


def _judge_headers(headers: Headers) -> dict[str, str] | None:
    """The headers as the envelope ladder reads them (the first of each name), if they are a stateless
    request's that the SDK's transport would dispatch: a 2026-07-28 version, JSON accepted, no routing
    header twice; else None."""
    if headers.get("mcp-protocol-version") not in MODERN_REVISIONS:
        return None
    pairs = headers.items()
    if not _accepts_both(headers.get("accept", "")) or find_duplicated_routing_header(pairs) is not None:
        return None
    return dict(reversed(pairs))


class StatelessRequests:
    """The HTTP side of `Answers.answer`: a screened stateless request in, its reply out (module docstring)."""

    def __init__(self, answers: Answers) -> None:
        self.answers = answers
        # A client sends the same headers with every request but for the body's length, which no check here
        # reads: the verdict on a header set (None: not one this serves; else the headers as the ladder reads
        # them) is kept for small sets, as many as `KEPT_HEADER_SETS`.
        self._verdicts: dict[_Raw, dict[str, str] | None] = {}

    def takes(self, value: Any, headers: Headers) -> str | None:
        """The revision of the screened request `value` when it is a stateless request this serves; else None."""
        if not isinstance(value, dict) or "id" not in value or value.get("method") not in self.answers.methods:
            return None
        if not _ENVELOPE.issuperset(value) or not isinstance(value.get("params", {}), dict):
            return None
        routing = self._headers_verdict(headers)
        if routing is None:
            return None
        route = classify_inbound_request(value, headers=routing)
        return None if isinstance(route, InboundLadderRejection) else route.protocol_version

    def _headers_verdict(self, headers: Headers) -> dict[str, str] | None:
        raw: _Raw = tuple([pair for pair in headers.raw if pair[0] != b"content-length"])
        try:
            return self._verdicts[raw]
        except KeyError:
            pass
        verdict = _judge_headers(headers)
        if sum(len(name) + len(text) for name, text in raw) <= KEPT_HEADER_BYTES:
            if len(self._verdicts) >= KEPT_HEADER_SETS:
                del self._verdicts[next(iter(self._verdicts))]
            self._verdicts[raw] = verdict
        return verdict

    async def serve(self, value: Any, revision: str, send: Send) -> None:
        """Answer the request `value` that `takes` took at `revision` (this writes `nosniff` itself)."""
        params = value.get("params")
        capabilities = params.get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities") if params else None
        status = 200
        try:
            result = await self.answers.answer(value["method"], params, revision, capabilities)
            reply = b'{"jsonrpc":"2.0","id":' + to_json(value["id"]) + b',"result":' + result + b"}"
        except MCPError as error:
            status = ERROR_CODE_HTTP_STATUS.get(error.error.code, 200)
            data = error.error.model_dump(mode="json", by_alias=True, exclude_none=True)
            reply = to_json({"jsonrpc": "2.0", "id": value["id"], "error": data})
        headers = [(b"content-length", str(len(reply)).encode()), _CONTENT_TYPE, NOSNIFF]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": reply})
