"""Which SDK transport a configuration entry asks for: a stdio subprocess, Streamable HTTP, or legacy SSE.

A `url` means HTTP (with the entry's headers, authorisation included), else
`command` starts a stdio server whose stderr goes to a `ServerLog`. Only the
standard library is imported here up front; the SDK when a transport is opened.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO, cast

from ..config import ServerConfig

__all__ = ["ServerLog", "open_transport", "resolve_command"]

_STDERR_TAIL = 2000


class ServerLog:
    """Where a stdio server's stderr goes: a temporary file whose tail explains failures.

    Server logs would clutter a notebook; kept aside, they still explain a
    server that fails to start or dies. The file is made on first use, so a
    client of an HTTP server never makes one.
    """

    def __init__(self) -> None:
        self._path: str | None = None
        self._file: TextIO | None = None

    @property
    def file(self) -> TextIO:
        """The file a server process writes its stderr to."""
        if self._file is None:
            descriptor, self._path = tempfile.mkstemp(prefix="mcp-notebook-", suffix=".log")
            self._file = cast(TextIO, os.fdopen(descriptor, "a", encoding="utf-8", errors="replace"))
        return self._file

    def tail(self, limit: int = _STDERR_TAIL) -> str:
        """The last `limit` bytes the server wrote, as text ("" when it wrote nothing)."""
        if self._path is None:
            return ""
        try:
            with open(self._path, "rb") as log:
                log.seek(max(0, os.fstat(log.fileno()).st_size - limit))
                return log.read().decode("utf-8", errors="replace").strip()
        except OSError:
            return ""

    def close(self) -> None:
        """Close and remove the file."""
        if self._file is not None:
            self._file.close()
        if self._path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._path)
        self._file = self._path = None


async def open_transport(
    config: ServerConfig, stack: contextlib.AsyncExitStack, *, server_log: ServerLog | None = None
) -> Any:
    """The SDK transport (an async context manager of a read and a write stream) for `config`.

    What the transport needs beside it (the HTTP client) is entered on `stack`;
    a stdio server's stderr goes to `server_log` (this process's stderr without one).
    """
    if config.url is not None:
        headers = dict(config.headers or {})
        if config.sse:
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=headers or None)
        from mcp.client.streamable_http import streamable_http_client

        from ..protocol.sdk_seam import create_http_client

        http = await stack.enter_async_context(create_http_client(headers=headers or None))
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
