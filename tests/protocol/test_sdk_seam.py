"""Canaries for each SDK touchpoint in `protocol/sdk_seam.py`: each fails naming the SDK version and the touchpoint.

Run against a newer `mcp` (`.ci/sdk-newest-setup.sh`), these say exactly
which private or provisional part of the SDK moved.
"""

from __future__ import annotations

import contextvars
import json
import logging
import math
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams
from packaging.requirements import Requirement
from pydantic import ValidationError
from starlette.types import Message

from mcp_notebook import lazy_packages
from mcp_notebook.protocol import sdk_seam

DEADLINE = 10.0


def moved(touchpoint: str, detail: str) -> str:
    return (
        f"mcp {sdk_seam.sdk_version()} (tested: {', '.join(sdk_seam.TESTED_MINORS)}): "
        f"the SDK touchpoint {touchpoint} changed: {detail}"
    )


@contextmanager
def touching(touchpoint: str) -> Iterator[None]:
    """Any failure inside, an error of the SDK's included, is reported as `touchpoint` having moved."""
    try:
        yield
    except AssertionError as failed:
        if str(failed).startswith(f"mcp {sdk_seam.sdk_version()} "):
            raise
        raise AssertionError(moved(touchpoint, str(failed) or "an assertion failed")) from failed
    except Exception as error:
        raise AssertionError(moved(touchpoint, f"{type(error).__name__}: {error}")) from error


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


def test_the_pin_allows_exactly_the_tested_minors() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    (pin,) = [Requirement(line) for line in project["project"]["dependencies"] if Requirement(line).name == "mcp"]
    allowed = {
        f"{major}.{minor}" for major in (1, 2, 3) for minor in range(12) if f"{major}.{minor}.0" in pin.specifier
    }
    assert allowed == set(sdk_seam.TESTED_MINORS), (
        f"pyproject.toml pins mcp{pin.specifier}; tested: {sdk_seam.TESTED_MINORS}"
    )


async def test_context_streams_carry_the_senders_context() -> None:
    with touching("mcp.shared._context_streams"):
        send, receive = sdk_seam.create_context_streams[int](1)
        async with send, receive:
            await send.send(1)
            assert await receive.receive() == 1, "the item sent was not received"
            context = getattr(receive, "last_context", None)
        assert isinstance(context, contextvars.Context), "no last_context"
        assert isinstance(send, sdk_seam.ContextSendStream), type(send).__name__
        assert isinstance(receive, sdk_seam.ContextReceiveStream), type(receive).__name__


def test_the_stream_protocols_have_the_methods_the_transports_use() -> None:
    with touching("mcp.shared._stream_protocols"):
        for protocol, methods in (
            (sdk_seam.ReadStream, ("receive", "aclose")),
            (sdk_seam.WriteStream, ("send", "aclose")),
        ):
            for method in methods:
                assert hasattr(protocol, method), f"{protocol} lost {method}"


async def test_the_http_client_factory_builds_an_httpx_client_with_the_headers() -> None:
    with touching("mcp.shared._httpx_utils"):
        client = sdk_seam.create_http_client(headers={"X-Probe": "1"})
        async with client:
            assert isinstance(client, httpx2.AsyncClient), type(client).__name__
            assert client.headers.get("X-Probe") == "1", "headers not applied"


async def test_a_handlers_session_leads_to_its_connection_and_middleware_runs_around_handlers() -> None:
    seen: dict[str, Any] = {}

    async def list_prompts(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListPromptsResult:
        seen["connection"] = sdk_seam.connection_of(ctx.session)
        return types.ListPromptsResult(prompts=[])

    async def around(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        seen.setdefault("methods", []).append(ctx.method)
        return await call_next(ctx)

    with touching("Server.middleware (provisional)"):
        server: Server[Any] = Server("canary", on_list_prompts=list_prompts)
        sdk_seam.add_middleware(server, [around])
        with anyio.fail_after(DEADLINE):
            async with Client(wired(server), mode="legacy") as client:
                await client.list_prompts()
        assert "prompts/list" in seen.get("methods", []), "middleware was not called"
    connection = seen.get("connection")
    with touching("ServerSession._connection"):
        assert isinstance(connection, Connection), f"found {connection!r}"
    with touching("Connection.exit_stack"):
        assert hasattr(connection, "exit_stack"), "gone"
    with touching("Connection.initialize_accepted"):
        assert connection.initialize_accepted, "false after the handshake"


async def test_a_request_timeout_is_recognised_by_its_message() -> None:
    never = anyio.Event()

    async def get_prompt(ctx: ServerRequestContext[Any, Any], params: Any) -> types.GetPromptResult:
        await never.wait()
        raise AssertionError("unreachable")

    with touching(f"the request timeout message ({sdk_seam.TIMEOUT_TEXT!r} in a {types.REQUEST_TIMEOUT} error)"):
        server: Server[Any] = Server("canary", on_get_prompt=get_prompt, on_list_prompts=None)
        with anyio.fail_after(DEADLINE):
            async with Client(wired(server), mode="legacy", read_timeout_seconds=0.2) as client:
                with pytest.raises(MCPError) as raised:
                    await client.get_prompt("anything")
        assert sdk_seam.is_request_timeout(raised.value), repr(raised.value.error)


def test_pydantic_still_names_text_that_is_not_json_json_invalid() -> None:
    with touching(f"pydantic's {sdk_seam.JSON_INVALID!r} error type"):
        with pytest.raises(ValidationError) as not_json:
            types.jsonrpc_message_adapter.validate_json("{", by_name=False)
        with pytest.raises(ValidationError) as not_a_message:
            types.jsonrpc_message_adapter.validate_json("[1]", by_name=False)
        assert sdk_seam.is_json_invalid(not_json.value), str(not_json.value.errors()[0])
        assert not sdk_seam.is_json_invalid(not_a_message.value), str(not_a_message.value.errors()[0])


def test_the_deferred_packages_are_the_ones_serve_defers() -> None:
    with touching("the mcp / mcp.server package __init__"):
        assert lazy_packages.SDK_PACKAGE_INITS == sdk_seam.DEFERRED_PACKAGES


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


INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "canary", "version": "1"}},
}


async def post_initialize(app: StreamableHTTPASGIApp) -> dict[bytes, bytes]:
    """POST an `initialize` to `app` in process; the response's headers."""
    body = json.dumps(INITIALIZE).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    sent = anyio.Event()
    started: list[Message] = []

    async def receive() -> Message:
        if sent.is_set():
            await anyio.sleep_forever()
        sent.set()
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            started.append(message)

    with anyio.fail_after(DEADLINE):
        await app(scope, receive, send)
    assert started, "no response to initialize"
    return dict(started[0]["headers"])


async def test_the_session_manager_admits_each_new_session_through_its_hook_and_table() -> None:
    admitted: list[StreamableHTTPServerTransport | None] = []

    class Recording(StreamableHTTPSessionManager):
        def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
            transport = sdk_seam.admit_session(self, requestor)
            admitted.append(transport)
            return transport

    with touching("StreamableHTTPSessionManager._admit_session / _server_instances / _session_owners"):
        manager = Recording(
            app=Server("canary"),
            json_response=True,
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            session_idle_timeout=60,
        )
        async with manager.run():
            headers = await post_initialize(StreamableHTTPASGIApp(manager))
            session_id = headers.get(b"mcp-session-id", b"").decode()
            assert len(admitted) == 1, f"the hook ran {len(admitted)} times for one new session"
            transport = admitted[0]
            assert transport is not None and transport.mcp_session_id == session_id, (transport, session_id)
            sessions = sdk_seam.open_sessions(manager)
            assert sessions.get(session_id) is transport, f"the session table holds {sessions!r}"
            assert isinstance(sdk_seam.session_owners(manager), dict), "no owners table"
            assert sdk_seam.check_session_manager(manager), "the run-time check finds something missing"
            # The least recently used idle session is the one with the smallest finite idle deadline.
            assert transport.idle_scope is not None, "no idle_scope once the session serves"
            assert math.isfinite(transport.idle_scope.deadline), "an idle session has no idle deadline"


def test_a_moved_private_module_fails_the_import_naming_the_sdk_version_and_the_touchpoint() -> None:
    script = textwrap.dedent(
        """
        import mcp.server.lowlevel, mcp.server.session, mcp.shared._context_streams as streams
        del streams.create_context_streams  # as if a newer SDK had moved it
        try:
            import mcp_notebook.protocol.sdk_seam
        except ImportError as error:
            print(error)
        else:
            print("imported")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    said = result.stdout.strip()
    assert f"mcp {sdk_seam.sdk_version()}" in said, result.stdout + result.stderr
    assert "mcp.shared._context_streams" in said and "2.3" in said, said


def test_a_session_whose_connection_moved_is_an_error_in_the_log_not_silence(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sdk_seam, "_reported", set())
    session = object.__new__(ServerSession)  # a session as a newer SDK might build it: no `_connection`
    with caplog.at_level(logging.ERROR, logger=sdk_seam.__name__):
        assert sdk_seam.connection_of(session) is None
        assert sdk_seam.connection_of(session) is None
    errors = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
    assert len(errors) == 1, errors  # once, not on every request
    assert f"mcp {sdk_seam.sdk_version()}" in errors[0] and "ServerSession._connection" in errors[0]
    assert "list_changed notifications" in errors[0]


def test_a_session_manager_without_its_tables_is_an_error_in_the_log(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sdk_seam, "_reported", set())
    manager = StreamableHTTPSessionManager(app=Server("canary"))
    monkeypatch.delattr(manager, "_server_instances")  # as a newer SDK might name it
    with caplog.at_level(logging.ERROR, logger=sdk_seam.__name__):
        assert not sdk_seam.check_session_manager(manager)
    (error,) = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
    assert f"mcp {sdk_seam.sdk_version()}" in error and "_server_instances" in error and "not evicted" in error
