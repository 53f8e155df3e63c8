"""Importing mcp_notebook and starting each host leaves the SDK's and uvicorn's classes and functions as they were.

A fresh interpreter imports the SDK and uvicorn modules a server runs on,
notes every module-level name and every class attribute (by identity), then
imports mcp_notebook and starts each host in turn, each answering a request:
stdio over real pipes, `serve_http` on 127.0.0.1, the ASGI factory loaded by
uvicorn's own `Config.load`. Nothing the SDK or uvicorn defined may have
been replaced or added to.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import importlib, inspect, io, json, os, sys

    WATCHED = [
        "mcp", "mcp.server", "mcp.server.lowlevel", "mcp.server.lowlevel.server", "mcp.server.runner",
        "mcp.server.session", "mcp.server.connection", "mcp.server.context", "mcp.server.stdio",
        "mcp.server.streamable_http", "mcp.server.streamable_http_manager", "mcp.server._streamable_http_modern",
        "mcp.shared.inbound", "mcp.shared.exceptions", "mcp_types", "mcp_types.methods",
        "uvicorn", "uvicorn.config", "uvicorn.server", "uvicorn.main", "uvicorn.protocols.http.httptools_impl",
        "uvicorn.protocols.http.h11_impl", "uvicorn.supervisors.multiprocess", "uvicorn.lifespan.on",
        "uvicorn.middleware.proxy_headers",
    ]

    def snapshot():
        seen = {}
        for name in WATCHED:
            module = importlib.import_module(name)
            for attribute, value in list(vars(module).items()):
                seen[f"{name}.{attribute}"] = id(value)
                if inspect.isclass(value) and value.__module__ == name:
                    for member, inner in list(vars(value).items()):
                        seen[f"{name}.{attribute}.{member}"] = id(inner)
        return seen

    before = snapshot()

    import anyio
    import uvicorn

    from mcp_notebook.models import MessageTemplate, PromptSpec, TextContent
    from mcp_notebook.protocol.server import create_server
    from mcp_notebook.registry import PromptRegistry
    from mcp_notebook.transports.http import serve_http
    from mcp_notebook.transports.stdio import serve_stdio

    def registry():
        reg = PromptRegistry()
        reg.set_group("g.ipynb", [PromptSpec(name="hi", messages=(MessageTemplate("user", TextContent("Hi")),))])
        return reg

    META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    GET = {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "hi", "_meta": META}}

    async def over_stdio():
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(in_read, "rb"), encoding="utf-8"))
        stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_write, "wb"), encoding="utf-8"))
        replies = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_read, "rb"), encoding="utf-8"))
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: serve_stdio(create_server(registry()), stdin=stdin, stdout=stdout))
            os.write(in_write, (json.dumps(GET) + "\\n").encode())
            with anyio.fail_after(10):
                assert "result" in json.loads(await replies.readline())
            os.close(in_write)
        await replies.aclose()

    async def over_http():
        import httpx2
        ready, stop, urls = anyio.Event(), anyio.Event(), []
        async with anyio.create_task_group() as group:
            said = lambda url: (urls.append(url), ready.set())
            group.start_soon(lambda: serve_http(create_server(registry()), on_ready=said, shutdown=stop))
            with anyio.fail_after(10):
                await ready.wait()
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/get", "Mcp-Name": "hi"}
            async with httpx2.AsyncClient() as client:
                reply = await client.post(urls[0], content=json.dumps(GET), headers=headers)
            assert "result" in reply.json(), reply.text
            stop.set()

    anyio.run(over_stdio)
    anyio.run(over_http)
    os.environ["MCP_NOTEBOOK_PATHS"] = sys.argv[1]
    config = uvicorn.Config("mcp_notebook.asgi:create_app", factory=True, log_config=None)
    config.load()

    after = snapshot()
    changed = sorted(name for name in before if after.get(name) != before[name])
    added = sorted(name for name in after if name not in before and name.count(".") > 1
                   and not name.rsplit(".", 1)[1].startswith("__"))
    print(json.dumps({"changed": changed, "added": added}))
    """
)


def test_the_sdk_and_uvicorn_are_left_as_they_were(tmp_path: Path) -> None:
    (tmp_path / "served").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "served")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict == {"changed": [], "added": []}, verdict
