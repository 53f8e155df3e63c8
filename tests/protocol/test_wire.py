"""What each protocol revision really gets on the wire (raw JSON, as stdio writes it)."""

from __future__ import annotations

from typing import Any

import pytest
from protocol_samples import FolderResources
from wire_harness import ALL_REVISIONS, HANDSHAKE_REVISIONS, MODERN, RawWire

from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

CACHE_KEYS = {"ttlMs", "cacheScope", "resultType"}


@pytest.fixture
def server(registry: PromptRegistry) -> PromptServer:
    return create_server(registry, resources=FolderResources(), page_size=3)


def rich_prompt(result: dict[str, Any]) -> dict[str, Any]:
    return next(prompt for prompt in result["prompts"] if prompt["name"] == "rich")


async def list_to_the_end(wire: RawWire) -> list[dict[str, Any]]:
    prompts: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    while True:
        result = (await wire.request("prompts/list", params))["result"]
        prompts += result["prompts"]
        if "nextCursor" not in result:
            return prompts
        params = {"cursor": result["nextCursor"]}


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_initialize_echoes_the_revision_and_advertises_list_changed(server: PromptServer, revision: str) -> None:
    async with RawWire(server, revision) as wire:
        result = wire.initialize_result["result"]
    assert result["protocolVersion"] == revision
    assert result["capabilities"]["prompts"] == {"listChanged": True}
    assert result["capabilities"]["resources"]["listChanged"] is True
    assert result["serverInfo"]["name"] == "mcp-notebook"
    # The completions capability exists since 2025-03-26; the method is served in every revision.
    assert ("completions" in result["capabilities"]) == (revision != "2024-11-05")


@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_listing_walks_every_page_in_every_revision(server: PromptServer, revision: str) -> None:
    async with RawWire(server, revision) as wire:
        prompts = await list_to_the_end(wire)
    assert [prompt["name"] for prompt in prompts] == [*(f"p{i}" for i in range(7)), "rich"]


@pytest.mark.parametrize(
    ("revision", "expected_keys"),
    [
        ("2024-11-05", {"name", "description", "arguments"}),
        ("2025-03-26", {"name", "description", "arguments"}),
        ("2025-06-18", {"name", "title", "description", "arguments", "_meta"}),
        ("2025-11-25", {"name", "title", "description", "arguments", "_meta", "icons"}),
        (MODERN, {"name", "title", "description", "arguments", "_meta", "icons"}),
    ],
)
async def test_a_listed_prompt_has_exactly_the_fields_of_its_revision(
    server: PromptServer, revision: str, expected_keys: set[str]
) -> None:
    async with RawWire(server, revision) as wire:
        prompts = await list_to_the_end(wire)
    rich = next(prompt for prompt in prompts if prompt["name"] == "rich")
    assert set(rich) == expected_keys
    argument_keys = {"name", "description", "required"} | ({"title"} if "title" in expected_keys else set())
    assert set(rich["arguments"][0]) == argument_keys


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_handshake_results_carry_no_cache_hints_or_result_type(server: PromptServer, revision: str) -> None:
    async with RawWire(server, revision) as wire:
        results = [
            (await wire.request("prompts/list"))["result"],
            (await wire.request("prompts/get", {"name": "p0", "arguments": {"who": "x"}}))["result"],
            (await wire.request("resources/list"))["result"],
            (await wire.request("resources/read", {"uri": "notebook://rich.ipynb#cell=1"}))["result"],
            (
                await wire.request(
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "rich"}, "argument": {"name": "style", "value": ""}},
                )
            )["result"],
        ]
    for result in results:
        assert not CACHE_KEYS & set(result), result


async def test_modern_lists_and_reads_carry_cache_hints_and_result_type(server: PromptServer) -> None:
    async with RawWire(server, MODERN) as wire:
        listed = (await wire.request("prompts/list"))["result"]
        resources = (await wire.request("resources/list"))["result"]
        read = (await wire.request("resources/read", {"uri": "notebook://rich.ipynb#cell=1"}))["result"]
        got = (await wire.request("prompts/get", {"name": "p0", "arguments": {"who": "x"}}))["result"]
        discovered = (await wire.request("server/discover"))["result"]
    for result in (listed, resources, read, discovered):
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (60_000, "public", "complete")
    assert got["resultType"] == "complete"
    assert "ttlMs" not in got  # prompts/get is not cacheable
    assert discovered["capabilities"]["prompts"] == {"listChanged": True}
    assert discovered["capabilities"]["completions"] == {}


@pytest.mark.parametrize(
    ("revision", "types_"),
    [
        ("2024-11-05", ["text", "image", "text", "text", "resource"]),
        ("2025-03-26", ["text", "image", "audio", "text", "resource"]),
        ("2025-06-18", ["text", "image", "audio", "resource_link", "resource"]),
        ("2025-11-25", ["text", "image", "audio", "resource_link", "resource"]),
        (MODERN, ["text", "image", "audio", "resource_link", "resource"]),
    ],
)
async def test_prompt_content_is_what_the_revision_can_carry(
    server: PromptServer, revision: str, types_: list[str]
) -> None:
    async with RawWire(server, revision) as wire:
        result = (await wire.request("prompts/get", {"name": "rich", "arguments": {"topic": "tides"}}))["result"]
    content = [message["content"] for message in result["messages"]]
    assert [block["type"] for block in content] == types_
    assert [message["role"] for message in result["messages"]] == ["user", "assistant", "user", "user", "user"]
    text = content[0]
    if revision < "2025-06-18":
        assert "_meta" not in text
        assert text["annotations"] == {"audience": ["assistant"], "priority": 0.5}
        assert content[3]["text"] == "[The notebook](file:///proj/tides.ipynb)\n\nRead me"
    else:
        assert text["_meta"] == {"org.example.nbprompts/cell": 1}
        assert text["annotations"]["lastModified"] == "2026-11-30T10:00:00Z"
        assert content[3]["uri"] == "file:///proj/tides.ipynb"
    if revision == "2024-11-05":
        assert content[2]["text"].startswith("[audio/wav, 16 bytes")


@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_errors_on_the_wire_carry_their_code_and_details(server: PromptServer, revision: str) -> None:
    async with RawWire(server, revision) as wire:
        unknown = (await wire.request("prompts/get", {"name": "rihc"}))["error"]
        missing = (await wire.request("prompts/get", {"name": "rich", "arguments": {}}))["error"]
        extra = (await wire.request("prompts/get", {"name": "p0", "arguments": {"who": "a", "x": "b"}}))["error"]
        cursor = (await wire.request("prompts/list", {"cursor": "not-a-cursor"}))["error"]
        not_found = (await wire.request("resources/read", {"uri": "notebook://missing"}))["error"]
        still_serving = (await wire.request("prompts/get", {"name": "p0", "arguments": {"who": "a"}}))["result"]
    assert unknown == {
        "code": -32602,
        "message": "Unknown prompt: rihc; did you mean rich?",
        "data": {"name": "rihc", "suggestions": ["rich"]},
    }
    assert missing["code"] == -32602 and missing["data"] == {"prompt": "rich", "missing": ["topic"]}
    assert extra["code"] == -32602 and extra["data"]["unknown"] == ["x"]
    assert cursor == {"code": -32602, "message": "Invalid cursor", "data": {"cursor": "not-a-cursor"}}
    assert not_found["code"] == (-32602 if revision == MODERN else -32002)
    assert still_serving["messages"]
