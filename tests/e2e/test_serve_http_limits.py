"""HTTP resource limits against a real server process: slow clients, huge bodies, descriptor floods, sessions.

Each case is bounded: timeouts are lowered to a second where the case is
about a timeout, and every wait has a deadline.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO

import anyio
import httpx2
import pytest
from client_harness import ChangeWatcher
from e2e_processes import DEADLINE, RawHttpSession, add_prompt, initialize_params, write_corpus
from mcp import Client
from served_http import ServedHttp, Uvicorn, raw_exchange, read_until_closed, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("limits") / "prompts"
    write_corpus(path)
    return path


@pytest.fixture(scope="module")
def strict(folder: Path) -> Iterator[ServedHttp]:
    with ServedHttp([folder], "--header-timeout", "1", "--body-timeout", "1") as server:
        yield server


def _connect(server: ServedHttp) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE)


def _headers(server: ServedHttp, length: int | str) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _trickle(sock: socket.socket, data: bytes, every: float = 0.3) -> None:
    """Send `data` a byte at a time (the slow client itself, not a wait); stops when the server hangs up."""
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return
        time.sleep(every)


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


# --- slow and idle clients -----------------------------------------------------------------------------------------

HEADER_PREFIXES = [
    b"",
    b"P",
    b"POST /mcp HTTP/1.1\r\n",
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n",
    b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 2000,
]


@pytest.mark.parametrize("prefix", HEADER_PREFIXES, ids=lambda p: f"{len(p)} bytes")
def test_headers_that_stop_coming_are_cut_off(strict: ServedHttp, prefix: bytes) -> None:
    with _connect(strict) as sock:
        sock.sendall(prefix)
        reply = read_until_closed(sock, DEADLINE)
    assert reply.startswith(b"HTTP/1.1 408"), reply


def test_headers_sent_a_byte_at_a_time_are_cut_off(strict: ServedHttp) -> None:
    with _connect(strict) as sock:
        started = time.monotonic()
        _trickle(sock, _headers(strict, 2)[:40])
        reply = read_until_closed(sock, DEADLINE)
    assert reply.startswith(b"HTTP/1.1 408"), reply
    assert time.monotonic() - started < DEADLINE


def _one_response(reader: IO[bytes]) -> bytes:
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline()
        assert line, f"closed after {head!r}"
        head += line
    length = next(int(line[15:]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:"))
    return head + reader.read(length)


def test_the_header_timeout_counts_from_the_last_response_on_a_busy_connection(strict: ServedHttp) -> None:
    """Requests for twice the header timeout on one connection are all answered; then headers that stop
    coming get their 408 a whole timeout after the last response, not sooner."""
    ready = f"GET /ready HTTP/1.1\r\nHost: 127.0.0.1:{strict.port}\r\n\r\n".encode()
    with _connect(strict) as sock, sock.makefile("rb") as reader:
        started = time.monotonic()
        answered = 0
        while time.monotonic() - started < 2.0:  # the header timeout is 1 s
            last_sent = time.monotonic()
            sock.sendall(ready)
            reply = _one_response(reader)
            assert reply.startswith(b"HTTP/1.1 200"), reply
            answered += 1
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        reply = read_until_closed(sock, DEADLINE)
        waited = time.monotonic() - last_sent
    assert answered > 2
    assert reply.startswith(b"HTTP/1.1 408"), reply
    # The last response was complete after `last_sent`, and the 408 is due a timeout after it: a slow
    # machine only adds to this (the margin is the loop's clock, read once per turn).
    assert waited >= 0.9, waited


def test_an_idle_keep_alive_connection_is_closed(strict: ServedHttp) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    with _connect(strict) as sock:
        sock.sendall(_headers(strict, len(body)) + body)
        reply = read_until_closed(sock, DEADLINE)  # answered, then closed once idle
    assert reply.startswith(b"HTTP/1.1 "), reply
    assert b"HTTP/1.1 408" in reply or reply.count(b"HTTP/1.1 ") == 1


@pytest.fixture(scope="module")
def brief(folder: Path) -> Iterator[ServedHttp]:
    """Idle connections closed after 1 s; headers due within 2 s."""
    with ServedHttp([folder], "--keep-alive-timeout", "1", "--header-timeout", "2") as server:
        yield server


def _answered_then(server: ServedHttp, sock: socket.socket, reader: IO[bytes]) -> float:
    """Send a request on `sock` and read its answer whole: when it had arrived."""
    ready = f"GET /ready HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    for _ in range(3):  # the connection's own timer is set at its start; these answers move its deadlines
        sock.sendall(ready)
        assert _one_response(reader).startswith(b"HTTP/1.1 200")
    return time.monotonic()


@pytest.mark.parametrize("body", [b"", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'], ids=["ready", "post"])
def test_a_connection_idle_after_its_answers_is_closed_at_the_keep_alive_timeout(
    brief: ServedHttp, body: bytes
) -> None:
    with _connect(brief) as sock, sock.makefile("rb") as reader:
        if body:
            sock.sendall(_headers(brief, len(body)) + body)
            assert _one_response(reader).startswith(b"HTTP/1.1 ")
        answered = _answered_then(brief, sock, reader)
        rest = reader.read()  # until the server closes the connection
        waited = time.monotonic() - answered
    assert rest == b""  # closed quietly: no 408, which is for headers that stop coming
    assert 0.9 <= waited < 1.9, waited  # the keep-alive timeout (1 s), not the header timeout (2 s)


def test_a_request_begun_on_an_idle_connection_is_held_to_the_header_timeout_not_the_keep_alive_one(
    brief: ServedHttp,
) -> None:
    with _connect(brief) as sock, sock.makefile("rb") as reader:
        answered = _answered_then(brief, sock, reader)
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")  # headers that stop coming
        rest = reader.read()
        waited = time.monotonic() - answered
    assert rest.startswith(b"HTTP/1.1 408"), rest
    assert waited >= 1.9, waited  # two seconds from the last answer, the header timeout


@pytest.mark.parametrize(("declared", "sent"), [(100, b""), (100, b'{"jsonrpc"'), (4096, b"{" * 100)])
def test_a_body_that_stops_coming_is_a_408(strict: ServedHttp, declared: int, sent: bytes) -> None:
    with _connect(strict) as sock:
        sock.sendall(_headers(strict, declared) + sent)
        reply = read_until_closed(sock, DEADLINE)
    assert _status(reply) == 408
    assert b"did not arrive within 1 s" in reply


def test_a_body_sent_a_byte_a_second_is_a_408(strict: ServedHttp) -> None:
    with _connect(strict) as sock:
        sock.sendall(_headers(strict, 60))
        _trickle(sock, b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "padding": "..."}')
        reply = read_until_closed(sock, DEADLINE)
    assert _status(reply) == 408


@pytest.mark.parametrize("method", ["DELETE", "GET", "PUT", "PATCH"])
def test_a_body_of_any_method_sent_a_byte_a_second_is_a_408(strict: ServedHttp, method: str) -> None:
    with _connect(strict) as sock:
        started = time.monotonic()
        head = _headers(strict, 60).replace(b"POST ", method.encode() + b" ", 1)
        sock.sendall(head)
        _trickle(sock, b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "padding": "..."}')
        reply = read_until_closed(sock, DEADLINE)
    assert _status(reply) == 408, reply
    assert b"did not arrive within 1 s" in reply
    assert time.monotonic() - started < DEADLINE


def test_connections_that_never_send_a_byte_are_closed_under_uvicorn_too(folder: Path) -> None:
    # uvicorn's own protocol has no header timeout; the factory puts ours in its place.
    server = Uvicorn(folder, workers=2, MCP_NOTEBOOK_STATELESS="1", MCP_NOTEBOOK_HEADER_TIMEOUT="1")
    idle: list[socket.socket] = []
    try:
        server.wait_ready()
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE) for _ in range(200)]
        replies = [read_until_closed(sock, DEADLINE) for sock in idle]
        assert all(reply.startswith(b"HTTP/1.1 408") for reply in replies), {r[:40] for r in replies}
    finally:
        for sock in idle:
            sock.close()
        server.close()


def test_an_absolute_form_target_is_checked_as_its_host(strict: ServedHttp) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-06-18")}
    ping = json.dumps(message).encode()
    port = strict.port

    def exchange(target: str) -> bytes:
        head = _headers(strict, len(ping)).replace(b"POST /mcp ", f"POST {target} ".encode(), 1)
        return raw_exchange(port, head + ping)

    for foreign in ("http://evil.example/mcp", f"http://evil.example:{port}/mcp", "http://127.0.0.2:1/mcp"):
        reply = exchange(foreign)
        assert _status(reply) == 421, reply
        host = foreign.split("/")[2]
        assert f"Refused: Host '{host}' is not this server".encode() in reply
    assert _status(exchange(f"http://127.0.0.1:{port}/mcp")) == 200
    assert _status(exchange(f"http://localhost:{port}/mcp")) == 200


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
        b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
        b"GET /ready HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 5\r\n\r\n{nope",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 99999999\r\n\r\n",
        b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: nope\r\n\r\n",
        b"NOT HTTP AT ALL\r\n\r\n",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 10\r\n\r\n",
    ],
    ids=["ready", "404", "421", "400", "413", "delete", "not http", "408"],
)
def test_every_response_says_nosniff(strict: ServedHttp, request_bytes: bytes) -> None:
    with _connect(strict) as sock:
        sock.sendall(request_bytes.replace(b"{port}", str(strict.port).encode()))
        reply = read_until_closed(sock, DEADLINE) if b"Content-Length: 10\r" in request_bytes else None
    if reply is None:
        reply = raw_exchange(strict.port, request_bytes.replace(b"{port}", str(strict.port).encode()))
    head = reply.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 "), reply
    assert head.count(b"\r\nx-content-type-options: nosniff") == 1, head


@pytest.mark.parametrize("declared", [100 * 1024**3, 2**63 - 1, 4 * 1024 * 1024 + 1, 10**30])
def test_a_huge_content_length_without_a_body_is_refused_at_once_and_closed(strict: ServedHttp, declared: int) -> None:
    with _connect(strict) as sock:
        sock.sendall(_headers(strict, declared))
        reply = read_until_closed(sock, DEADLINE)
    assert reply, "no answer"
    assert _status(reply) in (413, 400), reply  # 400: a length the HTTP parser itself refuses


async def test_the_server_still_serves_after_the_slow_clients(strict: ServedHttp) -> None:
    async with Client(strict.url, mode="legacy") as client:
        assert len((await client.list_prompts()).prompts) == 5


# --- descriptor exhaustion -----------------------------------------------------------------------------------------


async def test_a_flood_of_idle_connections_does_not_lock_out_clients_or_lose_saves(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    # 256 descriptors, as a small container might have; the flood opens far more connections.
    with ServedHttp([folder], nofile=256) as server:
        baseline = server.descriptors()
        flood: list[socket.socket] = []
        try:
            for _ in range(400):
                flood.append(_connect(server))
            watcher = ChangeWatcher()
            async with Client(server.url, mode="legacy", message_handler=watcher) as client:
                assert len((await client.list_prompts()).prompts) == 5
                add_prompt(folder, "saved_during_flood")
                with anyio.fail_after(DEADLINE):
                    await watcher.changed.wait()
                names = [p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts]
                assert "saved_during_flood" in names
            assert server.descriptors() < 256
        finally:
            for sock in flood:
                sock.close()
        wait_until(lambda: server.descriptors() <= baseline + 8, "the descriptors back to the baseline")
        async with Client(server.url, mode="legacy") as client:
            assert len((await client.list_prompts()).prompts) == 6
        assert server.count_lines_with("Too many open files") == 0


# --- handshake sessions --------------------------------------------------------------------------------------------


def _from(address: str) -> httpx2.AsyncClient:
    """A client whose connections come from `address` (another loopback address: another peer)."""
    return httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=address))


async def _try_open(http: httpx2.AsyncClient, url: str) -> tuple[RawHttpSession, int]:
    session = RawHttpSession(http, url, "2025-06-18")
    response = await session.post(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params("2025-06-18")}
    )
    session.session_id = response.headers.get("mcp-session-id")
    if response.status_code == 200:
        acknowledged = await session.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert acknowledged.status_code == 202
    return session, response.status_code


async def test_a_flood_of_sessions_from_one_client_ends_nobody_elses(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--max-sessions", "50") as server:
        async with _from("127.0.0.2") as victim_http, httpx2.AsyncClient() as flood_http:
            victim = RawHttpSession(victim_http, server.url, "2025-06-18")
            await victim.open()
            statuses = [(await _try_open(flood_http, server.url))[1] for _ in range(60)]
            # The flood fills its own share (half the cap) and is refused after that; the victim,
            # idle all along (for well under a minute), keeps its session.
            assert statuses == [200] * 25 + [503] * 35
            kept = await victim.request("prompts/list")
            assert len(kept["result"]["prompts"]) == 5
            refused = await _try_open(flood_http, server.url)
            assert refused[1] == 503
        async with _from("127.0.0.3") as newcomer:
            _, status = await _try_open(newcomer, server.url)
            assert status == 200


async def test_a_newcomer_is_served_while_another_client_holds_fifty_get_streams(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--max-sessions", "50") as server:
        async with AsyncExitStack() as stack:
            hog = await stack.enter_async_context(httpx2.AsyncClient(timeout=DEADLINE))
            held = 0
            for _ in range(50):
                session, status = await _try_open(hog, server.url)
                if status != 200:
                    assert status == 503
                    continue
                assert session.session_id is not None
                headers = {
                    "Accept": "text/event-stream",
                    "Mcp-Session-Id": session.session_id,
                    "MCP-Protocol-Version": "2025-06-18",
                }
                streams = await stack.enter_async_context(httpx2.AsyncClient(timeout=DEADLINE))
                stream = await stack.enter_async_context(streams.stream("GET", server.url, headers=headers))
                assert stream.status_code == 200
                held += 1
            assert held == 25  # its share: GET streams count
            async with _from("127.0.0.2") as newcomer_http:
                newcomer = RawHttpSession(newcomer_http, server.url, "2025-06-18")
                opened = await newcomer.open()
                assert opened is not None and "result" in opened
                listed = await newcomer.request("prompts/list")
                assert len(listed["result"]["prompts"]) == 5


async def test_only_a_session_idle_past_the_eviction_age_makes_room(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    limits = {"MCP_NOTEBOOK_MAX_SESSIONS": "2", "MCP_NOTEBOOK_SESSION_EVICT_AFTER": "1"}
    server = Uvicorn(folder, workers=1, MCP_NOTEBOOK_MAX_SESSIONS_PER_PEER="2", **limits)
    try:
        server.wait_ready()
        async with httpx2.AsyncClient() as http:
            first, _ = await _try_open(http, server.url)
            second, _ = await _try_open(http, server.url)
            _, status = await _try_open(http, server.url)
            assert status == 503  # both in their first second: neither may be ended
            started = time.monotonic()
            while (third := await _try_open(http, server.url))[1] != 200:
                assert third[1] == 503
                assert time.monotonic() - started < DEADLINE, "no session became evictable"
                await anyio.sleep(0.2)  # the client retrying, as a 503 asks
            assert time.monotonic() - started >= 0.5
            # The least recently used one made room; the other is kept.
            gone = await first.post({"jsonrpc": "2.0", "id": 9, "method": "prompts/list"})
            assert gone.status_code == 404
            kept = await second.request("prompts/list")
            assert len(kept["result"]["prompts"]) == 5
    finally:
        server.close()


async def test_an_idle_session_expires_after_the_session_timeout(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--session-timeout", "1", "-v") as server:
        async with httpx2.AsyncClient() as http:
            session = RawHttpSession(http, server.url, "2025-06-18")
            await session.open()
            assert session.session_id is not None
            server.line_with(f"Session {session.session_id} idle timeout")
            expired = await session.post({"jsonrpc": "2.0", "id": 9, "method": "prompts/list"})
            assert expired.status_code == 404
