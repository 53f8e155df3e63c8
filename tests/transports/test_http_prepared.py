"""Over real HTTP, `prompts/list` pages are the SDK path's JSON.

The same registry is served twice on 127.0.0.1 (uvicorn, the whole access
gate): as `create_server` builds it, and with the prepared listing taken
out, so every page is validated, shaped and serialized by the SDK. Every
page of every revision, as JSON responses and as SSE events, with and
without handshake sessions, must parse to the same objects.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import anyio
import httpx2
import pytest
from test_http_transport import serving

from mcp_notebook.models import MessageTemplate, PromptArgument, PromptSpec, TextContent
from mcp_notebook.protocol.listing import PreparedListing
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

DEADLINE = 10.0
PAGE_SIZE = 3
MODERN = "2026-07-28"
HANDSHAKE = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ACCEPT = "application/json, text/event-stream"


def simple_prompt(name: str) -> PromptSpec:
    return PromptSpec(
        name=name,
        title=f"Title of {name}",
        arguments=(PromptArgument("who", description="who to greet"),),
        messages=(MessageTemplate("user", TextContent("Hello {{who}}")),),
    )


def _registry() -> PromptRegistry:
    registry = PromptRegistry()
    registry.set_group("many.ipynb", [simple_prompt(f"p{i:02}") for i in range(11)])
    return registry


def _sdk_path(server: PromptServer) -> PromptServer:
    server.middleware = [m for m in server.middleware if not isinstance(m, PreparedListing)]
    return server


class HttpWire:
    """One client of one server: the handshake (or none, in 2026-07-28), then requests, each reply parsed."""

    def __init__(self, client: httpx2.AsyncClient, url: str, revision: str) -> None:
        self.client, self.url, self.revision = client, url, revision
        self.session: str | None = None
        self.kinds: set[str] = set()  # the content types replies came as
        self._ids = itertools.count(1)

    def _headers(self, method: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if self.revision not in ("2024-11-05", "2025-03-26") and method != "initialize":
            headers["MCP-Protocol-Version"] = self.revision
        if self.revision == MODERN:
            headers["Mcp-Method"] = method
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
        return headers

    async def post(self, message: dict[str, Any]) -> httpx2.Response:
        with anyio.fail_after(DEADLINE):
            return await self.client.post(
                self.url, content=json.dumps(message), headers=self._headers(message["method"])
            )

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self._ids)
        params = dict(params or {})
        if self.revision == MODERN:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        response = await self.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert response.status_code == 200, response.text
        kind = response.headers["content-type"].split(";")[0]
        self.kinds.add(kind)
        if kind == "application/json":
            replies = [response.json()]
        else:
            assert kind == "text/event-stream", kind
            data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
            replies = [json.loads(text) for text in data if text]  # 2025-11-25 streams begin with an empty event
        (reply,) = [reply for reply in replies if reply.get("id") == request_id]
        return dict(reply)

    async def start(self) -> None:
        if self.revision == MODERN:
            return
        params = {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        response = await self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert response.status_code == 200, response.text
        self.session = response.headers.get("mcp-session-id")
        done = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert done.status_code == 202, done.text

    async def pages(self) -> list[dict[str, Any]]:
        replies: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            reply = await self.request("prompts/list", {"cursor": cursor} if cursor is not None else {})
            replies.append(reply)
            cursor = reply["result"].get("nextCursor")
            if cursor is None:
                return replies


@pytest.mark.parametrize("stateless", [False, True], ids=["sessions", "stateless"])
@pytest.mark.parametrize("revision", [*HANDSHAKE, MODERN])
async def test_every_page_over_http_is_the_json_the_sdk_path_writes(revision: str, stateless: bool) -> None:
    if stateless and revision != MODERN and revision < "2025-03-26":
        pytest.skip("a stateless server serves handshake clients of 2025-03-26 and later")
    registry = _registry()
    ours = create_server(registry, page_size=PAGE_SIZE)
    plain = _sdk_path(create_server(registry, page_size=PAGE_SIZE))
    async with (
        serving(ours, stateless=stateless) as fast_url,
        serving(plain, stateless=stateless) as slow_url,
        httpx2.AsyncClient() as client,
    ):
        fast, slow = HttpWire(client, fast_url, revision), HttpWire(client, slow_url, revision)
        await fast.start()
        await slow.start()
        for _ in range(2):  # built, then from the cache
            fast_pages, slow_pages = await fast.pages(), await slow.pages()
            assert fast_pages == slow_pages
        assert len(fast_pages) == 4
        assert [entry["name"] for page in fast_pages for entry in page["result"]["prompts"]] == [
            f"p{i:02}" for i in range(11)
        ]
        assert fast.kinds == slow.kinds
