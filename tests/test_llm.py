"""Rendered prompts converted to OpenAI chat-completions and Anthropic messages."""

from __future__ import annotations

from mcp_notebook.llm import to_anthropic_messages, to_openai_messages
from mcp_notebook.models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    RenderedPrompt,
    ResourceLink,
    Role,
    TextContent,
)

PNG = "iVBORw0KGgo="


def conversation(*messages: tuple[Role, ContentBlock]) -> RenderedPrompt:
    return RenderedPrompt(messages=tuple(PromptMessage(role=role, content=content) for role, content in messages))


def test_openai_text_and_image_share_one_user_message_with_a_data_uri() -> None:
    rendered = conversation(
        ("user", TextContent(text="What is in this picture?")),
        ("user", ImageContent(data=PNG, mime_type="image/png")),
        ("assistant", TextContent(text="A pixel.")),
    )

    assert to_openai_messages(rendered) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
        {"role": "assistant", "content": "A pixel."},
    ]


def test_openai_audio_is_input_audio_for_wav_and_mp3_and_a_note_otherwise() -> None:
    rendered = conversation(
        ("user", AudioContent(data="UklG", mime_type="audio/wav")),
        ("user", AudioContent(data="SUQz", mime_type="audio/mpeg")),
        ("user", AudioContent(data="T2dn", mime_type="audio/ogg")),
    )

    assert to_openai_messages(rendered)[0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
        {"type": "text", "text": "[audio: audio/ogg]"},
    ]


def test_openai_resources_become_text_files_and_links() -> None:
    rendered = conversation(
        ("user", EmbeddedResource(uri="file:///a/notes.md", mime_type="text/markdown", text="# Notes")),
        ("user", EmbeddedResource(uri="file:///a/paper.pdf", mime_type="application/pdf", blob="JVBE")),
        ("user", ResourceLink(uri="https://example.com/doc", name="doc", title="The doc")),
    )

    assert to_openai_messages(rendered)[0]["content"] == [
        {"type": "text", "text": "Resource file:///a/notes.md (text/markdown):\n\n# Notes"},
        {"type": "file", "file": {"filename": "paper.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
        {"type": "text", "text": "[The doc](https://example.com/doc)"},
    ]


def test_openai_assistant_turns_are_text_only() -> None:
    rendered = conversation(
        ("assistant", TextContent(text="Here:")),
        ("assistant", ImageContent(data=PNG, mime_type="image/png")),
    )

    assert to_openai_messages(rendered) == [{"role": "assistant", "content": "Here:\n\n[image: image/png]"}]


def test_anthropic_images_are_base64_sources_and_text_resources_are_documents() -> None:
    rendered = conversation(
        ("user", TextContent(text="Review this:")),
        ("user", EmbeddedResource(uri="file:///x.py", mime_type="text/x-python", text="print(1)")),
        ("user", ImageContent(data=PNG, mime_type="image/png")),
    )

    assert to_anthropic_messages(rendered) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Review this:"},
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "print(1)"},
                    "title": "file:///x.py",
                },
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            ],
        }
    ]


def test_anthropic_merges_same_role_messages_so_roles_alternate() -> None:
    rendered = conversation(
        ("user", TextContent(text="a")),
        ("user", TextContent(text="b")),
        ("assistant", TextContent(text="c")),
        ("assistant", TextContent(text="d")),
        ("user", TextContent(text="e")),
    )

    messages = to_anthropic_messages(rendered)

    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [[part["text"] for part in m["content"]] for m in messages] == [["a", "b"], ["c", "d"], ["e"]]


def test_anthropic_pdf_blobs_are_documents_and_unsupported_blocks_are_notes() -> None:
    rendered = conversation(
        ("user", EmbeddedResource(uri="file:///p.pdf", mime_type="application/pdf", blob="JVBE")),
        ("user", AudioContent(data="UklG", mime_type="audio/wav")),
        ("user", ImageContent(data="Qk0=", mime_type="image/bmp")),
        ("user", EmbeddedResource(uri="file:///data.bin", mime_type="application/octet-stream", blob="AAE=")),
    )

    assert to_anthropic_messages(rendered)[0]["content"] == [
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"},
            "title": "file:///p.pdf",
        },
        {"type": "text", "text": "[audio: audio/wav]"},
        {"type": "text", "text": "[image: image/bmp]"},
        {"type": "text", "text": "[attached resource file:///data.bin (application/octet-stream)]"},
    ]


def test_anthropic_assistant_turns_keep_text_and_describe_the_rest() -> None:
    rendered = conversation(
        ("assistant", TextContent(text="See")),
        ("assistant", ResourceLink(uri="https://e.x/r", name="r", description="the report")),
    )

    assert to_anthropic_messages(rendered) == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "See"}, {"type": "text", "text": "[r](https://e.x/r) — the report"}],
        }
    ]
