"""A generated table of malformed JSON-RPC requests and the error each must get, in every revision.

Each case is the raw bytes a client sends (built for one revision: at
2026-07-28 requests carry the `_meta` envelope) and what the answer must
be: the JSON-RPC code, and whether the request's id comes back (`ECHOED`)
or could not be read (`UNKNOWN`: `"id": null` up to 2025-06-18, no `id` at
all from 2025-11-25 on). Every message must be short and quote no input in
full.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from e2e_processes import MODERN, modern_meta

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
HEADER_MISMATCH: Final = -32020

ECHOED: Final = "echoed"
UNKNOWN: Final = "unknown"
HUGE: Final = 2_000_000
"""Characters of a huge value: the reply must stay a small fraction of it."""
SHORT_MESSAGE: Final = 320


@dataclass(frozen=True)
class Case:
    """One malformed message: `build(revision, request_id)` gives the bytes sent."""

    name: str
    build: Callable[[str, str], bytes]
    code: int
    id_rule: str = ECHOED
    modern_code: int | None = None  # where 2026-07-28 answers otherwise
    modern_http_code: int | None = None  # where a stateless HTTP request is refused earlier (its headers)

    def expected_code(self, revision: str, transport: str) -> int:
        if revision == MODERN and transport == "http" and self.modern_http_code is not None:
            return self.modern_http_code
        if revision == MODERN and self.modern_code is not None:
            return self.modern_code
        return self.code


def _params(revision: str, params: dict[str, Any] | None = None) -> dict[str, Any] | None:
    if revision == MODERN:
        return {**(params or {}), "_meta": modern_meta()}
    return params


def _request(method: Any, params: Any = None, **fields: Any) -> Callable[[str, str], bytes]:
    """A request to `method` (params as given, or built for the revision when a dict or None)."""

    def build(revision: str, request_id: str) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        shaped = _params(revision, params) if params is None or isinstance(params, dict) else params
        if shaped is not None:
            message["params"] = shaped
        message.update(fields)
        return json.dumps(message).encode()

    return build


def _raw(text: bytes) -> Callable[[str, str], bytes]:
    return lambda revision, request_id: text


def _with_id(value: Any) -> Callable[[str, str], bytes]:
    def build(revision: str, request_id: str) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": value, "method": "prompts/list"}
        if revision == MODERN:
            message["params"] = {"_meta": modern_meta()}
        return json.dumps(message).encode()

    return build


def _replaced(template: Callable[[str, str], bytes], old: bytes, new: bytes) -> Callable[[str, str], bytes]:
    return lambda revision, request_id: template(revision, request_id).replace(old, new, 1)


def _null_params(revision: str, request_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "prompts/list", "params": None}).encode()


def _neither(revision: str, request_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "params": _params(revision)}).encode()


def _cases() -> Iterator[Case]:
    listing = _request("prompts/list")
    # Not JSON at all, or JSON extensions that are not JSON.
    for name, text in {
        "cut-short": b'{"jsonrpc": "2.0", "id": 1, "method": "prompts/list"',
        "two-objects": b"}{",
        "trailing-garbage": b'{"jsonrpc": "2.0", "id": 1, "method": "ping"} x',
        "single-quotes": b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}",
        "not-utf-8": b'{"jsonrpc": "2.0", "id": "\xff\xfe", "method": "ping"}',
        "nested-too-deep": b"[" * 300 + b"]" * 300,
    }.items():
        yield Case(f"parse-{name}", _raw(text), PARSE_ERROR, UNKNOWN)
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        template = _request("prompts/list", {"cursor": "CONSTANT"})
        yield Case(f"parse-{constant.decode()}", _replaced(template, b'"CONSTANT"', constant), PARSE_ERROR, UNKNOWN)
    # Requests whose id the schema does not allow: before, taken for notifications and never answered.
    for name, value in {
        "null": None,
        "fraction": 1.5,
        "float": 3.0,
        "true": True,
        "false": False,
        "object": {"n": 1},
        "array": [1],
    }.items():
        yield Case(f"id-{name}", _with_id(value), INVALID_REQUEST, UNKNOWN)
    # JSON that is not a message object at all.
    for name, text in {"number": b"5", "string": b'"prompts/list"', "true": b"true", "null": b"null"}.items():
        yield Case(f"not-an-object-{name}", _raw(text), INVALID_REQUEST, UNKNOWN)
    # Envelopes that are wrong, with an id that can be read and must come back.
    yield Case("jsonrpc-missing", _replaced(listing, b'"jsonrpc": "2.0", ', b""), INVALID_REQUEST)
    yield Case("jsonrpc-1.0", _replaced(listing, b'"2.0"', b'"1.0"'), INVALID_REQUEST)
    yield Case("jsonrpc-number", _replaced(listing, b'"2.0"', b"2.0"), INVALID_REQUEST)
    yield Case("method-number", _request(5), INVALID_REQUEST)
    yield Case("method-null", _request(None), INVALID_REQUEST)
    yield Case("neither-method-nor-result", _neither, INVALID_REQUEST)
    for name, params in {"array": [1, 2], "string": "x", "number": 5}.items():
        yield Case(f"params-{name}", _request("prompts/list", params), INVALID_PARAMS)
    yield Case("params-null", _null_params, INVALID_PARAMS)
    # Valid envelopes the server cannot serve.
    yield Case("unknown-method", _request("no/such-method"), METHOD_NOT_FOUND)
    for name, params in {
        "get-without-name": {},
        "get-arguments-list": {"name": "greet", "arguments": ["Ada"]},
        "get-argument-number": {"name": "greet", "arguments": {"who": 5}},
    }.items():
        yield Case(f"params-{name}", _request("prompts/get", params), INVALID_PARAMS)
    # No Mcp-Name header can name a number: stateless HTTP refuses the headers first.
    yield Case(
        "params-get-name-number", _request("prompts/get", {"name": 5}), INVALID_PARAMS, modern_http_code=HEADER_MISMATCH
    )
    yield Case("params-cursor-number", _request("prompts/list", {"cursor": 5}), INVALID_PARAMS)
    yield Case(
        "params-completion-bad-ref",
        _request("completion/complete", {"ref": {"type": "ref/nothing"}, "argument": {"name": "a", "value": "b"}}),
        INVALID_PARAMS,
    )
    # Huge values: the error must not quote them back.
    yield Case(
        "huge-prompt-name",
        _request("prompts/get", {"name": "x" * HUGE}),
        INVALID_PARAMS,
        modern_http_code=HEADER_MISMATCH,  # Mcp-Name cannot carry it
    )
    yield Case(
        "huge-resource-uri",
        _request("resources/read", {"uri": "notebook:///" + "x" * HUGE}),
        -32002,  # resource not found; retired at 2026-07-28 for -32602
        modern_code=INVALID_PARAMS,
        modern_http_code=HEADER_MISMATCH,
    )
    yield Case("huge-method", _request("x" * HUGE), METHOD_NOT_FOUND, modern_http_code=HEADER_MISMATCH)
    yield Case(
        "huge-argument-name", _request("prompts/get", {"name": "greet", "arguments": {"x" * HUGE: "v"}}), INVALID_PARAMS
    )


CASES: Final = tuple(_cases())


def check_reply(case: Case, revision: str, transport: str, request_id: str, reply: dict[str, Any]) -> None:
    """Assert `reply` is the error `case` must get: the code, a short message, the id rule of `revision`."""
    assert "error" in reply, f"{case.name}: not an error: {str(reply)[:300]}"
    error = reply["error"]
    assert error["code"] == case.expected_code(revision, transport), f"{case.name}: {error}"
    assert len(json.dumps(reply)) < 2_000, f"{case.name}: a reply of {len(json.dumps(reply))} bytes"
    message = error["message"]
    assert isinstance(message, str) and 0 < len(message) <= SHORT_MESSAGE, f"{case.name}: {message!r}"
    for dump in ("validation error", "input_value", "type=", "Traceback"):
        assert dump not in message, f"{case.name}: a dump in the message: {message!r}"
    if case.id_rule == ECHOED:
        assert reply.get("id") == request_id, f"{case.name}: id {reply.get('id')!r}, sent {request_id!r}"
    elif revision >= "2025-11-25":
        assert "id" not in reply, f"{case.name}: the unknown id must be left out at {revision}: {reply}"
    else:
        assert reply["id"] is None, f"{case.name}: the unknown id must be null at {revision}: {reply}"
