"""`mcp-notebook serve --http` (any options, a lowered descriptor limit, several workers) as a real subprocess.

Waits are on lines the server prints (read by a thread into a queue) or on
replies, each with a deadline; raw sockets speak HTTP/1.1 byte by byte for
the slow-client cases.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import httpx2
import psutil
from client_harness import stop_process
from e2e_processes import DEADLINE, URL_PREFIX

__all__ = ["ServedHttp", "Uvicorn", "json_post", "raw_exchange", "read_until_closed", "wait_until"]


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def _limit_descriptors(count: int) -> Callable[[], None]:
    def lower() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (count, hard))

    return lower


class ServedHttp:
    """`python -m mcp_notebook serve PATHS --http ARGS...`; `url` once it says it serves."""

    def __init__(
        self,
        paths: Sequence[str | Path],
        *args: str,
        nofile: int | None = None,
        env: dict[str, str] | None = None,
        command: Sequence[str] | None = None,
        startup: float = DEADLINE,
    ) -> None:
        argv = list(command) if command else [sys.executable, "-m", "mcp_notebook", "serve", *map(str, paths), "--http"]
        if not command and "--port" not in args:
            argv += ["--port", "0"]
        self.process = subprocess.Popen(
            [*argv, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env={**os.environ, **(env or {})},
            preexec_fn=_limit_descriptors(nofile) if nofile else None,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        assert self.process.stderr is not None
        threading.Thread(target=_pump, args=(self.process.stderr, self.lines), daemon=True).start()
        self.url = self.line_with(URL_PREFIX, timeout=startup).split(URL_PREFIX, 1)[1].strip()
        self.port = int(self.url.rsplit(":", 1)[1].split("/", 1)[0])

    def line_with(self, text: str, timeout: float = DEADLINE) -> str:
        """The first stderr line containing `text`, waiting for it within `timeout`."""
        for line in self.seen:
            if text in line:
                return line
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no stderr line with {text!r}; saw {self.seen}") from None
            if line is None:
                raise AssertionError(f"the server exited ({self.process.wait()}); its stderr: {self.seen}")
            self.seen.append(line)
            if text in line:
                return line

    def count_lines_with(self, text: str) -> int:
        return sum(text in line for line in self.seen)

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def terminate(self, timeout: float = DEADLINE) -> int:
        """SIGTERM, then the exit code (within `timeout`)."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)

    def __enter__(self) -> ServedHttp:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            workers = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            workers = []
        stop_process(self.process, timeout=DEADLINE)
        # Should the server have been killed (a loaded machine, a hung drain), its workers go too.
        for worker in psutil.wait_procs(workers, timeout=DEADLINE)[1]:
            with contextlib.suppress(psutil.NoSuchProcess):
                worker.kill()
        if self.process.stderr is not None:
            self.process.stderr.close()


class Uvicorn:
    """`uvicorn --factory mcp_notebook.asgi:create_app --workers N` on a port bound here, stderr kept."""

    def __init__(
        self,
        folder: Path,
        *,
        workers: int = 2,
        **variables: str,
    ) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        self.port = int(sock.getsockname()[1])
        env = {
            **os.environ,
            "MCP_NOTEBOOK_PATHS": str(folder),
            "MCP_NOTEBOOK_CACHE": "0",
            **variables,
        }
        argv = ["-m", "uvicorn", "--factory", "mcp_notebook.asgi:create_app", "--workers", str(workers)]
        self.process = subprocess.Popen(
            [sys.executable, *argv, "--fd", str(sock.fileno())],
            env=env,
            pass_fds=[sock.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        sock.close()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.lines: queue.Queue[str | None] = queue.Queue()
        assert self.process.stderr is not None
        self._pump = threading.Thread(target=_pump, args=(self.process.stderr, self.lines), daemon=True)
        self._pump.start()

    def stderr_lines(self) -> list[str]:
        """Every stderr line, once the process has exited."""
        self._pump.join(timeout=DEADLINE)
        return [line for line in iter(self.lines.get_nowait, None)]

    def wait_ready(self) -> None:
        def ready() -> bool:
            assert self.process.poll() is None, f"the server exited: {self.stderr_lines()}"
            try:
                return httpx2.get(f"http://127.0.0.1:{self.port}/ready", timeout=2).status_code == 200
            except httpx2.HTTPError:
                return False

        wait_until(ready, "the workers to be ready")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=DEADLINE)
        self._pump.join(timeout=DEADLINE)  # it ends at the end of stderr, before the pipe is closed
        assert self.process.stderr is not None
        self.process.stderr.close()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    """Poll a state only the server's process table shows (its descriptors), within `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def read_until_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection; AssertionError if it stays open."""
    sock.settimeout(timeout)
    received = bytearray()
    try:
        while chunk := sock.recv(65536):
            received.extend(chunk)
    except TimeoutError:
        raise AssertionError(f"the connection was still open after {timeout} s; got {bytes(received)!r}") from None
    except ConnectionResetError:
        pass
    return bytes(received)


def raw_exchange(port: int, request: bytes, timeout: float = DEADLINE) -> bytes:
    """Send `request` on a new connection and read the first response (headers and a Content-Length body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        data = bytearray()
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data.extend(chunk)
        head, _, body = bytes(data).partition(b"\r\n\r\n")
        length = next(
            (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")),
            0,
        )
        body_bytes = bytearray(body)
        while len(body_bytes) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body_bytes.extend(chunk)
        return head + b"\r\n\r\n" + bytes(body_bytes)


def json_post(host_header: str, path: str, message: dict[str, Any], extra: str = "") -> bytes:
    """A raw HTTP/1.1 POST of `message` with the given Host header."""
    body = json.dumps(message).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host_header}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body
