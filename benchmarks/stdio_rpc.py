"""Raw JSON-RPC over a spawned server's stdio: the least noisy way to time an MCP server.

`RawStdioClient` starts a server process, writes one JSON-RPC message per line
to its stdin and reads its stdout with `selectors`, so no SDK client, event
loop or reader thread sits between the clock and the bytes. Every wait has a
deadline; a server that stops answering raises `ServerStalledError` with the
tail of its stderr.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

__all__ = [
    "HANDSHAKE_VERSION",
    "MODERN_VERSION",
    "Era",
    "JsonRpcError",
    "RawStdioClient",
    "ServerStalledError",
]

HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"

Era = Literal["handshake", "modern"]
Message = dict[str, Any]

_CLIENT_INFO = {"name": "mcp-notebook-benchmarks", "version": "0.1.0"}


class ServerStalledError(RuntimeError):
    """The server did not answer before the deadline, or exited."""


class JsonRpcError(RuntimeError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.error = dict(error)


class RawStdioClient:
    """A server process spoken to in raw JSON-RPC lines; a context manager that ends the process.

    `started_at` is the `time.perf_counter()` reading taken just before the
    process was spawned, so callers can time "process start to first answer".
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        era: Era = "handshake",
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.era: Era = era
        self._ids = itertools.count(1)
        self._buffer = bytearray()
        self._searched = 0  # how much of `_buffer` is known to hold no newline
        self._pending: list[Message] = []
        # A file, not a pipe: a chatty server never blocks on it. Closed by `close()`.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.started_at = time.perf_counter()
        self._process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._stdin = self._process.stdin
        self._stdout_fd = self._process.stdout.fileno()
        os.set_blocking(self._stdout_fd, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout_fd, selectors.EVENT_READ)

    # -- lifecycle ---------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self, timeout: float = 5.0) -> None:
        """Close stdin (the stdio way to say goodbye), then wait; kill the process if it lingers."""
        if not self._stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self._stdin.close()
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=timeout)
        self._selector.close()
        assert self._process.stdout is not None
        self._process.stdout.close()
        self._stderr.close()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._process.pid

    def cpu_seconds(self) -> float | None:
        """CPU time the server has used so far, summed over its live threads (Linux), else None.

        Unlike wall time, this barely moves when other processes compete for the
        machine, so it compares two servers fairly on a busy box.
        """
        total = 0
        try:
            tasks = list(Path(f"/proc/{self._process.pid}/task").iterdir())
        except OSError:
            return None
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[0])  # nanoseconds on the CPU
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended meanwhile (a worker thread, an index writer)
        return total / 1e9

    def stderr_tail(self, limit: int = 2000) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-limit:]

    # -- messages ----------------------------------------------------------------------------------

    def send(self, message: Message) -> None:
        self._stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._stdin.flush()

    def with_meta(self, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """`params` as this client's era sends them: with the 2026-07-28 `_meta` envelope when modern."""
        if self.era == "handshake":
            return dict(params) if params is not None else None
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": _CLIENT_INFO,
        }
        return {**(params or {}), "_meta": meta}

    def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float = 30.0) -> Any:
        """Send a request and return its `result`; raise `JsonRpcError` on an error answer."""
        request_id = next(self._ids)
        message: Message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        full_params = self.with_meta(params)
        if full_params is not None:
            message["params"] = full_params
        self.send(message)
        answer = self.wait_for(lambda m: m.get("id") == request_id and "method" not in m, timeout=timeout)
        if "error" in answer:
            raise JsonRpcError(method, answer["error"])
        return answer["result"]

    def open_session(self, *, timeout: float = 60.0) -> Any:
        """Handshake era: `initialize` then `notifications/initialized`; modern era: `server/discover`."""
        if self.era == "modern":
            return self.request("server/discover", {}, timeout=timeout)
        result = self.request(
            "initialize",
            {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": _CLIENT_INFO},
            timeout=timeout,
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def list_all_prompts(self, *, timeout: float = 60.0) -> tuple[list[Message], int]:
        """Follow `nextCursor` to the end; returns every prompt and the number of pages."""
        prompts: list[Message] = []
        cursor: str | None = None
        for pages in itertools.count(1):
            result = self.request("prompts/list", {"cursor": cursor} if cursor is not None else {}, timeout=timeout)
            prompts.extend(result.get("prompts", []))
            cursor = result.get("nextCursor")
            if cursor is None:
                return prompts, pages
        raise AssertionError("unreachable")

    def wait_for(self, predicate: Callable[[Message], bool], *, timeout: float) -> Message:
        """The first message (in arrival order) that satisfies `predicate`; others are kept for later waits."""
        deadline = time.perf_counter() + timeout
        for index, kept in enumerate(self._pending):
            if predicate(kept):
                return self._pending.pop(index)
        while True:
            message = self.read_message(deadline)
            if message is None:
                raise ServerStalledError(f"no matching message within {timeout:.1f} s; stderr:\n{self.stderr_tail()}")
            if predicate(message):
                return message
            self._pending.append(message)

    def read_message(self, deadline: float) -> Message | None:
        """The next message from the server, or None when `deadline` (a perf_counter time) passes first."""
        while True:
            # Search only bytes not searched yet: a multi-megabyte listing arrives in many chunks.
            newline = self._buffer.find(b"\n", self._searched)
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                self._searched = 0
                if line.strip():
                    parsed: Message = json.loads(line)
                    return parsed
                continue
            self._searched = len(self._buffer)
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return None
            if not self._selector.select(remaining):
                continue
            chunk = os.read(self._stdout_fd, 1 << 20)
            if not chunk:
                code = self._process.wait(timeout=5)
                raise ServerStalledError(f"server exited with {code}; stderr:\n{self.stderr_tail()}")
            self._buffer += chunk

    def drain(self, quiet: float) -> list[Message]:
        """Read what arrives until nothing has come for `quiet` seconds (collects stray notifications)."""
        drained, self._pending = self._pending, []
        while (message := self.read_message(time.perf_counter() + quiet)) is not None:
            drained.append(message)
        return drained
