"""Over real HTTP, the direct lane answers plain 2026-07-28 requests exactly as the SDK's path does.

The same registry is served twice on 127.0.0.1 (uvicorn, the whole access
gate): as `create_server` builds it, whose gate answers plain stateless
`prompts/get`, `prompts/list` and `completion/complete` requests itself
(`transports.direct_http`, `protocol.direct`), and with `direct=False`, so
every request goes through the SDK's Streamable HTTP transport and its
request path. Each request below goes to both: the status, the content type
and the parsed body must be the same, and the plain ones must have been
answered by the lane (the others declined by it, and answered by the SDK).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest
from test_http_transport import serving

from mcp_notebook.models import (
    Annotations,
    EmbeddedResource,
    ImageContent,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    ResourceLink,
    TextContent,
)
from mcp_notebook.protocol.direct import DirectAnswers
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

DEADLINE = 10.0
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
PAGE_SIZE = 3
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
VERSION = "io.modelcontextprotocol/protocolVersion"


def _registry() -> PromptRegistry:
    greet = PromptSpec(
        name="greet",
        title="Greet someone",
        description="Say hello",
        arguments=(
            PromptArgument("who", description="who to greet", completions=("world", "wide", "team")),
            PromptArgument("style", required=False, default="short", completions=("short", "long")),
        ),
        messages=(
            MessageTemplate("user", TextContent("Hello {{who}} ({{style}})")),
            MessageTemplate(
                "assistant",
                TextContent("Hi {{who}}!", annotations=Annotations(audience=("user",), priority=0.5)),
            ),
        ),
    )
    pictured = PromptSpec(
        name="pictured",
        description="A picture and a file",
        meta={"org.example.nbprompts/notebook": "a.ipynb"},
        messages=(
            MessageTemplate("user", ImageContent("iVBORw0KGgo=", "image/png")),
            MessageTemplate("user", EmbeddedResource("file:///a.txt", mime_type="text/plain", text="data")),
            MessageTemplate("user", ResourceLink("file:///a.ipynb", "a.ipynb", title="A", size=12)),
        ),
    )
    asking = PromptSpec(
        name="asking",
        arguments=(PromptArgument("topic", ask="Which topic?"),),
        messages=(MessageTemplate("user", TextContent("About {{topic}}")),),
    )
    registry = PromptRegistry()
    registry.set_group("a.ipynb", [greet, pictured, asking])
    registry.set_group("many.ipynb", [PromptSpec(name=f"p{i:02}") for i in range(8)])
    return registry


def _meta(**extra: Any) -> dict[str, Any]:
    return {VERSION: MODERN, CAPABILITIES: {}, **extra}


@dataclass
class Case:
    """One request: its method and params, header changes (None removes one), and whether the lane answers it."""

    name: str
    method: str
    params: dict[str, Any]
    direct: bool
    headers: Mapping[str, str | None] = field(default_factory=dict)
    repeated: tuple[tuple[str, str], ...] = ()  # headers sent a second time
    request_id: int | str | None = None


def _get(name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "_meta": _meta(**meta)}
    if arguments is not None:
        params["arguments"] = arguments
    return params


def _complete(argument: str, value: str, prompt: str = "greet", **more: Any) -> dict[str, Any]:
    ref = {"type": "ref/prompt", "name": prompt}
    return {"ref": ref, "argument": {"name": argument, "value": value}, "_meta": _meta(), **more}


CASES = [
    # Answered by the lane.
    Case("get all arguments", "prompts/get", _get("greet", {"who": "Ada", "style": "long"}), True),
    Case("get with a default", "prompts/get", _get("greet", {"who": "Ada"}), True),
    Case("get images, files and metadata", "prompts/get", _get("pictured"), True),
    Case(
        "get with client info",
        "prompts/get",
        _get("greet", {"who": "x"}, **{"io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}),
        True,
    ),
    Case(
        "get, a client that can answer questions",
        "prompts/get",
        _get("greet", {"who": "x"}, **{CAPABILITIES: {"elicitation": {}}}),
        True,
    ),
    Case("get, a string id", "prompts/get", _get("greet", {"who": "x"}), True, request_id="req-7"),
    Case("get, Accept */*", "prompts/get", _get("greet", {"who": "x"}), True, {"Accept": "*/*"}),
    Case(
        "get, Accept wildcards",
        "prompts/get",
        _get("greet", {"who": "x"}),
        True,
        {"Accept": "application/*;q=0.9, text/*"},
    ),
    Case(
        "get, a long Accept",  # judged afresh rather than remembered, the same way
        "prompts/get",
        _get("greet", {"who": "x"}),
        True,
        {"Accept": "application/json, " + "application/x-other;q=0.1, " * 20 + "text/event-stream"},
    ),
    Case(
        "get, a charset",
        "prompts/get",
        _get("greet", {"who": "x"}),
        True,
        {"Content-Type": "application/json; charset=utf-8"},
    ),
    Case("list, first page", "prompts/list", {"_meta": _meta()}, True),
    Case("complete", "completion/complete", _complete("who", "w"), True),
    Case("complete, nothing matches", "completion/complete", _complete("style", "zz"), True),
    Case(
        "complete, with context",
        "completion/complete",
        _complete("style", "", context={"arguments": {"who": "Ada"}}),
        True,
    ),
    Case("complete, an unknown argument", "completion/complete", _complete("nope", ""), True),
    # Declined by the lane, answered by the SDK's path.
    Case("get, unknown prompt", "prompts/get", _get("nope"), False),
    Case("get, missing argument", "prompts/get", _get("greet", {}), False),
    Case("get, unknown argument", "prompts/get", _get("greet", {"who": "x", "extra": "y"}), False),
    Case("get, argument not a string", "prompts/get", _get("greet", {"who": 5}), False),
    Case("get, name not a string", "prompts/get", {"name": 5, "_meta": _meta()}, False, {"Mcp-Name": "5"}),
    Case("get, a question to ask", "prompts/get", _get("asking", {}, **{CAPABILITIES: {"elicitation": {}}}), False),
    Case("get, progress asked for", "prompts/get", _get("greet", {"who": "x"}, progressToken="t1"), False),
    Case(
        "get, a log level",
        "prompts/get",
        _get("greet", {"who": "x"}, **{"io.modelcontextprotocol/logLevel": "debug"}),
        False,
    ),
    Case("get, answers to questions", "prompts/get", {**_get("greet", {"who": "x"}), "inputResponses": {}}, False),
    Case("get, Mcp-Name disagrees", "prompts/get", _get("greet", {"who": "x"}), False, {"Mcp-Name": "other"}),
    Case("get, Mcp-Name missing", "prompts/get", _get("greet", {"who": "x"}), False, {"Mcp-Name": None}),
    Case(
        "get, Mcp-Method twice",
        "prompts/get",
        _get("greet", {"who": "x"}),
        False,
        repeated=(("Mcp-Method", "prompts/get"),),
    ),
    Case(
        "get, no capabilities",
        "prompts/get",
        {"name": "greet", "arguments": {"who": "x"}, "_meta": {VERSION: MODERN}},
        False,
    ),
    Case("get, Accept JSON only", "prompts/get", _get("greet", {"who": "x"}), False, {"Accept": "application/json"}),
    Case(
        "get, a long Accept without SSE",
        "prompts/get",
        _get("greet", {"who": "x"}),
        False,
        {"Accept": "application/json" + ", application/x-other;q=0.1" * 20},
    ),
    Case(  # the same value as a request the lane took: what was remembered for it is that value's verdict
        "get, Accept wildcards again, then SSE only",
        "prompts/get",
        _get("greet", {"who": "x"}),
        False,
        {"Accept": "text/*"},
    ),
    Case("get, not JSON", "prompts/get", _get("greet", {"who": "x"}), False, {"Content-Type": "text/plain"}),
    Case("list, a bad cursor", "prompts/list", {"cursor": "not-ours", "_meta": _meta()}, False),
    Case("list, cursor not a string", "prompts/list", {"cursor": 3, "_meta": _meta()}, False),
    Case(
        "complete, a resource",
        "completion/complete",
        {**_complete("x", ""), "ref": {"type": "ref/resource", "uri": "file:///a"}},
        False,
    ),
    Case("complete, unknown prompt", "completion/complete", _complete("who", "", prompt="nope"), False),
    Case(
        "complete, no value",
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who"}, "_meta": _meta()},
        False,
    ),
]


class Wire:
    """Posts one case to one server; the reply as (status, content type, parsed body or its text)."""

    def __init__(self, client: httpx2.AsyncClient, url: str) -> None:
        self.client, self.url = client, url
        self._ids = itertools.count(1)

    async def send(self, case: Case, params: dict[str, Any] | None = None) -> tuple[int, str, Any]:
        params = case.params if params is None else params
        request_id = case.request_id if case.request_id is not None else next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": case.method, "params": params}
        headers = {
            "Content-Type": "application/json",
            "Accept": ACCEPT,
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": case.method,
        }
        if case.method == "prompts/get" and isinstance(params.get("name"), str):
            headers["Mcp-Name"] = params["name"]
        for key, value in case.headers.items():
            headers.pop(key, None)
            if value is not None:
                headers[key] = value
        sent = [*headers.items(), *case.repeated]
        with anyio.fail_after(DEADLINE):
            response = await self.client.post(self.url, json=message, headers=sent)
        kind = response.headers.get("content-type", "").split(";")[0]
        body: Any = response.json() if kind == "application/json" else response.text
        return response.status_code, kind, body


class Spy:
    """Records what a server's direct answers said: None (declined) or a result, per call."""

    def __init__(self, answers: DirectAnswers) -> None:
        self.calls: list[bool] = []
        real = answers.answer

        def answer(method: str, params: Mapping[str, Any], revision: str) -> dict[str, Any] | None:
            result = real(method, params, revision)
            self.calls.append(result is not None)
            return result

        answers.answer = answer  # type: ignore[method-assign]


@asynccontextmanager
async def two_servers() -> AsyncIterator[tuple[Wire, Wire, Spy, PromptServer]]:
    registry = _registry()
    ours = create_server(registry, page_size=PAGE_SIZE)
    sdk = create_server(registry, page_size=PAGE_SIZE, direct=False)
    assert ours.direct is not None and sdk.direct is None
    spy = Spy(ours.direct)
    async with (
        serving(ours, stateless=True) as ours_url,
        serving(sdk, stateless=True) as sdk_url,
        httpx2.AsyncClient() as client,
    ):
        yield Wire(client, ours_url), Wire(client, sdk_url), spy, ours


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
async def test_each_request_gets_the_answer_the_sdk_path_gives(case: Case) -> None:
    async with two_servers() as (ours, sdk, spy, _):
        for _ in range(2):  # the first answer, then one from what the first built
            assert await ours.send(case) == await sdk.send(case)
        answered = await ours.send(case)
    assert spy.calls == ([True] * 3 if case.direct else [False] * len(spy.calls))
    if case.direct:
        assert answered[:2] == (200, "application/json")
        assert answered[2]["result"]["resultType"] == "complete"
        assert answered[2]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-notebook"


async def test_every_page_by_its_cursor_is_the_sdk_paths_page() -> None:
    case = Case("list", "prompts/list", {}, True)
    async with two_servers() as (ours, sdk, spy, server):
        pages: list[Any] = []
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"_meta": _meta()} | ({"cursor": cursor} if cursor is not None else {})
            mine, theirs = await ours.send(case, params), await sdk.send(case, params)
            assert mine == theirs
            pages.append(mine[2]["result"])
            cursor = mine[2]["result"].get("nextCursor")
            if cursor is None:
                break
        assert server._prompt_pages._bodies  # the pages went out as their prepared bytes
    assert len(pages) == 4 and all(spy.calls)
    assert [p["name"] for page in pages for p in page["prompts"]][:4] == ["greet", "pictured", "asking", "p00"]


async def test_a_change_is_answered_at_once() -> None:
    case = Case("get", "prompts/get", _get("greet", {"who": "Ada"}), True, request_id=1)
    async with two_servers() as (ours, sdk, _, server):
        before = await ours.send(case)
        server.registry.set_group(
            "a.ipynb",
            [
                PromptSpec(
                    name="greet",
                    arguments=(PromptArgument("who"),),
                    messages=(MessageTemplate("user", TextContent("Bye {{who}}")),),
                )
            ],
        )
        after = await ours.send(case)
        assert after == await sdk.send(case)
    assert before[2]["result"]["messages"][0]["content"]["text"] == "Hello Ada (short)"
    assert after[2]["result"]["messages"][0]["content"]["text"] == "Bye Ada"
