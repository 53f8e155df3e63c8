"""How conversations and listings look: Markdown and HTML for Jupyter, aligned text for terminals."""

from __future__ import annotations

import re

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


def turns(markdown: str) -> list[str]:
    """The role of each turn box, in order."""
    return re.findall(r'<div class="mcp-turn mcp-turn-(\w+)"', markdown)


def test_consecutive_messages_of_one_role_are_one_turn_under_one_role_label() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert turns(markdown) == ["user", "assistant", "user"]
    assert markdown.count(">User") == 2 and markdown.count(">Assistant") == 1
    first = markdown.split('<div class="mcp-turn')[1]
    assert "# Please review" in first and "file:///app.py" in first and "data:audio/wav" in first


def test_a_turn_keeps_its_markdown_for_the_front_end_to_render() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert markdown.startswith("`review` — Review some code")
    # A blank line after the opening tag: the turn's content is Markdown again, not raw HTML.
    assert ">User</div>\n\n# Please review\nthis *code*:\n\n" in markdown
    assert markdown.count('<div class="mcp-turn') == markdown.count("\n\n</div>")


def test_user_and_assistant_turns_look_different_and_follow_the_theme() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()
    user, assistant = (re.search(rf'mcp-turn-{role}" style="([^"]*)"', markdown) for role in ("user", "assistant"))

    assert user is not None and assistant is not None
    assert user.group(1) != assistant.group(1)
    for style in (user.group(1), assistant.group(1)):
        colours = re.findall(r"(?:border-left|background): [^;]*", style)
        assert colours and all("var(--jp-" in c for c in colours)


def test_no_symbol_a_font_may_lack_is_used() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()
    text = repr(PromptConversation.of(RENDERED))

    for shown in (markdown, text):
        odd = sorted({c for c in shown if ord(c) > 0x2000 and c not in "—·…"})
        assert odd == []


def test_images_and_audio_are_inline_data_uris() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert f'<img src="data:image/png;base64,{PNG}"' in markdown
    assert '<audio controls src="data:audio/wav;base64,UklGRg=="></audio>' in markdown


def test_embedded_resources_show_uri_and_mime_type_in_a_fence_the_text_cannot_close() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert "Resource</small> `file:///app.py` · text/x-python" in markdown
    assert "\n````python\nx = '```'\n````\n" in markdown


def test_a_binary_resource_is_a_download_link_with_its_type_and_size() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert "Resource</small> `file:///blob.bin` · application/octet-stream" in markdown
    assert (
        '<a download="blob.bin" href="data:application/octet-stream;base64,AAAA">Download blob.bin</a>'
        " (application/octet-stream, 3 bytes)"
    ) in markdown


def test_an_embedded_image_resource_shows_inline() -> None:
    image = EmbeddedResource(uri="file:///chart.png", mime_type="image/png", blob=PNG)
    markdown = PromptConversation.of(RenderedPrompt(messages=(PromptMessage("user", image),)))._repr_markdown_()

    assert f'<img src="data:image/png;base64,{PNG}"' in markdown
    assert "Download" not in markdown


def test_a_hostile_resource_name_stays_a_plain_file_name() -> None:
    for uri in ('file:///a"><script>x</script>.bin', "file:///../../etc/passwd", "data:,x", "file:///"):
        blob = EmbeddedResource(uri=uri, mime_type='text/x"y', blob="AAAA")
        markdown = PromptConversation.of(RenderedPrompt(messages=(PromptMessage("user", blob),)))._repr_markdown_()
        link = re.search(r'<a download="([^"]*)" href="([^"]*)">', markdown)
        assert link is not None
        assert re.fullmatch(r"[\w.\- ]+", link.group(1))
        assert "<script" not in markdown.split("`")[-1]


def test_resource_links_are_clickable() -> None:
    markdown = PromptConversation.of(RENDERED)._repr_markdown_()

    assert "Link</small> [Style guide](<https://example.com/style>)" in markdown


def test_terminals_get_plain_text_with_roles() -> None:
    text = repr(PromptConversation.of(RENDERED))

    assert text.splitlines()[:4] == ["review: 6 messages", "Review some code", "", "[user]"]
    assert [line for line in text.splitlines() if line.startswith("[") and line.endswith("]") and " " not in line] == [
        "[user]",
        "[assistant]",
        "[user]",
    ]
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

    assert turns(bundle["text/markdown"]) == ["user", "assistant", "user"]
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
    assert '<td style="text-align: left"><code style="white-space: nowrap">docs:review</code></td>' in html
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
    assert '<code style="white-space: nowrap">docs</code>' in table._repr_html_()
    assert "No MCP servers configured" in repr(ServerTable(rows=[]))
