"""HTTP resource limits against a real server process: slow clients, huge bodies, descriptor floods, sessions.

Each case is bounded: timeouts are lowered to a second where the case is
about a timeout, and every wait has a deadline.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from client_harness import ChangeWatcher
from e2e_processes import DEADLINE, RawHttpSession, add_prompt, write_corpus
from mcp import Client
from served_http import ServedHttp, read_until_closed, wait_until

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


def test_an_idle_keep_alive_connection_is_closed(strict: ServedHttp) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    with _connect(strict) as sock:
        sock.sendall(_headers(strict, len(body)) + body)
        reply = read_until_closed(sock, DEADLINE)  # answered, then closed once idle
    assert reply.startswith(b"HTTP/1.1 "), reply
    assert b"HTTP/1.1 408" in reply or reply.count(b"HTTP/1.1 ") == 1


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


async def test_a_flood_of_sessions_ends_the_least_recently_used_and_locks_nobody_out(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--max-sessions", "20") as server:
        async with httpx2.AsyncClient() as http:
            busy = RawHttpSession(http, server.url, "2025-06-18")
            await busy.open()
            assert busy.session_id is not None
            stream_headers = {"Accept": "text/event-stream", "Mcp-Session-Id": busy.session_id}
            stream_headers["MCP-Protocol-Version"] = "2025-06-18"
            async with http.stream("GET", server.url, headers=stream_headers, timeout=DEADLINE) as stream:
                assert stream.status_code == 200
                first = RawHttpSession(http, server.url, "2025-06-18")
                await first.open()
                for _ in range(200):  # ten times the cap, from one client
                    opened = await RawHttpSession(http, server.url, "2025-06-18").open()
                    assert opened is not None and "result" in opened
                # The oldest idle session made room; the one with an open stream was kept.
                gone = await first.post({"jsonrpc": "2.0", "id": 9, "method": "prompts/list"})
                assert gone.status_code == 404
                kept = await busy.request("prompts/list")
                assert len(kept["result"]["prompts"]) == 5
        async with Client(server.url, mode="legacy") as client:
            assert len((await client.list_prompts()).prompts) == 5


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
