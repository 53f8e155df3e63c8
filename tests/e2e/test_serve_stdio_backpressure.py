"""A stdio client that sends requests but does not read the replies: the server stops reading, memory stays flat.

`mcp-notebook serve` runs as a real subprocess whose stdout pipe nobody
reads. The test writes requests without blocking until the server stops
taking them (its stdin pipe stays full), checks how many it took and how
much memory it holds, then starts reading and gets every reply.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from e2e_processes import DEADLINE, initialize_params, write_corpus

pytestmark = pytest.mark.slow

SENT_AT_MOST = 20_000
STALL_SECONDS = 5.0  # stdin not writable for this long: the server has stopped reading
MAX_GROWTH_BYTES = 40 * 1024 * 1024


class UnreadServer:
    """`mcp-notebook serve` with raw binary pipes; stdout is read only when the test asks."""

    def __init__(self, folder: Path, log: Path) -> None:
        self.stderr = log.open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_notebook", "serve", str(folder)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin.fileno()
        self.stdout = self.process.stdout.fileno()
        self.pending = b""

    def write_line(self, message: dict[str, object]) -> None:
        os.write(self.stdin, json.dumps(message).encode() + b"\n")

    def read_line(self) -> dict[str, object]:
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.stdout], [], [], DEADLINE)
            assert ready, "no reply within the deadline"
            chunk = os.read(self.stdout, 1 << 16)
            assert chunk, "the server closed stdout"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        message: dict[str, object] = json.loads(line)
        return message

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.stderr.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[UnreadServer]:
    write_corpus(tmp_path / "prompts")
    running = UnreadServer(tmp_path / "prompts", tmp_path / "stderr.log")
    try:
        yield running
    finally:
        running.close()


def send_until_the_server_stops_reading(server: UnreadServer) -> int:
    """Write `prompts/list` requests without blocking until stdin stays full; returns how many were taken."""
    os.set_blocking(server.stdin, False)
    try:
        for request_id in range(1, SENT_AT_MOST + 1):
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "prompts/list"}).encode() + b"\n"
            while True:
                try:
                    os.write(server.stdin, line)  # shorter than PIPE_BUF: all of it or nothing
                    break
                except BlockingIOError:
                    _, writable, _ = select.select([], [server.stdin], [], STALL_SECONDS)
                    if not writable:
                        return request_id - 1
        return SENT_AT_MOST
    finally:
        os.set_blocking(server.stdin, True)


def test_a_client_that_reads_no_replies_makes_the_server_stop_reading_and_hold_little(
    server: UnreadServer,
) -> None:
    server.write_line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params("2025-06-18")})
    assert server.read_line()["id"] == 0
    server.write_line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    process = psutil.Process(server.process.pid)
    baseline = process.memory_info().rss

    taken = send_until_the_server_stops_reading(server)
    held = process.memory_info().rss - baseline

    # Before, the server read every request and kept every reply waiting (51,000 of them, 840 MB).
    assert taken < SENT_AT_MOST // 4, f"the server kept reading: {taken} requests taken"
    assert held < MAX_GROWTH_BYTES, f"the server holds {held / 2**20:.0f} MB for {taken} unread replies"

    answered: set[object] = set()
    while len(answered) < taken:
        reply = server.read_line()
        assert "result" in reply, reply
        answered.add(reply["id"])
    assert answered == set(range(1, taken + 1))

    server.write_line({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert server.read_line() == {"jsonrpc": "2.0", "id": "after", "result": {}}
