"""Model ⇄ `mcp_types`: complete in both directions, era-correct on the way out."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import mcp_types as types
import pytest
from protocol_samples import PNG, RICH, WAV

from mcp_notebook.models import (
    Annotations,
    AudioContent,
    CompletionResult,
    EmbeddedResource,
    Icon,
    ImageContent,
    PromptArgument,
    PromptMessage,
    RenderedPrompt,
    ResourceInfo,
    ResourceLink,
    TextContent,
)
from mcp_notebook.protocol.convert import (
    from_mcp_completion,
    from_mcp_content,
    from_mcp_get_prompt_result,
    from_mcp_prompt,
    to_mcp_completion,
    to_mcp_content,
    to_mcp_get_prompt_result,
    to_mcp_prompt,
    to_mcp_resource,
    to_mcp_resource_contents,
)

ANNOTATED = Annotations(audience=("user", "assistant"), priority=0.7, last_modified="2026-11-30T10:00:00Z")
META = {"org.example.nbprompts/cell": 3}
BLOCKS = [
    TextContent("hello", annotations=ANNOTATED, meta=META),
    ImageContent(PNG, "image/png", annotations=ANNOTATED, meta=META),
    AudioContent(WAV, "audio/wav", annotations=ANNOTATED, meta=META),
    ResourceLink(
        "file:///proj/a.ipynb",
        "a.ipynb",
        title="Analysis",
        description="The analysis",
        mime_type="application/x-ipynb+json",
        size=18342,
        icons=(Icon("https://example.invalid/i.png", "image/png", ("48x48",), "dark"),),
        annotations=ANNOTATED,
        meta=META,
    ),
    EmbeddedResource("notebook://a.ipynb#cell=1", "text/plain", text="x = 1", annotations=ANNOTATED, meta=META),
    EmbeddedResource("notebook://a.ipynb#cell=2", "image/png", blob=PNG, annotations=ANNOTATED, meta=META),
]


def wire(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: type(b).__name__ + ("-blob" if getattr(b, "blob", 0) else ""))
def test_every_content_block_survives_the_round_trip(block: Any) -> None:
    assert from_mcp_content(to_mcp_content(block)) == block


def test_a_prompt_survives_the_round_trip_without_its_templates() -> None:
    back = from_mcp_prompt(to_mcp_prompt(RICH), origin="server")
    assert back == replace(RICH, messages=(), origin="server", arguments=back.arguments)
    assert [arg.name for arg in back.arguments] == ["topic", "style"]
    assert [arg.required for arg in back.arguments] == [True, False]
    assert back.arguments[0].title == "Topic"


def test_a_rendered_prompt_survives_the_round_trip() -> None:
    rendered = RenderedPrompt(
        messages=tuple(PromptMessage("user", block) for block in BLOCKS), description="all", meta={"k": "v"}
    )
    back = from_mcp_get_prompt_result(to_mcp_get_prompt_result(rendered), name="rich")
    assert back.messages == rendered.messages
    assert back.description == "all"
    assert back.name == "rich"
    assert back.meta == {"k": "v"}


def test_an_optional_argument_is_sent_as_not_required_with_its_default_in_words() -> None:
    argument = wire(to_mcp_prompt(RICH))["arguments"][1]
    assert argument == {"name": "style", "required": False, "description": "Default: short"}


def test_a_prompt_without_arguments_omits_the_arguments_field() -> None:
    assert "arguments" not in wire(to_mcp_prompt(replace(RICH, arguments=())))


def test_an_argument_read_back_without_required_is_optional() -> None:
    prompt = types.Prompt(name="p", arguments=[types.PromptArgument(name="a")])
    assert from_mcp_prompt(prompt).arguments == (PromptArgument("a", required=False),)


def test_the_newest_revision_keeps_title_meta_and_icons() -> None:
    prompt = wire(to_mcp_prompt(RICH, "2026-07-28"))
    assert prompt["title"] == "Every block"
    assert prompt["_meta"] == {
        "org.example.nbprompts/notebook": "rich.ipynb",
        "io.github.mcp-notebook/argumentDefaults": {"style": "short"},
    }
    assert prompt["icons"] == [
        {"src": "data:image/svg+xml;base64,PHN2Zy8+", "mimeType": "image/svg+xml", "sizes": ["any"], "theme": "light"}
    ]
    assert prompt["arguments"][0]["title"] == "Topic"


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_title_and_meta_are_left_out_before_2025_06_18(revision: str) -> None:
    prompt = wire(to_mcp_prompt(RICH, revision))
    assert set(prompt) == {"name", "description", "arguments"}
    assert all("title" not in argument for argument in prompt["arguments"])
    block = wire(to_mcp_content(BLOCKS[0], revision))
    assert "_meta" not in block
    embedded = wire(to_mcp_content(BLOCKS[4], revision))
    assert "_meta" not in embedded and "_meta" not in embedded["resource"]


def test_icons_are_left_out_at_2025_06_18_and_kept_at_2025_11_25() -> None:
    assert "icons" not in wire(to_mcp_prompt(RICH, "2025-06-18"))
    assert "icons" not in wire(to_mcp_content(BLOCKS[3], "2025-06-18"))
    assert "icons" in wire(to_mcp_prompt(RICH, "2025-11-25"))
    assert "icons" in wire(to_mcp_content(BLOCKS[3], "2025-11-25"))


def test_audio_becomes_a_text_note_at_2024_11_05() -> None:
    block = wire(to_mcp_content(BLOCKS[2], "2024-11-05"))
    assert block == {
        "type": "text",
        "text": "[audio/wav, 16 bytes: audio needs MCP 2025-03-26 or newer]",
        "annotations": {"audience": ["user", "assistant"], "priority": 0.7},
    }


def test_audio_is_audio_from_2025_03_26() -> None:
    assert wire(to_mcp_content(BLOCKS[2], "2025-03-26"))["type"] == "audio"


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26"])
def test_a_resource_link_becomes_a_markdown_link_before_2025_06_18(revision: str) -> None:
    block = wire(to_mcp_content(BLOCKS[3], revision))
    assert block["type"] == "text"
    assert block["text"] == "[Analysis](file:///proj/a.ipynb)\n\nThe analysis"


def test_a_resource_link_is_a_link_from_2025_06_18() -> None:
    block = wire(to_mcp_content(BLOCKS[3], "2025-06-18"))
    assert block["type"] == "resource_link"
    assert block["uri"] == "file:///proj/a.ipynb"


def test_last_modified_is_left_out_before_2025_06_18_but_audience_and_priority_stay() -> None:
    old = wire(to_mcp_content(BLOCKS[0], "2025-03-26"))["annotations"]
    new = wire(to_mcp_content(BLOCKS[0], "2025-06-18"))["annotations"]
    assert old == {"audience": ["user", "assistant"], "priority": 0.7}
    assert new == {"audience": ["user", "assistant"], "priority": 0.7, "lastModified": "2026-11-30T10:00:00Z"}


def test_annotations_with_only_last_modified_vanish_before_2025_06_18() -> None:
    block = TextContent("x", annotations=Annotations(last_modified="2026-01-01T00:00:00Z"))
    assert "annotations" not in wire(to_mcp_content(block, "2024-11-05"))


def test_completions_are_capped_at_100_values_and_say_there_are_more() -> None:
    completion = wire(to_mcp_completion(CompletionResult(values=tuple(str(i) for i in range(150)), total=150)))
    assert len(completion["values"]) == 100
    assert completion["total"] == 150
    assert completion["hasMore"] is True


def test_a_completion_survives_the_round_trip() -> None:
    result = CompletionResult(values=("short", "long"), total=2, has_more=False)
    assert from_mcp_completion(to_mcp_completion(result)) == result


def test_a_resource_is_listed_with_every_field_and_loses_its_title_before_2025_06_18() -> None:
    info = ResourceInfo("notebook://a#cell=1", "cell 1", title="First", description="d", mime_type="text/plain", size=3)
    assert wire(to_mcp_resource(info)) == {
        "uri": "notebook://a#cell=1",
        "name": "cell 1",
        "title": "First",
        "description": "d",
        "mimeType": "text/plain",
        "size": 3,
    }
    assert "title" not in wire(to_mcp_resource(info, "2025-03-26"))


def test_resource_contents_keep_their_meta_and_blob() -> None:
    contents = EmbeddedResource("notebook://a#cell=2", "image/png", blob=PNG, meta=META)
    assert wire(to_mcp_resource_contents(contents)) == {
        "uri": "notebook://a#cell=2",
        "mimeType": "image/png",
        "blob": PNG,
        "_meta": META,
    }
