"""Which SDK transport a configuration entry asks for: a stdio subprocess, Streamable HTTP, or legacy SSE.

A `url` means HTTP (with the entry's headers, authorisation included), else
`command` starts a stdio server whose stderr goes to a `ServerLog`. An HTTP
server's refusals (401, 403) go to a `Refusals`: the SDK reports them only as
"Server returned an error response", and the status and the server's own words
are what tell the user which credential to send. Only the standard library is
imported here up front; the SDK when a transport is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, TextIO, cast

from ..config import ServerConfig

__all__ = ["Refusal", "Refusals", "ServerLog", "open_transport", "resolve_command"]

_STDERR_TAIL = 2000


class ServerLog:
    """Where a stdio server's stderr goes: a temporary file whose tail explains failures.

    Server logs would clutter a notebook; kept aside, they still explain a
    server that fails to start or dies. The file is made on first use, so a
    client of an HTTP server never makes one. Where the system allows it
    (POSIX), its name is removed at once: the server writes and this object
    reads through descriptors opened before, so nothing is left behind even
    when the process holding it is killed.
    """

    def __init__(self) -> None:
        self._path: str | None = None  # only where an open file's name cannot be removed (Windows)
        self._file: TextIO | None = None
        self._reader: int | None = None  # a descriptor of its own: reading moves no offset the server writes at

    @property
    def file(self) -> TextIO:
        """The file a server process writes its stderr to."""
        if self._file is None:
            descriptor, path = tempfile.mkstemp(prefix="mcp-notebook-", suffix=".log")
            self._file = cast(TextIO, os.fdopen(descriptor, "a", encoding="utf-8", errors="replace"))
            self._reader = os.open(path, os.O_RDONLY)
            if os.name == "posix":
                os.unlink(path)
            else:
                self._path = path
        return self._file

    def tail(self, limit: int = _STDERR_TAIL) -> str:
        """The last `limit` bytes the server wrote, as text ("" when it wrote nothing)."""
        if self._reader is None:
            return ""
        try:
            start = max(0, os.fstat(self._reader).st_size - limit)
            os.lseek(self._reader, start, os.SEEK_SET)
            return os.read(self._reader, limit).decode("utf-8", errors="replace").strip()
        except OSError:
            return ""

    def close(self) -> None:
        """Close the file (and remove it, where its name was kept)."""
        if self._file is not None:
            self._file.close()
        if self._reader is not None:
            with contextlib.suppress(OSError):
                os.close(self._reader)
        if self._path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
        self._file = self._path = self._reader = None


_REFUSED = (401, 403)
_MESSAGE_LIMIT = 2000  # a refusal's own words, as much as a person reads


@dataclass(frozen=True, slots=True)
class Refusal:
    """An HTTP server's refusal of a request: its status and, when its body said one, its message."""

    status: int
    message: str | None

    @property
    def status_line(self) -> str:
        """`401 Unauthorized`, `403 Forbidden`."""
        try:
            return f"{self.status} {HTTPStatus(self.status).phrase}"
        except ValueError:
            return str(self.status)


class Refusals:
    """The last 401 or 403 an HTTP server answered, kept until a failure is explained with it (`take`)."""

    def __init__(self) -> None:
        self._last: Refusal | None = None

    def take(self) -> Refusal | None:
        """The refusal seen since the last `take`, if any."""
        last, self._last = self._last, None
        return last

    async def record(self, response: Any) -> None:
        """An HTTP client's response hook: keep a refusal, with the message its body says."""
        if response.status_code not in _REFUSED:
            return
        body = await response.aread()
        self._last = Refusal(response.status_code, _said(body, response.headers.get("content-type", "")))


def _said(body: bytes, content_type: str) -> str | None:
    """The message of an error body: Jupyter's `{"message": …}`, a JSON-RPC error's, or plain text."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "text/plain":
        text = " ".join(body.decode("utf-8", errors="replace").split())
        return text[:_MESSAGE_LIMIT] or None
    if kind != "application/json":
        return None  # an HTML login page says nothing a client can show
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if isinstance(document, dict) and isinstance(document.get("error"), dict):
        document = document["error"]
    message = document.get("message") if isinstance(document, dict) else None
    return message[:_MESSAGE_LIMIT] if isinstance(message, str) and message.strip() else None


async def open_transport(
    config: ServerConfig,
    stack: contextlib.AsyncExitStack,
    *,
    server_log: ServerLog | None = None,
    refusals: Refusals | None = None,
) -> Any:
    """The SDK transport (an async context manager of a read and a write stream) for `config`.

    What the transport needs beside it (the HTTP client) is entered on `stack`;
    a stdio server's stderr goes to `server_log` (this process's stderr without one);
    an HTTP server's 401s and 403s to `refusals`.
    """
    if config.url is not None:
        headers = dict(config.headers or {})
        if config.sse:
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=headers or None)
        from mcp.client.streamable_http import streamable_http_client

        from ..protocol.sdk_seam import create_http_client

        http = await stack.enter_async_context(create_http_client(headers=headers or None))
        if refusals is not None:
            hooks = http.event_hooks
            http.event_hooks = {**hooks, "response": [*hooks.get("response", []), refusals.record]}
        return streamable_http_client(config.url, http_client=http)
    # From their own module: `from mcp import …` would import the whole SDK first.
    from mcp.client.stdio import StdioServerParameters, stdio_client

    if config.command is None:
        raise ValueError("a stdio server needs a command")
    params = StdioServerParameters(
        command=resolve_command(config.command),
        args=list(config.args),
        env=dict(config.env or {}) or None,
        cwd=config.cwd,
    )
    if server_log is None:
        return stdio_client(params)
    return stdio_client(params, errlog=server_log.file)


def resolve_command(command: str) -> str:
    """`command` as found on PATH, else in this Python environment's scripts folder.

    A kernel or a script often runs from a virtual environment that is not on
    PATH: `mcp-notebook serve …` should still find the `mcp-notebook` installed
    beside the interpreter.
    """
    if os.sep in command or shutil.which(command) is not None:
        return command
    beside = Path(sys.executable).parent / command
    return str(beside) if shutil.which(str(beside)) is not None else command
