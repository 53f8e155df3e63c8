"""The one writer of rendered prompts: blocks as text and markdown, fences, code spans, escaping, layouts."""

from __future__ import annotations

import base64
import re

import pytest
from markdown_it import MarkdownIt

from mcp_notebook.models import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)
from mcp_notebook.transcript import (
    Layout,
    block_markdown,
    block_text,
    code_span,
    data_size,
    describe_size,
    escape_markdown,
    fence,
    fence_language,
    to_transcript,
)


def b64(size: int) -> str:
    return base64.b64encode(b"x" * size).decode()


def test_the_size_of_base64_data_is_known_without_decoding_it() -> None:
    assert [data_size(b64(n)) for n in (0, 1, 2, 3, 4, 1000)] == [0, 1, 2, 3, 4, 1000]


def test_large_sizes_read_in_kibibytes() -> None:
    assert (describe_size(9_999), describe_size(20_480)) == ("9999 bytes", "20 KiB")


def test_text_is_kept_whole_unless_a_clip_is_asked_for() -> None:
    assert block_text(TextContent(text="abcdef")) == "abcdef"
    assert block_text(TextContent(text="abcdef"), clip=4) == "abcd… (2 more characters)"


def test_media_and_binaries_are_named_never_printed() -> None:
    assert block_text(ImageContent(data=b64(8), mime_type="image/png")) == "[image/png, 8 bytes]"
    assert block_text(AudioContent(data=b64(3), mime_type="audio/wav")) == "[audio/wav, 3 bytes]"
    blob = EmbeddedResource(uri="file:///b.bin", mime_type="application/octet-stream", blob=b64(3))
    assert block_text(blob) == "[resource file:///b.bin, application/octet-stream, 3 bytes]"


def test_embedded_text_comes_under_its_uri_and_links_show_where_they_point() -> None:
    text = EmbeddedResource(uri="file:///a.py", mime_type="text/x-python", text="x = 1")
    assert block_text(text) == "[resource file:///a.py (text/x-python)]\nx = 1"
    assert block_text(ResourceLink(uri="https://e.com/s", name="s", title="Style")) == "[link: Style <https://e.com/s>]"


# -- fences, code spans and escaping, checked with a CommonMark parser --------------------------

_TEXTS = [
    "",
    "\n",
    "x = 1",
    "x = 1\n",
    "x = 1\n\n",
    "\n\nx",
    "東京 🐍 e\u0301",
    *(f"{'`' * n}" for n in range(1, 9)),
    *(f"a\n{'`' * n}\nb" for n in range(1, 9)),
    *(f"   {'`' * n}python\nx\n   {'`' * n}" for n in (3, 4, 7)),
    "```",
    "```\n",
    "x\n```",
    "~~~\nx\n~~~",
    "````\n```\n``",
    "`a` ``b`` ```c```",
]
_SAFE_LANGUAGES = ["", "python", "R", "c++", "Wolfram Language", "F#", "objective-c"]
_UNSAFE_LANGUAGES = ["`", "py`x", "`python", "py\n# injected", "a\rb", "a\u2028b", "a\x00b", "a\x0bb", "\n"]


def _one_block(markdown: str) -> tuple[str, str]:
    """The info string and content of the one code block `markdown` must be; fails when it is more or less."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    assert [t.type for t in tokens] == ["fence"], markdown
    return tokens[0].info, tokens[0].content


@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("language", [*_SAFE_LANGUAGES, None])
def test_a_fence_is_one_code_block_holding_exactly_its_text(text: str, language: str | None) -> None:
    info, content = _one_block(fence(text, language))
    assert content == (text if text.endswith("\n") else text + "\n")
    assert info == (language or "")


@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("language", _UNSAFE_LANGUAGES)
def test_a_language_that_cannot_stand_on_the_opening_line_is_left_out(text: str, language: str) -> None:
    info, content = _one_block(fence(text, language))
    assert (info, content) == ("", text if text.endswith("\n") else text + "\n")


def test_a_fence_is_as_short_as_its_text_allows() -> None:
    assert fence("x", "py") == "```py\nx\n```"
    assert fence("a `` b", "") == "```\na `` b\n```"
    assert fence("a\n`````\nb", "md") == "``````md\na\n`````\nb\n``````"


@pytest.mark.parametrize(
    "text", ["a", "a`b", "`a", "a`", "``", "`", " a ", " ", "  ", " `a` ", "a``b```c", "file:///a`b.txt", "é 🐍"]
)
def test_a_code_span_shows_exactly_its_text(text: str) -> None:
    [paragraph] = [t for t in MarkdownIt("commonmark").parse(f"x {code_span(text)} y") if t.type == "inline"]
    spans = [c for c in paragraph.children or () if c.type == "code_inline"]
    assert [c.content for c in spans] == [text]


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "line one\nline two",
        "a\n# heading",
        "a\r\n## heading",
        "a\r- item",
        "a\n> quote",
        "a\n\n---",
        "a\n===",
        "<script>alert(1)</script>",
        "<b>bold</b> &amp;",
        "*em* _em_ **strong** __strong__",
        "snake_case_name",
    ],
)
def test_escaped_text_stays_one_line_of_literal_text(text: str) -> None:
    tokens = MarkdownIt("commonmark").parse(f"Description: {escape_markdown(text)}")
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    children = tokens[1].children or []
    assert {c.type for c in children} == {"text"}
    assert "".join(c.content for c in children) == "Description: " + re.sub(r"[\r\n]+", " ", text)


@pytest.mark.parametrize(
    ("mime", "language"),
    [
        (None, ""),
        ("", ""),
        ("text/plain", ""),
        ("text/x-python", "python"),
        ("TEXT/X-PYTHON", "python"),
        ("text/x-python; charset=utf-8", "python"),
        ("application/json", "json"),
        ("application/x-ipynb+json", "json"),
        ("application/vnd.api+json", ""),
        ("application/octet-stream", ""),
        ("application/x-sh", "sh"),
        ("text/markdown", "markdown"),
        ("text/csv", "csv"),
        ("text/x-script.python", "python"),
    ],
)
def test_the_fence_language_comes_from_the_mime_type(mime: str | None, language: str) -> None:
    assert fence_language(mime) == language


# -- layouts -----------------------------------------------------------------------------------

_DIALOGUE = RenderedPrompt(
    name="chat",
    description="A chat",
    messages=(
        PromptMessage("user", TextContent("\nhi\n")),
        PromptMessage("user", TextContent("there")),
        PromptMessage("assistant", TextContent("hello")),
    ),
)


def test_sections_are_messages_or_turns() -> None:
    by_message = Layout(blocks="text", sections="message", headings="always", heading="markdown-as-sent")
    by_turn = Layout(blocks="text", sections="turn", headings="always", heading="bracketed")
    assert to_transcript(_DIALOGUE, by_message) == "## user\n\n\nhi\n\n\n## user\n\nthere\n\n## assistant\n\nhello"
    assert to_transcript(_DIALOGUE, by_turn) == "[user]\n\nhi\n\n\nthere\n\n[assistant]\nhello"


def test_headings_can_wait_until_a_second_speaker_and_blocks_can_be_trimmed() -> None:
    layout = Layout(blocks="markdown", sections="turn", headings="when-speakers-differ", trim=True)
    assert to_transcript(_DIALOGUE, layout) == "## User\n\nhi\n\nthere\n\n## Assistant\n\nhello"
    alone = RenderedPrompt(messages=_DIALOGUE.messages[:2])
    assert to_transcript(alone, layout) == "hi\n\nthere"


def test_titles_name_the_prompt_as_a_heading_or_a_summary() -> None:
    heading = Layout(blocks="text", sections="turn", headings="always", title="markdown", trim=True)
    summary = Layout(blocks="text", sections="turn", headings="always", heading="bracketed", title="summary")
    assert to_transcript(_DIALOGUE, heading).startswith("# chat: A chat\n\n## User\n\nhi")
    assert to_transcript(_DIALOGUE, summary).startswith("chat: 3 messages\nA chat\n\n[user]\n")
    undescribed = RenderedPrompt(messages=_DIALOGUE.messages[2:])
    assert to_transcript(undescribed, heading) == "## Assistant\n\nhello"
    assert to_transcript(undescribed, summary) == "prompt: 1 message\n\n[assistant]\nhello"


def test_markdown_blocks_show_media_as_placeholders_or_data_links_and_text_resources_fenced() -> None:
    image = ImageContent(data=b64(3), mime_type="image/png")
    resource = EmbeddedResource(uri="file:///a.py", mime_type="text/x-python", text="x = '```'\n")
    assert block_markdown(image) == "[image: image/png]"
    assert block_markdown(image, media="data-uri") == f"![image](data:image/png;base64,{b64(3)})"
    assert block_markdown(resource) == "file:///a.py\n````python\nx = '```'\n````"
    assert block_markdown(resource, clip=3) == "file:///a.py\n```python\nx =… (7 more characters)\n```"


def test_an_unknown_block_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="unknown content block"):
        block_text(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unknown content block"):
        block_markdown(object())  # type: ignore[arg-type]
