"""How conversations and listings look: Markdown and HTML for Jupyter, aligned text for terminals."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell
from magics_harness import isolated_shell

from mcp_notebook.config import ServerConfig
from mcp_notebook.ipython.display import PromptConversation, PromptTable, ServerRow, ServerTable
from mcp_notebook.models import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptArgument,
    PromptMessage,
    PromptSpec,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)

__all__ = ["isolated_shell"]

PNG = "iVBORw0KGgo="

RENDERED = RenderedPrompt(
    name="review",
    description="Review some code",
    messages=(
        PromptMessage("user", TextContent(text="# Please review\nthis *code*:")),
        PromptMessage("user", EmbeddedResource(uri="file:///app.py", mime_type="text/x-python", text="x = '```'")),
        PromptMessage("user", ImageContent(data=PNG, mime_type="image/png")),
        PromptMessage("user", AudioContent(data="UklGRg==", mime_type="audio/wav")),
        PromptMessage("assistant", ResourceLink(uri="https://example.com/style", name="style", title="Style guide")),
        PromptMessage(
            "user", EmbeddedResource(uri="file:///blob.bin", mime_type="application/octet-stream", blob="AAAA")
        ),
    ),
)


def test_a_conversation_shows_each_role_and_keeps_markdown_for_the_front_end_to_render() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert markdown.startswith("`review` — Review some code")
    assert "> **USER**\n>\n> # Please review\n> this *code*:" in markdown
    assert "> **ASSISTANT**" in markdown


def test_images_and_audio_are_inline_data_uris() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert f'<img src="data:image/png;base64,{PNG}"' in markdown
    assert '<audio controls src="data:audio/wav;base64,UklGRg=="></audio>' in markdown


def test_embedded_resources_show_uri_and_mime_type_in_a_fence_the_text_cannot_close() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert "📎 `file:///app.py` · text/x-python" in markdown
    assert "> ````python\n> x = '```'\n> ````" in markdown
    assert "📎 `file:///blob.bin` · application/octet-stream (binary, 3 bytes)" in markdown


def test_resource_links_are_clickable() -> None:
    assert "🔗 [Style guide](<https://example.com/style>)" in PromptConversation.of(RENDERED)._repr_markdown_()


def test_terminals_get_plain_text_with_roles() -> None:
    text = repr(PromptConversation.of(RENDERED))

    assert text.splitlines()[:4] == ["review: 6 messages", "Review some code", "", "[user]"]
    assert "[image/png, 8 bytes]" in text
    assert "[link: Style guide <https://example.com/style>]" in text


def test_the_conversation_is_still_a_rendered_prompt() -> None:
    conversation = PromptConversation.of(RENDERED)

    assert isinstance(conversation, RenderedPrompt)
    assert conversation.messages == RENDERED.messages
    assert conversation.to_dicts()[0] == {
        "role": "user",
        "content": {"text": "# Please review\nthis *code*:", "type": "text"},
    }


def test_plain_rendered_prompts_display_as_conversations_once_the_extension_is_loaded(
    isolated_shell: InteractiveShell,
) -> None:
    bundle, _ = isolated_shell.display_formatter.format(RENDERED)

    assert "> **USER**" in bundle["text/markdown"]
    assert bundle["text/plain"].startswith("review: 6 messages")


def test_unloading_removes_the_formatters(isolated_shell: InteractiveShell) -> None:
    isolated_shell.run_line_magic("unload_ext", "mcp_notebook")
    bundle, _ = isolated_shell.display_formatter.format(RENDERED)
    isolated_shell.run_line_magic("load_ext", "mcp_notebook")

    assert "text/markdown" not in bundle


def test_prompt_tables_are_html_in_jupyter_and_aligned_text_in_terminals() -> None:
    spec = PromptSpec(
        name="review",
        title="Code review",
        description="Review code.\nSecond line.",
        arguments=(PromptArgument("code"), PromptArgument("lang", required=False)),
    )
    table = PromptTable({"docs": [spec], "notes": [PromptSpec(name="todo")]}, errors={"down": "cannot start"})

    assert repr(table).splitlines() == [
        "prompt       arguments    description",
        "-----------  -----------  ------------",
        "docs:review  code [lang]  Review code.",
        "notes:todo",
        "down: cannot start",
    ]
    html = table._repr_html_()
    assert '<td style="text-align: left"><code>docs:review</code></td>' in html
    assert "Code review" in html and "down: cannot start" in html
    assert [s.name for s in table.prompts] == ["review", "todo"]


def test_server_tables_say_where_each_server_comes_from() -> None:
    table = ServerTable(
        rows=[
            ServerRow(ServerConfig(name="docs", command="uvx", args=("docs",), source="/p/mcp.json"), "not connected"),
            ServerRow(ServerConfig(name="web", url="https://h/mcp"), "connected (2026-07-28)"),
        ]
    )

    lines = repr(table).splitlines()
    assert lines[0].split() == ["server", "transport", "status", "target", "from"]
    assert lines[2].split() == ["docs", "stdio", "not", "connected", "uvx", "docs", "/p/mcp.json"]
    assert lines[3].split() == ["web", "http", "connected", "(2026-07-28)", "https://h/mcp", "%mcp", "connect"]
    assert "<code>docs</code>" in table._repr_html_()
    assert "No MCP servers configured" in repr(ServerTable(rows=[]))
