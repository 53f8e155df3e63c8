"""Canaries for each SDK touchpoint in `protocol/sdk_seam.py`: each fails naming the SDK version and the touchpoint.

Run against a newer `mcp` (`.ci/sdk-newest-setup.sh`), these say exactly
which private or provisional part of the SDK moved.
"""

from __future__ import annotations

import contextvars
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from pydantic import ValidationError

from mcp_notebook.protocol import sdk_seam

DEADLINE = 10.0


def moved(touchpoint: str, detail: str) -> str:
    return (
        f"mcp {sdk_seam.sdk_version()} (tested: {', '.join(sdk_seam.TESTED_MINORS)}): "
        f"the SDK touchpoint {touchpoint} changed: {detail}"
    )


@asynccontextmanager
async def wired(server: Server[Any]) -> AsyncIterator[Any]:
    """`server` served over in-memory streams through the SDK's real JSON-RPC dispatcher (not in-process calls)."""
    async with (
        create_client_server_memory_streams() as (client_streams, server_streams),
        anyio.create_task_group() as group,
    ):
        group.start_soon(lambda: server.run(*server_streams, server.create_initialization_options()))
        yield client_streams
        group.cancel_scope.cancel()


def test_the_installed_sdk_is_a_tested_minor() -> None:
    minor = ".".join(sdk_seam.sdk_version().split(".")[:2])
    assert minor in sdk_seam.TESTED_MINORS, moved("version pin", f"{minor} is not a tested minor")


async def test_context_streams_carry_the_senders_context() -> None:
    send, receive = sdk_seam.create_context_streams[int](1)
    async with send, receive:
        await send.send(1)
        assert await receive.receive() == 1
        context = getattr(receive, "last_context", None)
    assert isinstance(context, contextvars.Context), moved("mcp.shared._context_streams", "no last_context")
    assert isinstance(send, sdk_seam.ContextSendStream) and isinstance(receive, sdk_seam.ContextReceiveStream)


def test_the_stream_protocols_have_the_methods_the_transports_use() -> None:
    for protocol, methods in ((sdk_seam.ReadStream, ("receive", "aclose")), (sdk_seam.WriteStream, ("send", "aclose"))):
        for method in methods:
            assert hasattr(protocol, method), moved("mcp.shared._stream_protocols", f"{protocol} lost {method}")


async def test_the_http_client_factory_builds_an_httpx_client_with_the_headers() -> None:
    client = sdk_seam.create_http_client(headers={"X-Probe": "1"})
    async with client:
        assert isinstance(client, httpx2.AsyncClient), moved("mcp.shared._httpx_utils", type(client).__name__)
        assert client.headers.get("X-Probe") == "1", moved("mcp.shared._httpx_utils", "headers not applied")


async def test_a_handlers_session_leads_to_its_connection_and_middleware_runs_around_handlers() -> None:
    seen: dict[str, Any] = {}

    async def list_prompts(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListPromptsResult:
        seen["connection"] = sdk_seam.connection_of(ctx.session)
        return types.ListPromptsResult(prompts=[])

    async def around(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        seen.setdefault("methods", []).append(ctx.method)
        return await call_next(ctx)

    server: Server[Any] = Server("canary", on_list_prompts=list_prompts)
    sdk_seam.add_middleware(server, [around])
    with anyio.fail_after(DEADLINE):
        async with Client(wired(server), mode="legacy") as client:
            await client.list_prompts()
    connection = seen.get("connection")
    assert isinstance(connection, Connection), moved("ServerSession._connection", f"found {connection!r}")
    assert hasattr(connection, "exit_stack"), moved("Connection.exit_stack", "gone")
    assert connection.initialize_accepted, moved("Connection.initialize_accepted", "false after the handshake")
    assert "prompts/list" in seen.get("methods", []), moved("Server.middleware", "middleware was not called")


async def test_a_request_timeout_is_recognised_by_its_message() -> None:
    never = anyio.Event()

    async def get_prompt(ctx: ServerRequestContext[Any, Any], params: Any) -> types.GetPromptResult:
        await never.wait()
        raise AssertionError("unreachable")

    server: Server[Any] = Server("canary", on_get_prompt=get_prompt, on_list_prompts=None)
    with anyio.fail_after(DEADLINE):
        async with Client(wired(server), mode="legacy", read_timeout_seconds=0.2) as client:
            with pytest.raises(MCPError) as raised:
                await client.get_prompt("anything")
    assert sdk_seam.is_request_timeout(raised.value), moved("the timeout message", repr(raised.value.error))


def test_pydantic_still_names_text_that_is_not_json_json_invalid() -> None:
    with pytest.raises(ValidationError) as not_json:
        types.jsonrpc_message_adapter.validate_json("{", by_name=False)
    with pytest.raises(ValidationError) as not_a_message:
        types.jsonrpc_message_adapter.validate_json("[1]", by_name=False)
    assert sdk_seam.is_json_invalid(not_json.value), moved("pydantic json_invalid", str(not_json.value.errors()[0]))
    assert not sdk_seam.is_json_invalid(not_a_message.value)


def test_the_deferred_package_inits_still_leave_serving_importable() -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from mcp_notebook.lazy_packages import defer_package_init, is_deferred
        assert defer_package_init(*{sdk_seam.DEFERRED_PACKAGES!r}) == list({sdk_seam.DEFERRED_PACKAGES!r})
        import mcp.server.lowlevel, mcp.server.stdio
        import mcp_notebook.transports.stdio, mcp_notebook.protocol.server
        assert is_deferred(sys.modules["mcp"]), "serving ran the mcp __init__"
        from mcp import Client  # the first public name runs it, in full
        assert not is_deferred(sys.modules["mcp"])
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, moved("the mcp / mcp.server package __init__", result.stderr[-2000:])
