"""The stdio transport over real pipes: bad lines get JSON-RPC errors and the server keeps serving."""

from __future__ import annotations

import io
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports.stdio import BackgroundTask, serve_stdio

DEADLINE = 5.0
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Pipes:
    """The client's end of a server running on two OS pipes."""

    def __init__(self, to_server: int, from_server: anyio.AsyncFile[str]) -> None:
        self.to_server = to_server
        self.from_server = from_server

    def send_line(self, line: str) -> None:
        os.write(self.to_server, (line + "\n").encode())

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message))

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(DEADLINE):
            line = await self.from_server.readline()
        assert line, "the server closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> None:
        os.close(self.to_server)


@pytest.fixture
def registry() -> PromptRegistry:
    reg = PromptRegistry()
    spec = PromptSpec(
        name="greet",
        arguments=(PromptArgument("who"),),
        messages=(MessageTemplate("user", TextContent("Hello {{who}}")),),
    )
    reg.set_group("g.ipynb", [spec])
    return reg


@asynccontextmanager
async def running(registry: PromptRegistry, tasks: tuple[BackgroundTask, ...] = ()) -> AsyncIterator[Pipes]:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(in_read, "rb"), encoding="utf-8"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_write, "wb"), encoding="utf-8"))
    client_reads = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_read, "rb"), encoding="utf-8"))
    pipes = Pipes(in_write, client_reads)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: serve_stdio(create_server(registry), tasks=tasks, stdin=stdin, stdout=stdout))
            try:
                yield pipes
            finally:
                pipes.close()  # EOF: the server returns on its own
    finally:
        await stdin.aclose()
        await stdout.aclose()
        await client_reads.aclose()


def initialize(pipes: Pipes, revision: str = "2025-06-18") -> None:
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    pipes.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})


async def test_a_line_that_is_not_json_gets_a_parse_error_with_a_null_id(registry: PromptRegistry) -> None:
    async with running(registry) as pipes:
        pipes.send_line('{"jsonrpc": "2.0", "id": 1, "method": ')
        reply = await pipes.receive()
    assert reply == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is not valid JSON"},
    }


async def test_json_that_is_not_a_message_gets_invalid_request_with_its_id(registry: PromptRegistry) -> None:
    async with running(registry) as pipes:
        pipes.send({"jsonrpc": "2.0", "id": 7, "method": 5})
        with_id = await pipes.receive()
        pipes.send_line("[1, 2, 3]")
        without_id = await pipes.receive()
    assert (with_id["id"], with_id["error"]["code"]) == (7, -32600)
    assert (without_id["id"], without_id["error"]["code"]) == (None, -32600)


async def test_the_server_keeps_serving_a_handshake_client_after_bad_lines(registry: PromptRegistry) -> None:
    async with running(registry) as pipes:
        pipes.send_line("not json at all")
        assert (await pipes.receive())["error"]["code"] == -32700
        initialize(pipes)
        assert (await pipes.receive())["result"]["protocolVersion"] == "2025-06-18"
        pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        pipes.send_line("{oops")
        assert (await pipes.receive())["error"]["code"] == -32700
        pipes.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "prompts/get",
                "params": {"name": "greet", "arguments": {"who": "Ada"}},
            }
        )
        reply = await pipes.receive()
    assert reply["result"]["messages"][0]["content"]["text"] == "Hello Ada"


async def test_a_modern_client_gets_parse_errors_too(registry: PromptRegistry) -> None:
    async with running(registry) as pipes:
        pipes.send({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": MODERN_META}})
        assert (await pipes.receive())["result"]["resultType"] == "complete"
        pipes.send_line("}{")
        assert (await pipes.receive())["error"]["code"] == -32700
        pipes.send({"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": MODERN_META}})
        assert (await pipes.receive())["result"]["prompts"][0]["name"] == "greet"


async def test_blank_lines_are_ignored(registry: PromptRegistry) -> None:
    async with running(registry) as pipes:
        pipes.send_line("")
        pipes.send_line("   ")
        initialize(pipes)
        reply = await pipes.receive()
    assert reply["id"] == 1 and "result" in reply


async def test_background_tasks_run_beside_the_server_and_stop_with_it(registry: PromptRegistry) -> None:
    started = anyio.Event()
    stopped = anyio.Event()

    async def watcher() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    async with running(registry, tasks=(watcher,)):
        with anyio.fail_after(DEADLINE):
            await started.wait()
    assert stopped.is_set()
