"""`mcp-notebook connect`: finding a kernel's connection file, and proxying a stdio client to its HTTP server."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp import Client, MCPError, StdioServerParameters

from mcp_notebook.discovery import write_connection_file
from mcp_notebook.exceptions import ServerConnectionError
from mcp_notebook.ipython.kernel_server import (
    KernelServer,
    kernel_prompt_state,
    register_kernel_server,
    serve_command,
    unload_kernel_server,
)
from mcp_notebook.kernel_proxy import find_kernel_connection

DEADLINE = 30.0


def _write(folder: Path, kernel_id: str, created: float) -> None:
    write_connection_file(
        url=f"http://127.0.0.1:1/{kernel_id}", token="t", kernel_id=kernel_id, created=created, directory=folder
    )


def test_a_kernel_is_found_by_its_id_or_a_unique_prefix(tmp_path: Path) -> None:
    _write(tmp_path, "aaaa1111", 1.0)
    _write(tmp_path, "aaaa2222", 2.0)
    assert find_kernel_connection("aaaa1111", directory=tmp_path).kernel_id == "aaaa1111"
    assert find_kernel_connection("aaaa2", directory=tmp_path).kernel_id == "aaaa2222"


def test_latest_picks_the_most_recently_started_kernel(tmp_path: Path) -> None:
    _write(tmp_path, "older", 1.0)
    _write(tmp_path, "newer", 2.0)
    assert find_kernel_connection(latest=True, directory=tmp_path).kernel_id == "newer"
    assert find_kernel_connection(directory=tmp_path).kernel_id == "newer"


def test_an_ambiguous_or_unknown_kernel_says_which_kernels_run(tmp_path: Path) -> None:
    _write(tmp_path, "aaaa1111", 1.0)
    _write(tmp_path, "aaaa2222", 2.0)
    with pytest.raises(ServerConnectionError, match="several kernels match 'aaaa'; running: aaaa2222"):
        find_kernel_connection("aaaa", directory=tmp_path)
    with pytest.raises(ServerConnectionError, match=f"^kernels in {tmp_path}: no running kernel 'zzzz' serves MCP"):
        find_kernel_connection("zzzz", directory=tmp_path)
    with pytest.raises(ServerConnectionError, match="run %mcp serve in a notebook first"):
        find_kernel_connection(latest=True, directory=tmp_path / "empty")


def _connect_command(*args: str) -> list[str]:
    return [str(Path(sys.executable).with_name("mcp-notebook")), "connect", *args]


@pytest.mark.slow
def test_connecting_without_a_running_kernel_exits_2_with_a_reason(tmp_path: Path) -> None:
    done = subprocess.run(
        _connect_command("--latest", "--runtime-dir", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    reason = "no running kernel serves MCP; run %mcp serve in a notebook first"
    assert done.stderr == f"mcp-notebook connect: kernels in {tmp_path}: {reason}\n"


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[InteractiveShell, KernelServer, Path]]:
    runtime = tmp_path / "runtime"
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    shell = InteractiveShell.instance()
    register_kernel_server(shell)
    with contextlib.redirect_stdout(io.StringIO()):
        shell.run_cell('%%prompt kx_greet --arg who="the person"\nHello {{who}}')
        serve_command(shell, [])
    server = kernel_prompt_state(shell).server
    assert server is not None
    yield shell, server, runtime
    unload_kernel_server(shell)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_stdio_client_reaches_the_kernel_through_the_proxy(
    served: tuple[InteractiveShell, KernelServer, Path], mode: str
) -> None:
    _, server, runtime = served
    command = _connect_command("--kernel", server.kernel_id[:8], "--runtime-dir", str(runtime))
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode=mode) as client:
        assert "kx_greet" in {p.name for p in (await client.list_prompts()).prompts}
        rendered = await client.get_prompt("kx_greet", {"who": "Ada"})
        assert rendered.messages[0].content.text == "Hello Ada"
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("kx_nope", {})
        assert unknown.value.error.code == -32602


@pytest.mark.slow
def test_a_line_that_is_not_json_gets_a_parse_error(served: tuple[InteractiveShell, KernelServer, Path]) -> None:
    _, server, runtime = served
    done = subprocess.run(
        _connect_command("--kernel", server.kernel_id, "--runtime-dir", str(runtime)),
        input="this is not json\n",
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["error"]["code"] == -32700
    assert reply["id"] is None


@pytest.mark.slow
def test_requests_piped_in_are_all_answered_before_the_proxy_exits(
    served: tuple[InteractiveShell, KernelServer, Path],
) -> None:
    _, server, runtime = served
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "prompts/get",
            "params": {"name": "kx_greet", "arguments": {"who": "Ada"}},
        },
    ]
    done = subprocess.run(
        _connect_command("--kernel", server.kernel_id, "--runtime-dir", str(runtime)),
        input="".join(json.dumps(request) + "\n" for request in requests),  # stdin ends right after the last one
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # an MCP client logs every stderr line (Claude Code: as an error); all went well
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert sorted(replies) == [1, 2]
    assert replies[2]["result"]["messages"][0]["content"]["text"] == "Hello Ada"


def test_the_public_surface_is_pinned() -> None:
    import mcp_notebook.kernel_proxy as module

    assert sorted(module.__all__) == [
        "add_connect_arguments",
        "find_kernel_connection",
        "main",
        "run_connect",
        "run_proxy",
    ]


class _SlowHandshakeServer:
    """A Streamable HTTP server whose handshake reply is slow, and which refuses requests without its session id.

    Holding the `initialize` reply is the server's latency, not the test's synchronisation: a proxy
    that waits for the handshake passes whatever the delay, one that does not gets its next
    requests refused while the reply is held.
    """

    session = "s-1"

    def __init__(self) -> None:
        self.without_session: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["method"] != "POST":
            await self._reply(send, 405, None)
            return
        message = json.loads(body)
        headers = dict(scope["headers"])
        if message.get("method") == "initialize":
            await anyio.sleep(0.5)
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"prompts": {}},
                "serverInfo": {"name": "slow", "version": "0"},
            }
            await self._reply(send, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif headers.get(b"mcp-session-id") != self.session.encode():
            self.without_session.append(message.get("method", "?"))
            await self._reply(
                send,
                400,
                {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32600, "message": "no session"}},
            )
        elif "id" not in message:
            await self._reply(send, 202, None)
        else:
            await self._reply(send, 200, {"jsonrpc": "2.0", "id": message["id"], "result": {"messages": []}})

    async def _reply(self, send: Any, status: int, payload: dict[str, Any] | None) -> None:
        headers = [(b"mcp-session-id", self.session.encode())]
        if payload is not None:
            headers.append((b"content-type", b"application/json"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": json.dumps(payload).encode() if payload else b""})


async def test_requests_piped_behind_the_handshake_wait_for_its_reply() -> None:
    import socket

    import uvicorn
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter

    from mcp_notebook.discovery import KernelConnection
    from mcp_notebook.kernel_proxy import run_proxy

    app = _SlowHandshakeServer()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # connections queue here until uvicorn accepts them
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    connection = KernelConnection(f"http://127.0.0.1:{port}/mcp", None, "k" * 32, None, os.getpid(), 0.0, "")
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    piped = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "p"}},
    ]
    to_proxy, client_read = anyio.create_memory_object_stream[SessionMessage | Exception](len(piped))
    client_write, from_proxy = anyio.create_memory_object_stream[SessionMessage](10)
    for message in piped:  # all written at once, as a client piping its requests does
        to_proxy.send_nowait(SessionMessage(jsonrpc_message_adapter.validate_python(message)))
    replies: dict[Any, Any] = {}
    with anyio.fail_after(DEADLINE):
        async with to_proxy, client_read, client_write, from_proxy, anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve, [listener])
            tasks.start_soon(run_proxy, connection, client_read, client_write)
            async for item in from_proxy:
                replies[getattr(item.message, "id", None)] = item.message
                if 2 in replies:
                    break
            await to_proxy.aclose()
            server.should_exit = True
    assert app.without_session == []
    assert isinstance(replies[1], JSONRPCResponse)
    assert isinstance(replies[2], JSONRPCResponse) and not isinstance(replies[2], JSONRPCRequest)
