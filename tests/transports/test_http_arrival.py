"""Over a real socket, the HTTP protocol answers what the direct lane takes as the body arrives, and no other.

`serve_http` runs uvicorn with `DirectHttpToolsProtocol`: a small kept-alive
`POST /mcp` is held until its body is whole, then answered by the access
gate's checks and the direct lane without an ASGI cycle; everything else, and
everything the gate or the lane does not answer there, goes through the
ASGI app as before. The clients here are raw sockets, so the bytes on the
wire (pipelining, a body in pieces, `Expect`, `Connection: close`) are
exactly the ones under test.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import pytest
import uvicorn
from test_http_transport import DEADLINE, serving
from uvicorn.server import ServerState

from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports import http
from mcp_notebook.transports.direct_http import BATCHED_BYTES, HOLD_BYTES, DirectHttpToolsProtocol
from mcp_notebook.transports.limits import HttpLimits

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def _registry() -> PromptRegistry:
    registry = PromptRegistry()
    greet = PromptSpec(
        name="greet",
        arguments=(PromptArgument("who", completions=("world", "wide")),),
        messages=(MessageTemplate("user", TextContent("Hello {{who}}")),),
    )
    registry.set_group("g.ipynb", [greet])
    return registry


def _request(port: int, request_id: int, method: str, params: dict[str, Any], *extra: str) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}})
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"MCP-Protocol-Version: {MODERN}",
        f"Mcp-Method: {method}",
        *([f"Mcp-Name: {params['name']}"] if method == "prompts/get" else []),
        f"Content-Length: {len(body.encode())}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


def _get(port: int, request_id: int, name: str = "greet", who: str = "Ada", *extra: str) -> bytes:
    return _request(port, request_id, "prompts/get", {"name": name, "arguments": {"who": who}}, *extra)


class Wire:
    """One raw keep-alive connection: send bytes, read whole responses (status, headers, parsed body)."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""

    async def _more(self) -> bool:
        try:
            chunk = await self.stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return False
        self.buffer += chunk
        return True

    async def response(self) -> tuple[int, dict[str, str], Any]:
        with anyio.fail_after(DEADLINE):
            while b"\r\n\r\n" not in self.buffer:
                assert await self._more(), f"closed before a response: {self.buffer!r}"
            head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            status_line, *lines = head.decode("latin-1").split("\r\n")
            headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
            length = int(headers.get("content-length", "0"))
            while len(self.buffer) < length:
                assert await self._more(), "closed in the middle of a body"
            body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(status_line.split(" ")[1]), headers, json.loads(body) if body else None

    async def closed(self) -> bool:
        with anyio.fail_after(DEADLINE):
            while await self._more():
                pass
        return True


@asynccontextmanager
async def wire_to(url: str) -> AsyncIterator[tuple[Wire, int]]:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        yield Wire(stream), port


@pytest.fixture
def asgi_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of every HTTP request that reached the ASGI app (the access gate), in order."""
    calls: list[str] = []
    real = http.AccessGate.__call__

    async def counted(self: http.AccessGate, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            calls.append(scope["path"])
        await real(self, scope, receive, send)

    monkeypatch.setattr(http.AccessGate, "__call__", counted)
    return calls


async def test_a_plain_request_is_answered_without_the_asgi_app(asgi_calls: list[str]) -> None:
    async with serving(_registry(), stateless=True) as url, wire_to(url) as (wire, port):
        await wire.stream.send(_get(port, 1))
        status, headers, body = await wire.response()
        assert status == 200 and headers["content-type"] == "application/json"
        assert headers["x-content-type-options"] == "nosniff" and "date" in headers
        assert body["id"] == 1 and body["result"]["messages"][0]["content"]["text"] == "Hello Ada"
        assert asgi_calls == []
        await wire.stream.send(_get(port, 2, name="nope"))  # the lane declines: the SDK's path answers
        status, _, body = await wire.response()
        assert status == 400 and body["id"] == 2 and body["error"]["message"] == "Unknown prompt: nope"
    assert asgi_calls == ["/mcp"]


async def test_pipelined_requests_are_answered_in_order(asgi_calls: list[str]) -> None:
    async with serving(_registry(), stateless=True) as url, wire_to(url) as (wire, port):
        complete = {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "w"}}
        await wire.stream.send(b"".join(_get(port, n, who=f"n{n}") for n in range(1, 6)))
        assert [(await wire.response())[2]["result"]["messages"][0]["content"]["text"] for _ in range(5)] == [
            f"Hello n{n}" for n in range(1, 6)
        ]
        assert asgi_calls == []
        await wire.stream.send(
            _get(port, 1)
            + _get(port, 2, name="nope")  # answered by the ASGI app, between two answered at once
            + _request(port, 3, "prompts/list", {})
            + _request(port, 4, "completion/complete", complete)
            + _get(port, 5, who="Bob")
        )
        answers = [await wire.response() for _ in range(5)]
    assert [body["id"] for _, _, body in answers] == [1, 2, 3, 4, 5]
    assert "error" in answers[1][2]
    assert [p["name"] for p in answers[2][2]["result"]["prompts"]] == ["greet"]
    assert answers[3][2]["result"]["completion"]["values"] == ["world", "wide"]
    assert answers[4][2]["result"]["messages"][0]["content"]["text"] == "Hello Bob"
    # The first is answered at once; the second goes to the ASGI app, and those behind it follow it there.
    assert asgi_calls == ["/mcp"] * 4


async def test_an_answer_over_the_batched_size_is_written_whole_and_in_order(asgi_calls: list[str]) -> None:
    """A page of hundreds of prompts (over `BATCHED_BYTES`, written at once and in pieces) arrives whole,
    between the small answers pipelined before and after it, on one connection and again on the next turn."""
    registry = _registry()
    registry.set_group(
        "many.ipynb",
        [
            PromptSpec(name=f"p{n:03d}", description="d" * 60, messages=(MessageTemplate("user", TextContent("x")),))
            for n in range(300)
        ],
    )
    names = ["greet"] + [f"p{n:03d}" for n in range(300)]
    async with serving(registry, stateless=True) as url, wire_to(url) as (wire, port):
        # First in its turn (written at once, in pieces), then behind a small one (written with it).
        for requests in ([2, 3], [1, 2, 3]):
            sent = {1: _get(port, 1), 2: _request(port, 2, "prompts/list", {}), 3: _get(port, 3, who="Bob")}
            await wire.stream.send(b"".join(sent[n] for n in requests))
            answers: dict[int, tuple[int, dict[str, str], Any]] = {}
            for _ in requests:
                status, headers, body = await wire.response()
                answers[body["id"]] = (status, headers, body)
            assert list(answers) == requests  # in order
            status, headers, page = answers[2]
            assert status == 200 and int(headers["content-length"]) > BATCHED_BYTES
            assert [p["name"] for p in page["result"]["prompts"]] == names
            assert answers[3][2]["result"]["messages"][0]["content"]["text"] == "Hello Bob"
    assert asgi_calls == []


async def test_a_body_that_comes_in_pieces_is_answered_once_whole(asgi_calls: list[str]) -> None:
    async with serving(_registry(), stateless=True) as url, wire_to(url) as (wire, port):
        request = _get(port, 1)
        head, body = request.split(b"\r\n\r\n", 1)
        await wire.stream.send(head + b"\r\n\r\n")
        for start in range(0, len(body), 40):
            await anyio.sleep(0.02)  # the slow client itself: each piece in a packet of its own
            await wire.stream.send(body[start : start + 40])
        status, _, answered = await wire.response()
    assert status == 200 and answered["result"]["messages"][0]["content"]["text"] == "Hello Ada"
    assert asgi_calls == []


async def test_requests_the_protocol_does_not_hold_reach_the_asgi_app(asgi_calls: list[str]) -> None:
    async with serving(_registry(), stateless=True) as url:
        async with wire_to(url) as (wire, port):
            # Expect: 100-continue: the client waits for uvicorn's 100 before it sends the body.
            request = _get(port, 1, "greet", "Ada", "Expect: 100-continue")
            head, body = request.split(b"\r\n\r\n", 1)
            await wire.stream.send(head + b"\r\n\r\n")
            with anyio.fail_after(DEADLINE):
                while b"\r\n\r\n" not in wire.buffer:
                    assert await wire._more()
            assert wire.buffer.startswith(b"HTTP/1.1 100 ")
            wire.buffer = wire.buffer.split(b"\r\n\r\n", 1)[1]
            await wire.stream.send(body)
            assert (await wire.response())[2]["result"]["messages"][0]["content"]["text"] == "Hello Ada"
            # A body over HOLD_BYTES (an argument of its size), still a plain request.
            big = "x" * (HOLD_BYTES + 1)
            await wire.stream.send(_get(port, 2, "greet", big))
            status, _, answered = await wire.response()
            assert status == 200 and answered["result"]["messages"][0]["content"]["text"] == f"Hello {big}"
        async with wire_to(url) as (wire, port):
            await wire.stream.send(_get(port, 3, "greet", "Ada", "Connection: close"))
            status, headers, answered = await wire.response()
            assert status == 200 and headers["connection"] == "close" and answered["id"] == 3
            assert await wire.closed()
    assert asgi_calls == ["/mcp", "/mcp", "/mcp"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        (("Origin: https://evil.example",), 403),
        (("Authorization: Bearer wrong",), 401),
    ],
)
async def test_a_request_the_gate_refuses_is_refused_by_the_asgi_app(
    asgi_calls: list[str], extra: tuple[str, ...], status: int
) -> None:
    async with serving(_registry(), stateless=True, token="right") as url, wire_to(url) as (wire, port):
        await wire.stream.send(_get(port, 1, "greet", "Ada", *extra))
        answered = await wire.response()
        assert answered[0] == status
        await wire.stream.send(_get(port, 2, "greet", "Ada", "Authorization: Bearer right"))
        assert (await wire.response())[0] == 200
    assert asgi_calls == ["/mcp"]


async def test_a_wrong_host_is_refused_by_the_asgi_app(asgi_calls: list[str]) -> None:
    async with serving(_registry(), stateless=True) as url, wire_to(url) as (wire, port):
        await wire.stream.send(_get(port, 1).replace(f"127.0.0.1:{port}".encode(), b"evil.example", 1))
        assert (await wire.response())[0] == 421
    assert asgi_calls == ["/mcp"]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        (("Authorization: Bearer wrong",), 401),
        (("Authorization: Bearer right", "Origin: https://evil.example"), 403),
        (("Authorization: Bearer right", "Host: evil.example"), 400),  # a second Host
        (("Authorization: Bearer right", "Mcp-Method: prompts/get"), 400),  # a routing header twice: the SDK's -32020
    ],
)
async def test_headers_that_passed_are_checked_afresh_when_any_of_them_changes(
    asgi_calls: list[str], extra: tuple[str, ...], status: int
) -> None:
    """The gate keeps its verdict on a header set that passed; a request whose headers differ in anything but
    Content-Length is checked afresh, and one that fails is refused by the ASGI app as ever."""
    right = "Authorization: Bearer right"
    async with serving(_registry(), stateless=True, token="right") as url, wire_to(url) as (wire, port):
        await wire.stream.send(_get(port, 1, "greet", "Ada", right))
        assert (await wire.response())[0] == 200
        await wire.stream.send(_get(port, 2, "greet", "Ada", *extra))
        refused, _, body = await wire.response()
        assert refused == status and "error" in body, body
        await wire.stream.send(_get(port, 3, "greet", "Grace", right))  # a longer body, the same verdict
        answered, _, body = await wire.response()
        assert answered == 200 and body["result"]["messages"][0]["content"]["text"] == "Hello Grace"
    assert asgi_calls == ["/mcp"]  # the refused one only


async def test_the_gate_keeps_verdicts_on_a_bounded_number_of_header_sets() -> None:
    """Requests with ever new headers are all checked and answered, and the verdicts kept stay bounded."""
    gate = http.create_http_app(create_server(_registry()), allowed_hosts=["127.0.0.1:8000"], stateless=True)
    assert isinstance(gate, http.AccessGate)
    gate.ready = None
    request = _get(8000, 1)
    head, body = request.split(b"\r\n\r\n", 1)
    headers = [
        (name.strip().lower(), value.strip())
        for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    ]
    server = ("127.0.0.1", 8000)
    for n in range(600):
        answer = gate.answer_arrived([*headers, (b"x-request", str(n).encode())], body, server)
        assert answer is not None and b'"Hello Ada"' in b"".join(answer[0])
    assert 0 < len(gate._taken_headers) <= http._TAKEN_HEADERS_KEPT
    refused = [(name, b"evil.example" if name == b"host" else value) for name, value in headers]
    assert gate.answer_arrived(refused, body, server) is None  # left to the ASGI app, which answers 421


class Recorded(asyncio.Transport):
    """A transport that keeps what the protocol writes, for driving one connection's protocol by hand."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.written += bytes(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)


async def test_a_request_held_when_the_server_stops_is_answered_then_the_connection_closes() -> None:
    gate = http.create_http_app(create_server(_registry()), allowed_hosts=http.allowed_hosts_for("127.0.0.1", 8000))
    gate.ready = None  # started: what `serve_http` does once the prompts are indexed
    config = http.uvicorn_config(gate, HttpLimits())
    config.load()
    protocol = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = Recorded()
    protocol.connection_made(transport)
    head, body = _get(8000, 1).split(b"\r\n\r\n", 1)
    protocol.data_received(head + b"\r\n\r\n" + body[:10])
    protocol.shutdown()  # the server stops while the request's body is still coming
    assert not transport.closed
    protocol.data_received(body[10:])
    await asyncio.sleep(0)  # the answer is written at the end of the loop's turn
    assert transport.written.startswith(b"HTTP/1.1 200 OK\r\n") and b"connection: close\r\n" in transport.written
    assert b"Hello Ada" in transport.written and transport.closed


def _protocol(**options: Any) -> Any:
    """The protocol `serve_http` runs, for one connection, built by hand with uvicorn `options`."""
    gate = http.create_http_app(create_server(_registry()), allowed_hosts=http.allowed_hosts_for("127.0.0.1", 8000))
    config = uvicorn.Config(gate, http=DirectHttpToolsProtocol, log_config=None, **options)
    config.mcp_gate = gate  # type: ignore[attr-defined]  # as `uvicorn_config` and the ASGI factory set it
    config.load()
    return config.http_protocol_class(config=config, server_state=ServerState(), app_state={})


@pytest.fixture
def access_log_handled() -> Iterator[None]:
    """uvicorn writes its access log when its logger has a handler (as under `uvicorn --factory`)."""
    handler = logging.NullHandler()
    logging.getLogger("uvicorn.access").addHandler(handler)
    yield
    logging.getLogger("uvicorn.access").removeHandler(handler)


@pytest.mark.parametrize(
    "options",
    [{"access_log": True}, {"access_log": False, "limit_concurrency": 10}, {"access_log": False, "root_path": "/b"}],
    ids=str,
)
@pytest.mark.usefixtures("access_log_handled")
async def test_nothing_is_held_where_uvicorn_must_see_every_request(options: dict[str, Any]) -> None:
    assert _protocol(**options)._answers is None
    assert _protocol(access_log=False)._answers is not None  # (which takes the access log's handler away)
