"""Rendered prompts become editor text: headings where the speaker changes, media per setting, resources fenced."""

from __future__ import annotations

from typing import Literal

import pytest

from lsp_bridge.render import fence, to_editor_text
from mcp_notebook.models import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)

Role = Literal["user", "assistant"]


def _prompt(*messages: PromptMessage) -> RenderedPrompt:
    return RenderedPrompt(messages=messages)


def test_single_user_message_is_its_text_alone() -> None:
    assert to_editor_text(_prompt(PromptMessage("user", TextContent("Hello Ada\n")))) == "Hello Ada"


def test_several_messages_get_role_headings_with_runs_grouped() -> None:
    text = to_editor_text(
        _prompt(
            PromptMessage("user", TextContent("one")),
            PromptMessage("user", TextContent("two")),
            PromptMessage("assistant", TextContent("three")),
        )
    )
    assert text == "## User\n\none\n\ntwo\n\n## Assistant\n\nthree"


@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize("count", [1, 2, 5])
def test_one_speaker_gets_no_heading_and_blocks_are_separated_by_blank_lines(role: Role, count: int) -> None:
    messages = [PromptMessage(role, TextContent(f"\npart {i}\n\n")) for i in range(count)]
    text = to_editor_text(_prompt(*messages))
    assert "##" not in text
    assert text == "\n\n".join(f"part {i}" for i in range(count))


@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        (["user", "assistant"], "## User\n\nm0\n\n## Assistant\n\nm1"),
        (["assistant", "user"], "## Assistant\n\nm0\n\n## User\n\nm1"),
        (["user", "user", "assistant", "assistant"], "## User\n\nm0\n\nm1\n\n## Assistant\n\nm2\n\nm3"),
        (
            ["user", "assistant", "user"],
            "## User\n\nm0\n\n## Assistant\n\nm1\n\n## User\n\nm2",
        ),
    ],
)
def test_headings_appear_only_where_the_speaker_changes(roles: list[Role], expected: str) -> None:
    text = to_editor_text(_prompt(*(PromptMessage(r, TextContent(f"m{i}")) for i, r in enumerate(roles))))
    assert text == expected


def test_images_are_placeholders_by_default_and_data_links_on_request() -> None:
    prompt = _prompt(PromptMessage("user", ImageContent(data="iVBOR", mime_type="image/png")))
    assert to_editor_text(prompt) == "[image: image/png]"
    assert to_editor_text(prompt, images="data-uri") == "![image](data:image/png;base64,iVBOR)"


def test_audio_follows_the_image_setting() -> None:
    prompt = _prompt(PromptMessage("user", AudioContent(data="UklG", mime_type="audio/wav")))
    assert to_editor_text(prompt) == "[audio: audio/wav]"
    assert to_editor_text(prompt, images="data-uri") == "[audio](data:audio/wav;base64,UklG)"


def test_embedded_text_resource_is_fenced_with_its_language() -> None:
    block = EmbeddedResource(uri="notebook://a.ipynb#cell=3", mime_type="text/x-python", text="df.plot()")
    assert (
        to_editor_text(_prompt(PromptMessage("user", block))) == "notebook://a.ipynb#cell=3\n```python\ndf.plot()\n```"
    )


def test_binary_resources_become_images_or_placeholders() -> None:
    image = EmbeddedResource(uri="file:///a.png", mime_type="image/png", blob="iVBOR")
    other = EmbeddedResource(uri="file:///a.bin", mime_type="application/zip", blob="UEsD")
    assert to_editor_text(_prompt(PromptMessage("user", image))) == "[image: image/png]"
    assert to_editor_text(_prompt(PromptMessage("user", other))) == "[resource: file:///a.bin (application/zip)]"


def test_resource_link_is_a_markdown_link() -> None:
    link = ResourceLink(uri="file:///nb/a.ipynb", name="a.ipynb", title="Analysis")
    assert to_editor_text(_prompt(PromptMessage("user", link))) == "[Analysis](file:///nb/a.ipynb)"


def test_fence_outgrows_backtick_runs_inside_the_text() -> None:
    assert fence("a\n```\nb", "md") == "````md\na\n```\nb\n````"
