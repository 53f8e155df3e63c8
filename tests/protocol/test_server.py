"""The server's handlers, through the SDK's in-memory client, in both protocol eras."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, MCPError
from protocol_samples import RICH, FolderResources, simple_prompt

from mcp_notebook.exceptions import PathOutsideRootError
from mcp_notebook.models import EmbeddedResource, MessageTemplate, PromptSpec
from mcp_notebook.protocol.server import CachePolicy, PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

# In process, "legacy" runs the initialize handshake (2025-11-25) and "auto" discovers the 2026-07-28 server.
MODES = ["legacy", "auto"]


@pytest.fixture(params=MODES, ids=["handshake", "2026-07-28"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(registry: PromptRegistry) -> PromptServer:
    return create_server(registry, resources=FolderResources(), page_size=3)


async def error_of(call: object) -> types.ErrorData:
    with pytest.raises(MCPError) as caught:
        await call  # type: ignore[misc]
    return caught.value.error


async def all_prompt_names(client: Client) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await client.list_prompts(cursor=cursor)
        names += [prompt.name for prompt in page.prompts]
        if page.next_cursor is None:
            return names
        cursor = page.next_cursor


async def test_listing_pages_through_every_prompt(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        first = await client.list_prompts()
        assert len(first.prompts) == 3
        assert first.next_cursor is not None
        assert await all_prompt_names(client) == [*(f"p{i}" for i in range(7)), "rich"]


async def test_a_cursor_is_invalid_params_after_the_registry_changes(
    server: PromptServer, mode: str, registry: PromptRegistry
) -> None:
    async with Client(server, mode=mode) as client:
        cursor = (await client.list_prompts()).next_cursor
        registry.set_group("new.ipynb", [simple_prompt("fresh", origin="new.ipynb")])
        error = await error_of(client.list_prompts(cursor=cursor, cache_mode="bypass"))
        assert (error.code, error.message) == (-32602, "Invalid cursor")


async def test_a_tampered_cursor_is_invalid_params(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        cursor = (await client.list_prompts()).next_cursor
        assert cursor is not None
        error = await error_of(client.list_prompts(cursor=cursor[:-2] + "AA"))
        assert (error.code, error.message) == (-32602, "Invalid cursor")


async def test_the_page_size_is_configurable(registry: PromptRegistry, mode: str) -> None:
    async with Client(create_server(registry, page_size=5), mode=mode) as client:
        assert len((await client.list_prompts()).prompts) == 5


async def test_getting_a_prompt_fills_in_its_arguments(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.get_prompt("p2", {"who": "Ada"})
        assert result.description == "The prompt called p2"
        assert [(m.role, m.content) for m in result.messages] == [
            ("user", types.TextContent(text="p2 says hello to Ada"))
        ]


async def test_an_absent_optional_argument_renders_as_its_default(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.get_prompt("rich", {"topic": "tides"})
        first = result.messages[0].content
        assert isinstance(first, types.TextContent)
        assert first.text == "Talk about tides, short."


async def test_an_unknown_prompt_is_invalid_params_with_suggestions(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.get_prompt("ricj", {}))
        assert error.code == -32602
        assert error.message == "Unknown prompt: ricj; did you mean rich?"
        assert error.data == {"name": "ricj", "suggestions": ["rich"]}


async def test_a_missing_required_argument_is_invalid_params(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.get_prompt("rich", {"style": "long"}))
        assert error.code == -32602
        assert "topic" in error.message
        assert error.data == {"prompt": "rich", "missing": ["topic"]}


async def test_an_unknown_argument_is_invalid_params(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.get_prompt("p1", {"who": "x", "whom": "y"}))
        assert error.code == -32602
        assert error.data == {"prompt": "p1", "unknown": ["whom"], "expected": ["who"]}


async def test_a_huge_argument_is_invalid_params(registry: PromptRegistry, mode: str) -> None:
    async with Client(create_server(registry, max_argument_bytes=1000), mode=mode) as client:
        error = await error_of(client.get_prompt("p1", {"who": "x" * 1001}))
        assert error.code == -32602
        assert error.data == {"prompt": "p1", "argument": "who", "size": 1001, "limit": 1000}
        assert (await client.get_prompt("p1", {"who": "x" * 1000})).messages


async def test_completion_offers_the_values_that_start_with_the_prefix(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.complete(types.PromptReference(name="rich"), {"name": "style", "value": "S"})
        assert result.completion.values == ["short", "Shakespearean"]
        assert result.completion.total == 2
        assert result.completion.has_more is False


async def test_completion_accepts_the_arguments_already_chosen(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        result = await client.complete(
            types.PromptReference(name="rich"), {"name": "style", "value": "l"}, context_arguments={"topic": "tides"}
        )
        assert result.completion.values == ["long"]


async def test_completion_for_an_unknown_prompt_is_invalid_params(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.complete(types.PromptReference(name="nope"), {"name": "a", "value": ""}))
        assert error.code == -32602
        assert error.data["name"] == "nope"


async def test_completion_for_a_resource_offers_nothing(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        ref = types.ResourceTemplateReference(uri="notebook://{path}")
        result = await client.complete(ref, {"name": "path", "value": "a"})
        assert result.completion.values == []


async def test_resources_are_listed_and_read(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        listed = await client.list_resources()
        assert [r.uri for r in listed.resources] == ["notebook://rich.ipynb#cell=1", "notebook://rich.ipynb#cell=2"]
        text = (await client.read_resource("notebook://rich.ipynb#cell=1")).contents
        assert text == [
            types.TextResourceContents(
                uri="notebook://rich.ipynb#cell=1",
                mime_type="text/markdown",
                text="# Hello",
                _meta={"org.example.nbprompts/cell": 1},
            )
        ]
        blob = (await client.read_resource("notebook://rich.ipynb#cell=2")).contents[0]
        assert isinstance(blob, types.BlobResourceContents)


async def test_resource_templates_are_an_empty_list_rather_than_an_unknown_method(
    server: PromptServer, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        listed = await client.list_resource_templates()
        assert listed.resource_templates == []
        assert listed.next_cursor is None


async def test_an_unknown_resource_is_not_found_in_the_clients_era(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.read_resource("notebook://nope"))
        assert error.code == (-32002 if mode == "legacy" else -32602)
        assert error.message == "Resource not found: notebook://nope"
        assert error.data == {"uri": "notebook://nope"}


async def test_a_resource_outside_the_root_is_refused_as_invalid_params(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.read_resource("file:///etc/passwd"))
        assert error.code == -32602
        assert "outside the served folder" in error.message


async def test_a_failing_handler_is_an_internal_error_and_the_server_keeps_serving(
    server: PromptServer, mode: str
) -> None:
    async with Client(server, mode=mode) as client:
        error = await error_of(client.read_resource("notebook://crash"))
        assert error.code == -32603
        assert "the provider broke" not in error.message  # internals stay in the server log
        assert (await client.get_prompt("p0", {"who": "still here"})).messages


async def test_a_prompt_that_embeds_a_file_reads_it_through_read_file(mode: str, tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")

    def read_file(spec: PromptSpec, path: str) -> bytes:
        if path.startswith(".."):
            raise PathOutsideRootError(path, str(tmp_path))
        return (tmp_path / path).read_bytes()

    template = MessageTemplate("user", EmbeddedResource("file:///data/{{name}}", "text/csv"), path="{{name}}")
    spec = PromptSpec(name="embed", arguments=(RICH.arguments[0],), messages=(template,))
    spec = replace(spec, arguments=(replace(RICH.arguments[0], name="name"),))
    registry = PromptRegistry()
    registry.set_group("e.ipynb", [spec])
    async with Client(create_server(registry, read_file=read_file), mode=mode) as client:
        content = (await client.get_prompt("embed", {"name": "data.csv"})).messages[0].content
        assert isinstance(content, types.EmbeddedResource)
        assert content.resource == types.TextResourceContents(
            uri="file:///data/data.csv", mime_type="text/csv", text="a,b\n1,2\n"
        )
        error = await error_of(client.get_prompt("embed", {"name": "../secret"}))
        assert error.code == -32602
        assert "outside the served folder" in error.message


async def test_both_eras_advertise_prompt_list_changes_and_completions(server: PromptServer, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None
        assert capabilities.prompts == types.PromptsCapability(list_changed=True)
        assert capabilities.completions is not None
        assert capabilities.resources is not None and capabilities.resources.list_changed is True


async def test_a_server_without_resources_does_not_offer_them(registry: PromptRegistry, mode: str) -> None:
    async with Client(create_server(registry), mode=mode) as client:
        assert client.server_capabilities is not None
        assert client.server_capabilities.resources is None
        error = await error_of(client.list_resources())
        assert error.code == -32601


async def test_lists_carry_the_configured_cache_hints_at_2026_07_28(registry: PromptRegistry) -> None:
    server = create_server(registry, resources=FolderResources(), cache=CachePolicy(ttl_ms=1234, scope="private"))
    async with Client(server, mode="auto") as client:
        prompts = await client.list_prompts()
        resources = await client.list_resources()
    assert (prompts.ttl_ms, prompts.cache_scope) == (1234, "private")
    assert (resources.ttl_ms, resources.cache_scope) == (1234, "private")


async def test_a_broken_prompt_is_an_internal_error_not_a_crash(mode: str) -> None:
    registry = PromptRegistry()
    # An embedded file with no file reader configured: the notebook is wrong, not the client.
    template = MessageTemplate("user", EmbeddedResource("file:///x", "text/plain"), path="x.txt")
    registry.set_group("b.ipynb", [PromptSpec(name="broken", messages=(template,)), simple_prompt("fine")])
    async with Client(create_server(registry), mode=mode) as client:
        error = await error_of(client.get_prompt("broken", {}))
        assert error.code == -32603
        assert "no files are served" in error.message
        assert (await client.get_prompt("fine", {"who": "x"})).messages
