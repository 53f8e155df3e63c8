"""`mcp-notebook serve` as a real subprocess, spoken to in raw JSON-RPC over stdio or HTTP.

Every wait has a deadline and waits on a line or a response, never on time:
reader threads put each line the process writes into a queue, and tests
block on that queue with a timeout.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import nbformat
from client_harness import stop_process

DEADLINE = 20.0  # generous: a cold interpreter imports the SDK in about 1.5 s
MODERN = "2026-07-28"
HANDSHAKE_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ALL_REVISIONS = (*HANDSHAKE_REVISIONS, MODERN)
URL_PREFIX = "MCP_NOTEBOOK_URL="
ACCEPT = "application/json, text/event-stream"


def modern_meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "0"},
    }


def initialize_params(revision: str) -> dict[str, Any]:
    return {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "e2e", "version": "0"}}


# --- the notebooks served -----------------------------------------------------------------------------------------


def write_notebook(path: Path, cells: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """Markdown cells `(source, metadata.mcp)`, written atomically so a watcher never sees half a file."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for source, mcp in cells:
        cell = nbformat.v4.new_markdown_cell(source)
        cell.metadata["mcp"] = mcp
        notebook.cells.append(cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    nbformat.write(notebook, str(tmp))
    tmp.replace(path)


GREET_ARGUMENTS = [
    {"name": "who", "title": "Who", "description": "the person to greet"},
    {"name": "style", "required": False, "default": "warmly", "completions": ["warmly", "wittily", "formally"]},
]


def write_corpus(folder: Path) -> None:
    """Five prompts in three notebooks: `greet` (arguments, completions), `explain`, and `note0`…`note2`."""
    write_notebook(
        folder / "greet.ipynb",
        [("# Greeting\nGreet {{who}} {{style}}.", {"prompt": "greet", "title": "Greet", "arguments": GREET_ARGUMENTS})],
    )
    write_notebook(folder / "topics/explain.ipynb", [("Explain {{topic}} simply.", {"prompt": "explain"})])
    write_notebook(folder / "notes.ipynb", [(f"Note number {i}.", {"prompt": f"note{i}"}) for i in range(3)])


def add_prompt(folder: Path, name: str) -> None:
    """Save a new notebook publishing `name`, as an editor would."""
    write_notebook(folder / f"{name}.ipynb", [(f"The {name} prompt.", {"prompt": name})])


# --- processes ----------------------------------------------------------------------------------------------------


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


class ServerProcess:
    """`python -m mcp_notebook serve ARGS...`, its stdout and stderr read line by line."""

    def __init__(self, args: Sequence[str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_notebook", "serve", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self.stdout_lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_seen: list[str] = []
        for stream, lines in ((self.process.stdout, self.stdout_lines), (self.process.stderr, self.stderr_lines)):
            assert stream is not None
            threading.Thread(target=_pump, args=(stream, lines), daemon=True).start()

    def stderr_line(self, starting: str) -> str:
        """The first stderr line that starts with `starting` (waiting for it, within the deadline)."""
        for seen in self.stderr_seen:
            if seen.startswith(starting):
                return seen
        while True:
            try:
                line = self.stderr_lines.get(timeout=DEADLINE)
            except queue.Empty:
                raise AssertionError(f"no stderr line starting {starting!r}; saw {self.stderr_seen}") from None
            if line is None:
                raise AssertionError(f"the server exited; its stderr: {self.stderr_seen}")
            self.stderr_seen.append(line)
            if line.startswith(starting):
                return line

    def close(self) -> int:
        if self.process.stdin is not None and not self.process.stdin.closed:
            self.process.stdin.close()
        return stop_process(self.process, timeout=DEADLINE)

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


class StdioServer(ServerProcess):
    """Raw JSON-RPC lines to and from a stdio server."""

    def __init__(self, args: Sequence[str]) -> None:
        super().__init__(args)
        self.ids = itertools.count(1)
        self.notifications: list[dict[str, Any]] = []

    def send_line(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message))

    def receive(self) -> dict[str, Any]:
        try:
            line = self.stdout_lines.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError("no message from the server within the deadline") from None
        assert line is not None, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)  # stdout carries nothing but JSON-RPC
        return message

    def request(self, method: str, params: dict[str, Any] | None = None, *, modern: bool = False) -> dict[str, Any]:
        request_id = next(self.ids)
        if modern:
            params = {**(params or {}), "_meta": modern_meta()}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if reply.get("id") == request_id and "method" not in reply:
                return reply
            self.notifications.append(reply)

    def initialize(self, revision: str) -> dict[str, Any]:
        reply = self.request("initialize", initialize_params(revision))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def notification(self, method: str) -> dict[str, Any]:
        """The next notification named `method` (earlier ones kept aside are looked at first)."""
        for index, seen in enumerate(self.notifications):
            if seen.get("method") == method:
                return self.notifications.pop(index)
        while True:
            message = self.receive()
            if message.get("method") == method:
                return message
            self.notifications.append(message)


class HttpServer(ServerProcess):
    """A server started with `--http --port 0`; `url` is read from its machine-readable stderr line."""

    def __init__(self, args: Sequence[str]) -> None:
        super().__init__([*args, "--http", "--port", "0"])
        self.url = self.stderr_line(URL_PREFIX).removeprefix(URL_PREFIX)


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a `text/event-stream` body."""
    return [json.loads(line[5:].strip()) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


class RawHttpSession:
    """Raw JSON-RPC over Streamable HTTP, pinned to one revision (a handshake session or 2026-07-28)."""

    def __init__(self, http: Any, url: str, revision: str, headers: dict[str, str] | None = None) -> None:
        self.http = http  # an httpx2.AsyncClient
        self.url = url
        self.revision = revision
        self.extra_headers = headers or {}
        self.session_id: str | None = None
        self.ids = itertools.count(1)

    def headers(self, method: str, params: dict[str, Any] | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, **self.extra_headers}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.revision == MODERN:
            headers["MCP-Protocol-Version"] = MODERN
            headers["Mcp-Method"] = method
            name = (params or {}).get({"prompts/get": "name", "resources/read": "uri"}.get(method, ""))
            if isinstance(name, str):
                headers["Mcp-Name"] = name
        elif self.revision >= "2025-06-18" and method != "initialize":
            # The header exists since 2025-06-18; older clients never send it.
            headers["MCP-Protocol-Version"] = self.revision
        return headers

    async def post(self, message: dict[str, Any]) -> Any:
        params = message.get("params")
        return await self.http.post(
            self.url, content=json.dumps(message), headers=self.headers(message["method"], params), timeout=DEADLINE
        )

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self.ids)
        if self.revision == MODERN:
            params = {**(params or {}), "_meta": modern_meta()}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        response = await self.post(message)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            replies = sse_messages(response.text)
        else:
            replies = [response.json()]
        return next(reply for reply in replies if reply.get("id") == request_id)

    async def open(self) -> dict[str, Any] | None:
        """Initialize a handshake session (nothing to do at 2026-07-28); returns the initialize reply."""
        if self.revision == MODERN:
            return None
        response = await self.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params(self.revision)}
        )
        self.session_id = response.headers.get("mcp-session-id")  # none when the server is stateless
        replies = (
            sse_messages(response.text) if "event-stream" in response.headers["content-type"] else [response.json()]
        )
        acknowledged = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert acknowledged.status_code == 202
        reply: dict[str, Any] = replies[0]
        return reply
