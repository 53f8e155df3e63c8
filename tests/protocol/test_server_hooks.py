"""The server's `render` and `complete` hooks: a host renders and completes what it owns, the server the rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.context import ClientRequestContext

from mcp_notebook.exceptions import PromptExecutionError
from mcp_notebook.models import (
    CompletionResult,
    MessageTemplate,
    PromptArgument,
    PromptMessage,
    PromptSpec,
    RenderedPrompt,
    TextContent,
)
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

# In process, "legacy" runs the initialize handshake (2025-11-25) and "auto" discovers the 2026-07-28 server.
MODES = ["legacy", "auto"]

TEMPLATE = PromptSpec(
    name="template",
    arguments=(PromptArgument("lang", completions=("Python", "Rust")),),
    messages=(MessageTemplate("user", TextContent("Write {{lang}}.")),),
)
OWNED = PromptSpec(
    name="owned",
    arguments=(
        PromptArgument("target", ask="What should run?"),
        PromptArgument("lang", required=False, completions=("Python", "Perl")),
    ),
    messages=(MessageTemplate("user", TextContent("never rendered from here: {{target}}")),),
)
FAILING = PromptSpec(name="failing")


class Host:
    """The hooks of a host that owns `owned` and `failing` and completes `owned`'s `target`; records each call."""

    def __init__(self) -> None:
        self.renders: list[tuple[str, dict[str, str]]] = []
        self.completions: list[tuple[str, str, str, dict[str, str]]] = []

    async def render(self, spec: PromptSpec, arguments: Mapping[str, str]) -> RenderedPrompt | None:
        self.renders.append((spec.name, dict(arguments)))
        if spec.name == "failing":
            raise PromptExecutionError("failing", "the host could not render it")
        if spec.name != "owned":
            return None
        text = f"the host ran {arguments['target']}"
        return RenderedPrompt(messages=(PromptMessage("user", TextContent(text)),), name=spec.name)

    async def complete(
        self, spec: PromptSpec, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult | None:
        self.completions.append((spec.name, argument, value, dict(context)))
        if (spec.name, argument) != ("owned", "target"):
            return None
        names = [name for name in ("alpha", "alps", "beta") if name.startswith(value)]
        return CompletionResult(values=tuple(names), total=len(names) + 10, has_more=True)


@pytest.fixture(params=MODES, ids=["handshake", "2026-07-28"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host() -> Host:
    return Host()


@pytest.fixture
def server(host: Host) -> PromptServer:
    registry = PromptRegistry()
    registry.set_group("host", [TEMPLATE, OWNED, FAILING])
    return create_server(registry, render=host.render, complete=host.complete)


def text_of(result: types.GetPromptResult) -> str:
    content = result.messages[0].content
    assert isinstance(content, types.TextContent)
    return content.text


async def test_the_render_hook_renders_the_prompts_it_owns(server: PromptServer, host: Host, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.get_prompt("owned", {"target": "tests"})
    assert text_of(result) == "the host ran tests"
    assert host.renders == [("owned", {"target": "tests"})]


async def test_a_prompt_the_render_hook_leaves_is_rendered_from_its_templates(
    server: PromptServer, host: Host, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.get_prompt("template", {"lang": "Rust"})
    assert text_of(result) == "Write Rust."
    assert host.renders == [("template", {"lang": "Rust"})]


async def test_an_error_of_the_render_hook_reaches_the_client_as_a_json_rpc_error(
    server: PromptServer, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("failing", {})
    assert caught.value.error.code == -32603
    assert "the host could not render it" in caught.value.error.message


async def test_an_unknown_prompt_never_reaches_the_hooks(server: PromptServer, host: Host, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("owend", {})
        with pytest.raises(MCPError):
            await client.complete(types.PromptReference(type="ref/prompt", name="owend"), {"name": "x", "value": ""})
    assert caught.value.error.code == -32602
    assert (host.renders, host.completions) == ([], [])


async def test_the_render_hook_gets_the_answers_the_user_gave_when_asked(
    server: PromptServer, host: Host, mode: str
) -> None:
    async def answer(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"target": "the linter"})

    async with Client(server, mode=mode, elicitation_callback=answer) as client:
        result = await client.get_prompt("owned", {})
    assert text_of(result) == "the host ran the linter"
    assert host.renders == [("owned", {"target": "the linter"})]


async def test_the_complete_hook_answers_for_the_arguments_it_knows_with_the_context(
    server: PromptServer, host: Host, mode: str
) -> None:
    ref = types.PromptReference(type="ref/prompt", name="owned")
    async with Client(server, mode=mode) as client:
        result = await client.complete(ref, {"name": "target", "value": "al"}, context_arguments={"lang": "Perl"})
    assert (result.completion.values, result.completion.total, result.completion.has_more) == (
        ["alpha", "alps"],
        12,
        True,
    )
    assert host.completions == [("owned", "target", "al", {"lang": "Perl"})]


async def test_arguments_the_complete_hook_leaves_get_their_static_completions(
    server: PromptServer, host: Host, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        owned = await client.complete(
            types.PromptReference(type="ref/prompt", name="owned"), {"name": "lang", "value": "p"}
        )
        template = await client.complete(
            types.PromptReference(type="ref/prompt", name="template"), {"name": "lang", "value": ""}
        )
    assert owned.completion.values == ["Python", "Perl"]
    assert template.completion.values == ["Python", "Rust"]
    assert host.completions == [("owned", "lang", "p", {}), ("template", "lang", "", {})]


async def test_without_hooks_the_server_renders_and_completes_every_prompt_itself(mode: str) -> None:
    registry = PromptRegistry()
    registry.set_group("host", [TEMPLATE])
    arguments: dict[str, Any] = {"name": "lang", "value": "r"}
    async with Client(create_server(registry), mode=mode) as client:
        rendered = await client.get_prompt("template", {"lang": "Python"})
        completed = await client.complete(types.PromptReference(type="ref/prompt", name="template"), arguments)
    assert text_of(rendered) == "Write Python."
    assert completed.completion.values == ["Rust"]
