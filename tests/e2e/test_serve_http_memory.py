"""Memory one client can pin, against a real `serve --http` process: each attack grows the server by under 20 MB.

* Two connections pipeline 300 `prompts/get` of a 200 KB prompt each and
  never read: the server stops reading while its answers wait (600 answers
  held would be some 120 MB).
* Sixty requests carry a 1 MB header each: a head over `MAX_HEAD_BYTES` is
  refused with 431 as it arrives, and nothing of it is kept.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import psutil
import pytest
from e2e_processes import DEADLINE, MODERN, modern_meta, write_notebook
from served_http import ServedHttp, raw_exchange

from mcp_notebook.transports.limits import MAX_HEAD_BYTES

pytestmark = pytest.mark.slow

GROWTH_LIMIT = 20 * 1024 * 1024
BIG_TEXT = "A line of a long prompt, repeated. " * 6000  # about 200 KB


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedHttp]:
    folder = tmp_path_factory.mktemp("memory") / "prompts"
    write_notebook(folder / "big.ipynb", [(BIG_TEXT + "{{who}}", {"prompt": "big"})])
    with ServedHttp([folder]) as served:
        yield served


def _get(port: int, request_id: int, padding: bytes = b"") -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "prompts/get",
            "params": {"name": "big", "arguments": {"who": "you"}, "_meta": modern_meta()},
        }
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n"
        f"Mcp-Method: prompts/get\r\nMcp-Name: big\r\nContent-Length: {len(body)}\r\n"
    ).encode()
    return head + padding + b"\r\n" + body


def _rss(server: ServedHttp) -> int:
    return int(psutil.Process(server.process.pid).memory_info().rss)


def _warm(server: ServedHttp) -> int:
    """The server's RSS once it has answered the request of the attack a few times (code and caches loaded)."""
    for n in range(5):
        reply = raw_exchange(server.port, _get(server.port, n))
        assert reply.startswith(b"HTTP/1.1 200"), reply[:300]
    return _rss(server)


def _peak_within(server: ServedHttp, seconds: float) -> int:
    """The highest RSS seen over `seconds` (the measurement window, not a wait for an event)."""
    peak, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        peak = max(peak, _rss(server))
        time.sleep(0.1)
    return peak


def test_clients_pipelining_without_reading_pin_no_memory(server: ServedHttp) -> None:
    before = _warm(server)
    requests = b"".join(_get(server.port, n) for n in range(300))
    sockets = [socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE) for _ in range(2)]
    sent: list[bool] = []

    def pipeline(sock: socket.socket) -> None:
        sock.settimeout(3.0)  # a server that stops reading stops this send: that is the point
        try:
            sock.sendall(requests)
            sent.append(True)
        except TimeoutError:
            sent.append(False)

    senders = [threading.Thread(target=pipeline, args=(sock,)) for sock in sockets]
    try:
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(DEADLINE)
        peak = _peak_within(server, 3.0)
        assert peak - before < GROWTH_LIMIT, f"grew by {(peak - before) / 2**20:.1f} MB"
        first = sockets[0].recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first[:300]  # it was answering, at the client's pace
    finally:
        for sock in sockets:
            sock.close()
    reply = raw_exchange(server.port, _get(server.port, 1))
    assert reply.startswith(b"HTTP/1.1 200")  # and serves the next client


def test_huge_headers_are_refused_and_pin_no_memory(server: ServedHttp) -> None:
    before = _warm(server)
    megabyte = b"X-Padding: " + b"p" * (1024 * 1024) + b"\r\n"
    for n in range(60):
        with socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE) as sock:
            try:
                sock.sendall(_get(server.port, n, megabyte))
                sock.recv(65536)
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused before it was all sent
    after = _peak_within(server, 1.0)
    assert after - before < GROWTH_LIMIT, f"grew by {(after - before) / 2**20:.1f} MB"
    reply = raw_exchange(server.port, _get(server.port, 1))
    assert reply.startswith(b"HTTP/1.1 200")


def test_a_head_just_over_the_limit_gets_431_and_one_under_it_is_served(server: ServedHttp) -> None:
    over = b"X-Padding: " + b"p" * MAX_HEAD_BYTES + b"\r\n"
    reply = raw_exchange(server.port, _get(server.port, 1, over))
    assert reply.startswith(b"HTTP/1.1 431"), reply[:300]
    assert b"65536 bytes" in reply
    under = b"X-Padding: " + b"p" * (MAX_HEAD_BYTES // 2) + b"\r\n"
    reply = raw_exchange(server.port, _get(server.port, 2, under))
    assert reply.startswith(b"HTTP/1.1 200"), reply[:300]


def test_the_big_prompt_is_served_whole(server: ServedHttp) -> None:
    reply = raw_exchange(server.port, _get(server.port, 7))
    result = json.loads(reply.partition(b"\r\n\r\n")[2])["result"]
    assert result["messages"][0]["content"]["text"].endswith("you")
