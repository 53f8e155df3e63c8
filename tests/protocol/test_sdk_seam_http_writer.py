"""Canary for the SDK touchpoints HTTP writes prepared results through (`sdk_seam.write_http_messages_with`).

The session manager must build its transports by the module-level name the
seam rebinds, the transport must serialize in the two methods the seam
overrides, and the 2026-07-28 era in the two functions it wraps. A message
with nothing prepared must come out exactly as the SDK writes it.
"""

from __future__ import annotations

import json

import mcp_types as types
from mcp.server import _streamable_http_modern as modern
from mcp.server import streamable_http, streamable_http_manager

from mcp_notebook.protocol import sdk_seam
from mcp_notebook.protocol.prepared import encode_message, plain_message, prepare

RESPONSE = types.JSONRPCResponse(jsonrpc="2.0", id=3, result={"prompts": [{"name": "a"}], "nextCursor": None})


def _installed() -> type:
    assert sdk_seam.write_http_messages_with(encode_message, plain_message)
    assert sdk_seam.write_http_messages_with(encode_message, plain_message)  # once only, however often asked
    transport: type = streamable_http_manager.StreamableHTTPServerTransport  # type: ignore[attr-defined]
    return transport


def test_the_manager_builds_its_transports_by_the_name_the_seam_rebinds() -> None:
    transport = _installed()
    assert transport is not streamable_http.StreamableHTTPServerTransport
    assert issubclass(transport, streamable_http.StreamableHTTPServerTransport)
    manager = streamable_http_manager.StreamableHTTPSessionManager
    for method in (manager._admit_session, manager._handle_stateless_request):
        assert "StreamableHTTPServerTransport" in method.__code__.co_names, method.__name__


def test_a_plain_message_is_written_exactly_as_the_sdk_writes_it() -> None:
    transport = _installed()
    ours = transport(mcp_session_id="s1", is_json_response_enabled=True, event_store=None)
    sdk = streamable_http.StreamableHTTPServerTransport(
        mcp_session_id="s1", is_json_response_enabled=True, event_store=None
    )
    mine, theirs = ours._create_json_response(RESPONSE), sdk._create_json_response(RESPONSE)
    assert mine.body == theirs.body and mine.headers.items() == theirs.headers.items()
    event = streamable_http.EventMessage(RESPONSE, "e1")
    assert ours._create_event_data(event) == sdk._create_event_data(event)


def test_a_prepared_result_is_written_as_its_bytes_in_both_eras() -> None:
    transport = _installed()
    result = prepare({"prompts": [{"name": "a"}], "resultType": "complete"})
    message = types.JSONRPCResponse(jsonrpc="2.0", id=4, result=result)
    expected = {"jsonrpc": "2.0", "id": 4, "result": {"prompts": [{"name": "a"}], "resultType": "complete"}}
    ours = transport(mcp_session_id=None, is_json_response_enabled=True, event_store=None)
    response = ours._create_json_response(message)
    assert json.loads(response.body) == expected
    assert response.headers["content-length"] == str(len(response.body))
    assert json.loads(ours._create_event_data(streamable_http.EventMessage(message, "e2"))["data"]) == expected
    frame = modern._sse_event(message)
    assert frame.startswith(b"event: message\r\ndata: ") and frame.endswith(b"\r\n\r\n")
    assert json.loads(frame.removeprefix(b"event: message\r\ndata: ")) == expected


async def test_a_2026_reply_is_sent_as_starlette_sends_the_sdks() -> None:
    _installed()
    sent: list[dict[str, object]] = []

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    async def receive() -> dict[str, object]:
        return {"type": "http.request"}

    await modern._write(
        types.JSONRPCResponse(jsonrpc="2.0", id=5, result=prepare({"a": 1})), {"type": "http"}, receive, send
    )
    mine = list(sent)
    sent.clear()
    from starlette.responses import Response

    await Response(b'{"jsonrpc":"2.0","id":5,"result":{"a":1}}', media_type="application/json")(
        {"type": "http"}, receive, send
    )
    assert mine == sent


def test_the_2026_era_writes_its_replies_in_the_functions_the_seam_wraps() -> None:
    _installed()
    assert modern._write.__name__ == "write_through" and modern._sse_event.__name__ == "event_through"
    assert isinstance(modern._OK_STATUS, int)
    handler = modern.handle_modern_request.__code__.co_names
    assert "_write" in handler and "_sse_event" in handler
