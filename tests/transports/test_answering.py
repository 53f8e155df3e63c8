"""What the HTTP side of `Answers` keeps per header set: a verdict for small sets only, and only so many."""

from __future__ import annotations

from starlette.datastructures import Headers

from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports import answering
from mcp_notebook.transports.answering import KEPT_HEADER_BYTES, KEPT_HEADER_SETS, StatelessRequests

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": META}}


def _headers(*extra: tuple[bytes, bytes]) -> Headers:
    raw = [
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"prompts/list"),
        *extra,
    ]
    return Headers(raw=raw)


def _requests() -> StatelessRequests:
    return StatelessRequests(create_server(PromptRegistry()).answers)


def test_a_stateless_request_is_taken_and_its_header_set_judged_once() -> None:
    requests = _requests()
    assert requests.takes(REQUEST, _headers((b"content-length", b"10"))) == MODERN
    assert requests.takes(REQUEST, _headers((b"content-length", b"99"))) == MODERN  # the length is not a key
    assert len(requests._verdicts) == 1


def test_a_handshake_request_or_a_second_routing_header_is_left_to_the_sdk() -> None:
    requests = _requests()
    handshake = Headers(raw=[(b"content-type", b"application/json"), (b"accept", b"application/json")])
    assert requests.takes(REQUEST, handshake) is None
    assert requests.takes(REQUEST, _headers((b"mcp-method", b"prompts/list"))) is None


def test_large_header_sets_are_judged_each_time_and_never_kept() -> None:
    requests = _requests()
    big = _headers((b"x-padding", b"p" * KEPT_HEADER_BYTES))
    assert requests.takes(REQUEST, big) == MODERN
    assert requests._verdicts == {}


def test_at_most_so_many_header_sets_are_kept() -> None:
    requests = _requests()
    for n in range(KEPT_HEADER_SETS + 50):
        assert requests.takes(REQUEST, _headers((b"x-request", str(n).encode()))) == MODERN
    assert len(requests._verdicts) == KEPT_HEADER_SETS
    assert answering.KEPT_HEADER_SETS * answering.KEPT_HEADER_BYTES <= 2 * 1024 * 1024  # a bound in bytes too
