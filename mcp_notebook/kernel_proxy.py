"""`mcp-notebook connect`: reach a running kernel's MCP server from a client that only speaks stdio.

A kernel that ran `%mcp serve` listens on 127.0.0.1 over Streamable HTTP and
leaves a connection file (URL, token) in the Jupyter runtime directory (and,
when that is not the default one, a pointer to it that `discovery` follows).
This proxy finds that file (`--kernel ID` or `--latest`), then relays JSON-RPC
messages: each line read on stdin is posted to the kernel with its bearer
token; every answer and notification (including `list_changed` from the
session's GET stream, and 2026-07-28 `subscriptions/listen` streams) is
written to stdout, one message per line. Both protocol eras pass through
unchanged; the HTTP headers each era needs (`MCP-Protocol-Version`, and at
2026-07-28 `Mcp-Method` / `Mcp-Name`) are derived from the messages.

`--print-token` prints the kernel server's token instead, for client
configurations that need it: the ones `%mcp serve` prints run it, so the
token never appears in a cell's output.

Only the standard library is imported up front, so `mcp-notebook connect --help`
stays instant; the MCP SDK is imported when the proxy starts.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .discovery import KernelConnection, latest_kernel_connection, list_kernel_connections, runtime_dir, state_dir
from .exceptions import ServerConnectionError

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.shared.message import ClientMessageMetadata, SessionMessage

    from .protocol.sdk_seam import ReadStream, WriteStream

__all__ = ["add_connect_arguments", "find_kernel_connection", "main", "run_connect", "run_proxy"]

log = logging.getLogger(__name__)

_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
# How long the proxy holds a client's next messages while the server answers its handshake.
_HANDSHAKE_WAIT = 30.0


def find_kernel_connection(
    kernel: str | None = None, *, latest: bool = False, directory: Path | str | None = None
) -> KernelConnection:
    """The live kernel to connect to: by id (a unique prefix will do) or the most recently started one."""
    if directory is not None:
        where = f"kernels in {directory}"
    else:
        where = f"kernels in {runtime_dir()} (and those other runtime directories left in {state_dir() / 'kernels'})"
    if latest or kernel is None:
        found = latest_kernel_connection(directory)
        if found is None:
            raise ServerConnectionError(where, "no running kernel serves MCP; run %mcp serve in a notebook first")
        return found
    connections = list_kernel_connections(directory)
    exact = [c for c in connections if c.kernel_id == kernel]
    matches = exact or [c for c in connections if c.kernel_id.startswith(kernel)]
    if len(matches) == 1:
        return matches[0]
    running = ", ".join(f"{c.kernel_id} ({c.notebook_path or 'no notebook'})" for c in connections) or "none"
    problem = (
        f"several kernels match {kernel!r}"
        if matches
        else f"no running kernel {kernel!r} serves MCP (after a restart a kernel has a new id: run %mcp serve in "
        "its notebook and use the lines it prints)"
    )
    raise ServerConnectionError(where, f"{problem}; running: {running}")


class _Headers:
    """Works out the HTTP headers each message needs, remembering the version a handshake negotiated."""

    def __init__(self) -> None:
        self.negotiated: str | None = None
        self.initialize_ids: set[types.RequestId] = set()
        self.answered: Callable[[], None] | None = None  # called when a handshake's reply arrives

    def for_message(self, message: types.JSONRPCMessage) -> ClientMessageMetadata | None:
        import mcp_types as types
        from mcp.shared.inbound import (
            MCP_METHOD_HEADER,
            MCP_NAME_HEADER,
            MCP_PROTOCOL_VERSION_HEADER,
            NAME_BEARING_METHODS,
            encode_header_value,
        )
        from mcp.shared.message import ClientMessageMetadata
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if not isinstance(message, types.JSONRPCRequest | types.JSONRPCNotification):
            return self._versioned()
        if message.method == "initialize" and isinstance(message, types.JSONRPCRequest):
            self.initialize_ids.add(message.id)
            return None
        params: dict[str, Any] = message.params or {}
        meta = params.get("_meta")
        version = meta.get(_VERSION_META_KEY) if isinstance(meta, dict) else None
        if isinstance(version, str) and version in MODERN_PROTOCOL_VERSIONS:
            headers = {MCP_PROTOCOL_VERSION_HEADER: version, MCP_METHOD_HEADER: message.method}
            name_key = NAME_BEARING_METHODS.get(message.method)
            name = params.get(name_key) if name_key is not None else None
            if isinstance(name, str):
                headers[MCP_NAME_HEADER] = encode_header_value(name)
            return ClientMessageMetadata(headers=headers)
        return self._versioned()

    def _versioned(self) -> ClientMessageMetadata | None:
        from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
        from mcp.shared.message import ClientMessageMetadata

        if self.negotiated is None:
            return None
        return ClientMessageMetadata(headers={MCP_PROTOCOL_VERSION_HEADER: self.negotiated})

    def on_reply(self, message: types.JSONRPCMessage) -> None:
        import mcp_types as types

        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id in self.initialize_ids:
            self.initialize_ids.discard(message.id)
            result = message.result if isinstance(message, types.JSONRPCResponse) else None
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(version, str):
                self.negotiated = version
            if self.answered is not None:
                self.answered()


async def run_proxy(
    connection: KernelConnection,
    client_read: ReadStream[SessionMessage | Exception],
    client_write: WriteStream[SessionMessage],
) -> None:
    """Relay messages between a stdio client's streams and the kernel's HTTP server until the client leaves."""
    import anyio
    import mcp_types as types
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.message import SessionMessage

    from .protocol.sdk_seam import create_http_client
    from .transports.stdio import RepliesToBadLines

    headers = _Headers()
    auth = {"Authorization": f"Bearer {connection.token}"} if connection.token else None
    async with (
        create_http_client(headers=auth) as http,
        streamable_http_client(connection.url, http_client=http) as (server_read, server_write),
        anyio.create_task_group() as tasks,
    ):

        async def to_client() -> None:
            async for item in server_read:
                if isinstance(item, Exception):
                    log.warning("the kernel's server: %s", item)
                    continue
                headers.on_reply(item.message)
                await client_write.send(item)

        tasks.start_soon(to_client)
        async for item in RepliesToBadLines(client_read, client_write):  # unreadable lines are answered there
            if isinstance(item, Exception):
                continue
            answered = None
            if isinstance(item.message, types.JSONRPCRequest) and item.message.method == "initialize":
                answered = anyio.Event()
                headers.answered = answered.set
            await server_write.send(SessionMessage(item.message, metadata=headers.for_message(item.message)))
            if answered is not None:
                # The HTTP transport posts every message on its own, and only the handshake's reply
                # carries the session id: a client that pipes its next requests at once (allowed on
                # stdio, where order is enough) would have them reach the server without one.
                with anyio.move_on_after(_HANDSHAKE_WAIT):
                    await answered.wait()
        tasks.cancel_scope.cancel()  # stdin closed: the client is gone


async def run_connect(connection: KernelConnection) -> None:
    """Proxy this process's stdin/stdout to the kernel's server."""
    from .transports.stdio import stdio_transport

    async with stdio_transport() as (read, write):
        # Closing `write` once stdin has ended lets the transport's stdout writer finish, so the process exits.
        try:
            await run_proxy(connection, read, write)
        finally:
            await write.aclose()


def add_connect_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `mcp-notebook connect` (for the CLI's subcommand)."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--kernel", metavar="ID", help="the kernel's id (a unique prefix is enough)")
    which.add_argument("--latest", action="store_true", help="the most recently started kernel (the default)")
    parser.add_argument("--runtime-dir", metavar="DIR", help="where connection files are (default: Jupyter's)")
    parser.add_argument(
        "--print-token",
        action="store_true",
        help="print the kernel server's bearer token and exit (for a client's configuration), instead of proxying",
    )


def main(argv: Sequence[str] | None = None, options: argparse.Namespace | None = None) -> int:
    """`mcp-notebook connect`: returns the exit status (2 when no kernel can be found)."""
    if options is None:
        parser = argparse.ArgumentParser(
            prog="mcp-notebook connect",
            description="Connect a stdio MCP client to a running kernel's server (started with %mcp serve).",
        )
        add_connect_arguments(parser)
        options = parser.parse_args(argv)
    try:
        connection = find_kernel_connection(options.kernel, latest=options.latest, directory=options.runtime_dir)
    except ServerConnectionError as error:
        print(f"mcp-notebook connect: {error}", file=sys.stderr)
        return 2
    if getattr(options, "print_token", False):
        if not connection.token:
            print(f"mcp-notebook connect: kernel {connection.short_id} serves without a token", file=sys.stderr)
            return 1
        print(connection.token)
        return 0
    if sys.stdin.isatty():  # a person started it; an MCP client would log the line as an error (Claude Code)
        print(f"mcp-notebook connect: proxying to {connection.url} (kernel {connection.short_id})", file=sys.stderr)
    import anyio

    anyio.run(run_connect, connection)
    return 0


if __name__ == "__main__":
    sys.exit(main())
