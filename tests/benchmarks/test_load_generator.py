"""The lean load generator (`benchmarks/load.c`) counts what a server answers as the other two generators do.

Each test runs the built program against a small loopback server of its own that answers every request with
the same bytes: a 200 carrying a JSON-RPC result counts as answered; an error, a refusal, a server that hangs
up, or an answer it cannot frame are told apart. `test_bench_http_smoke.py` runs it against the real servers.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from benchmarks import bench_http

pytestmark = [
    pytest.mark.slow,  # it starts the generator
    pytest.mark.skipif(bench_http._compiler() is None, reason="needs Linux and a C compiler"),
]

REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
RESULT = b'{"jsonrpc":"2.0","id":1,"result":{"messages":[]}}'
ERROR = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown prompt"}}'


def _answer(status: str, body: bytes) -> bytes:
    return f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body


@contextmanager
def _answering(answer: bytes | None, asked: threading.Event | None = None) -> Iterator[int]:
    """A loopback server answering each request with `answer` (None: closing each connection at its request);
    it sets `asked` at the first request."""
    listener = socket.create_server(("127.0.0.1", 0))
    threads: list[threading.Thread] = []

    def serve(connection: socket.socket) -> None:
        with connection, suppress(ConnectionError):  # the generator ends its run with requests in flight
            pending = b""
            while True:
                while REQUEST not in pending:
                    data = connection.recv(65536)
                    if not data:
                        return
                    pending += data
                pending = pending.replace(REQUEST, b"", 1)
                if asked is not None:
                    asked.set()
                if answer is None:
                    return
                connection.sendall(answer)

    def accept() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # the listener was closed: the test is over
                return
            thread = threading.Thread(target=serve, args=(connection,), daemon=True)
            threads.append(thread)
            thread.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        acceptor.join(timeout=10)
        for thread in threads:
            thread.join(timeout=10)


def _argv(port: int, tmp_path: Path, clients: int, seconds: float) -> list[str]:
    sent = tmp_path / "request"
    sent.write_bytes(REQUEST)
    return [str(bench_http._built_load()), str(port), str(clients), str(seconds), str(sent)]


def _run(port: int, tmp_path: Path, clients: int = 3, seconds: float = 0.3) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_argv(port, tmp_path, clients, seconds), capture_output=True, text=True, timeout=60)


def _counts(done: subprocess.CompletedProcess[str]) -> dict[str, float]:
    found = re.fullmatch(r"answered (\d+) not-answered (\d+) errors (\d+) seconds ([\d.]+)\n", done.stdout)
    assert done.returncode == 0 and found, (done.returncode, done.stdout, done.stderr)
    return {
        "answered": int(found[1]),
        "not answered": int(found[2]),
        "errors": int(found[3]),
        "seconds": float(found[4]),
    }


def test_a_200_carrying_a_result_is_answered_on_every_connection_for_the_time_asked(tmp_path: Path) -> None:
    with _answering(_answer("200 OK", RESULT)) as port:
        counts = _counts(_run(port, tmp_path, clients=3, seconds=0.3))
    assert counts["answered"] >= 3 and counts["not answered"] == 0 and counts["errors"] == 0
    assert 0.3 <= counts["seconds"] < 5


@pytest.mark.parametrize(
    "answer",
    [_answer("200 OK", ERROR), _answer("500 Internal Server Error", RESULT), _answer("404 Not Found", b"")],
    ids=["json-rpc-error", "status-500", "empty-404"],
)
def test_an_error_or_a_refusal_is_not_answered(tmp_path: Path, answer: bytes) -> None:
    with _answering(answer) as port:
        counts = _counts(_run(port, tmp_path))
    assert counts["answered"] == 0 and counts["not answered"] >= 3 and counts["errors"] == 0


def test_a_server_that_hangs_up_counts_an_error_per_connection(tmp_path: Path) -> None:
    with _answering(None) as port:
        counts = _counts(_run(port, tmp_path, clients=4))
    assert counts == {"answered": 0, "not answered": 0, "errors": 4, "seconds": counts["seconds"]}


def test_an_answer_without_a_length_stops_the_run_saying_why(tmp_path: Path) -> None:
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    chunked = head + b"%x\r\n%s\r\n0\r\n\r\n" % (len(RESULT), RESULT)
    with _answering(chunked) as port:
        done = _run(port, tmp_path)
    assert done.returncode == 3
    assert "an answer this reader does not take (no Content-Length)" in done.stderr
    assert "transfer-encoding: chunked" in done.stderr


def test_it_runs_as_a_batch_task_so_it_does_not_preempt_the_servers(tmp_path: Path) -> None:
    asked = threading.Event()
    with _answering(_answer("200 OK", RESULT), asked) as port:
        generator = subprocess.Popen(_argv(port, tmp_path, 2, 2.0), stdout=subprocess.PIPE, text=True)
        try:
            assert asked.wait(timeout=30)  # it sets its policy before it connects
            policy = os.sched_getscheduler(generator.pid)
        finally:
            out, _ = generator.communicate(timeout=60)
    assert policy == os.SCHED_BATCH
    assert out.startswith("answered ")
