"""Every method, over stdio and over HTTP, in every revision, is answered by the one implementation (`Answers`).

The server's `Answers` is watched (each of its methods records the revision
it answered); the same requests are then sent over real OS pipes and over
real HTTP on 127.0.0.1, in each revision: handshake revisions after their
`initialize`, 2026-07-28 statelessly. Each request must have been answered
by the method of `Answers` that owns it, at the request's revision, and
nothing else.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from test_http_transport import serving
from test_stdio_transport import Pipes

from mcp_notebook.models import (
    EmbeddedResource,
    MessageTemplate,
    PromptArgument,
    PromptSpec,
    ResourceInfo,
    Skill,
    SkillFile,
    TextContent,
)
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports.stdio import serve_stdio

MODERN = "2026-07-28"
REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", MODERN)
ACCEPT = "application/json, text/event-stream"
URI = "notebook:///g.ipynb#cell=one"

# method -> (the `Answers` method that owns it, its params)
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "prompts/list": ("list_prompts", {}),
    "prompts/get": ("rendered_prompt", {"name": "greet", "arguments": {"who": "Ada"}}),
    "completion/complete": (
        "complete",
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "who", "value": "A"}},
    ),
    "resources/list": ("list_resources", {}),
    "resources/templates/list": ("list_resource_templates", {}),
    "resources/read": ("read_resource", {"uri": URI}),
    # The Skills extension's methods: one owner, whatever the transport and revision.
    "skills/list": ("list_skills", {}),
    "skills/get": ("answer_skills", {"uri": "skill://tidy/SKILL.md"}),
    "resources/directory/read": ("answer_skills", {"uri": "skill://tidy"}),
}
# Methods of one era only: `server/discover` is 2026-07-28's, `ping` the handshake revisions'.
MODERN_ONLY: dict[str, tuple[str, dict[str, Any]]] = {"server/discover": ("discover", {})}
HANDSHAKE_ONLY: dict[str, tuple[str, dict[str, Any]]] = {"ping": ("ping", {})}
LISTEN = {"notifications": {"promptsListChanged": True, "resourcesListChanged": True}}


def _methods(revision: str) -> dict[str, tuple[str, dict[str, Any]]]:
    return {**METHODS, **(MODERN_ONLY if revision == MODERN else HANDSHAKE_ONLY)}


SKILL_MD = b"---\nname: tidy\ndescription: Tidy a table.\n---\n\nTidy it.\n"
SKILL = Skill(
    "skill://tidy/SKILL.md",
    {"name": "tidy", "description": "Tidy a table."},
    (SkillFile("SKILL.md", "sha256:" + "0" * 64, len(SKILL_MD), "text/markdown"),),
    origin="tidy",
    contents={"SKILL.md": SKILL_MD},
)


class OneResource:
    def list_resources(self) -> Sequence[ResourceInfo]:
        return (ResourceInfo(uri=URI, name="one"),)

    def read_resource(self, uri: str) -> Sequence[EmbeddedResource]:
        return (EmbeddedResource(uri=uri, text="the cell"),)


def _watch(server: PromptServer, name: str, calls: list[tuple[str, str]]) -> None:
    """`server.answers.<name>`, recording (name, the revision it answered at) at each call."""
    original = getattr(server.answers, name)
    signature = inspect.signature(original)

    def record(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        bound = signature.bind(*args, **kwargs)
        calls.append((name, str(bound.arguments.get("revision", "any"))))

    if inspect.iscoroutinefunction(original):

        async def watched_async(*args: Any, **kwargs: Any) -> Any:
            record(args, kwargs)
            return await original(*args, **kwargs)

        setattr(server.answers, name, functools.wraps(original)(watched_async))
    else:

        def watched(*args: Any, **kwargs: Any) -> Any:
            record(args, kwargs)
            return original(*args, **kwargs)

        setattr(server.answers, name, functools.wraps(original)(watched))


def _server() -> tuple[PromptServer, list[tuple[str, str]]]:
    registry = PromptRegistry()
    spec = PromptSpec(
        name="greet",
        arguments=(PromptArgument("who", completions=("Ada", "Alan")),),
        messages=(MessageTemplate("user", TextContent("Hello {{who}}")),),
    )
    registry.set_group("g.ipynb", [spec])
    registry.set_skills([SKILL])
    server = create_server(registry, resources=OneResource(), skills=lambda skill, path: SKILL_MD)
    calls: list[tuple[str, str]] = []
    for name in dict.fromkeys(owner for owner, _ in (METHODS | MODERN_ONLY | HANDSHAKE_ONLY).values()):
        _watch(server, name, calls)
    _watch(server, "listen", calls)
    return server, calls


def _meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }


def _request(request_id: int, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
    if revision == MODERN:
        params = {**params, "_meta": _meta()}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _initialize(revision: str) -> dict[str, Any]:
    params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


@asynccontextmanager
async def _stdio(server: PromptServer) -> AsyncIterator[Pipes]:
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(in_read, "rb"), encoding="utf-8"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_write, "wb"), encoding="utf-8"))
    client_reads = anyio.wrap_file(io.TextIOWrapper(os.fdopen(out_read, "rb"), encoding="utf-8"))
    pipes = Pipes(in_write, client_reads)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: serve_stdio(server, stdin=stdin, stdout=stdout))
            try:
                yield pipes
            finally:
                pipes.close()
    finally:
        await stdin.aclose()
        await stdout.aclose()
        await client_reads.aclose()


async def _over_stdio(server: PromptServer, revision: str) -> dict[str, dict[str, Any]]:
    replies: dict[str, dict[str, Any]] = {}
    async with _stdio(server) as pipes:
        if revision != MODERN:
            pipes.send(_initialize(revision))
            assert "result" in await pipes.receive()
            pipes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for number, (method, (_, params)) in enumerate(_methods(revision).items(), start=1):
            pipes.send(_request(number, method, params, revision))
            replies[method] = await pipes.receive()
    return replies


def _reply_of(response: httpx2.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        messages = [json.loads(item) for item in data if item]
        reply: dict[str, Any] = next(message for message in messages if "id" in message)
        return reply
    answer: dict[str, Any] = response.json()
    return answer


async def _over_http(server: PromptServer, revision: str) -> dict[str, dict[str, Any]]:
    replies: dict[str, dict[str, Any]] = {}
    async with serving(server) as url, httpx2.AsyncClient(timeout=10) as http:
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        if revision != MODERN:
            opened = await http.post(url, content=json.dumps(_initialize(revision)), headers=headers)
            assert "result" in _reply_of(opened)
            headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
            headers["MCP-Protocol-Version"] = revision
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, content=json.dumps(note), headers=headers)
        for number, (method, (_, params)) in enumerate(_methods(revision).items(), start=1):
            sent = dict(headers)
            if revision == MODERN:
                sent |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
                if method in ("prompts/get", "resources/read"):
                    sent["Mcp-Name"] = params.get("name") or params["uri"]
            body = json.dumps(_request(number, method, params, revision))
            replies[method] = _reply_of(await http.post(url, content=body, headers=sent))
    return replies


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("revision", REVISIONS)
async def test_each_method_is_answered_by_its_one_implementation(transport: str, revision: str) -> None:
    server, calls = _server()
    replies = await (_over_stdio if transport == "stdio" else _over_http)(server, revision)
    for method, reply in replies.items():
        assert "result" in reply, (method, reply)
    assert replies["prompts/get"]["result"]["messages"][0]["content"]["text"] == "Hello Ada"
    assert replies["completion/complete"]["result"]["completion"]["values"] == ["Ada", "Alan"]
    assert replies["resources/read"]["result"]["contents"][0]["text"] == "the cell"
    assert [entry["uri"] for entry in replies["skills/list"]["result"]["skills"]] == ["skill://tidy/SKILL.md"]
    assert replies["skills/get"]["result"]["skill"]["frontmatter"]["name"] == "tidy"
    assert [r["name"] for r in replies["resources/directory/read"]["result"]["resources"]] == ["SKILL.md"]
    owners = [owner for owner, _ in _methods(revision).values()]
    assert [name for name, _ in calls] == owners
    for name, answered_at in calls:
        assert answered_at in (revision, "any"), (name, answered_at)


async def _listen_over_stdio(server: PromptServer) -> dict[str, Any]:
    async with _stdio(server) as pipes:
        pipes.send(_request(1, "subscriptions/listen", LISTEN, MODERN))
        return await pipes.receive()


async def _listen_over_http(server: PromptServer) -> dict[str, Any]:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": MODERN}
    headers["Mcp-Method"] = "subscriptions/listen"
    body = json.dumps(_request(1, "subscriptions/listen", LISTEN, MODERN))
    async with (
        serving(server) as url,
        httpx2.AsyncClient(timeout=10) as http,
        http.stream("POST", url, content=body, headers=headers) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith("data:") and line[5:].strip():
                first: dict[str, Any] = json.loads(line[5:])
                return first
    raise AssertionError("the listen stream ended before its acknowledgement")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_listen_stream_is_opened_by_its_one_implementation(transport: str) -> None:
    server, calls = _server()
    first = await (_listen_over_stdio if transport == "stdio" else _listen_over_http)(server)
    # The acknowledgement honours what this server announces: prompts and resources list changes.
    assert first["method"] == "notifications/subscriptions/acknowledged", first
    assert first["params"]["notifications"] == {"promptsListChanged": True, "resourcesListChanged": True}
    assert [name for name, _ in calls] == ["listen"]
