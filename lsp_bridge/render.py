"""A rendered prompt as plain editor text (markdown), to replace a slash line with.

* Messages of one speaker (however many): their blocks alone, separated by
  blank lines; a heading would only repeat what the reader knows. When the
  speaker changes, a `## User` / `## Assistant` heading starts each run of
  messages with the same role.
* Images (and audio): a markdown link with a `data:` URI, or a placeholder
  such as `[image: image/png]` (the default: data URIs make documents huge).
* Embedded text resources: a fenced block, tagged with a language guessed from
  the MIME type and preceded by the resource's URI; binary ones: as an image
  or a placeholder. Resource links: a markdown link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from mcp_notebook.models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)

__all__ = ["ImageStyle", "fence", "to_editor_text"]

ImageStyle = Literal["placeholder", "data-uri"]

_LANGUAGES = {
    "application/json": "json",
    "application/javascript": "javascript",
    "application/x-ipynb+json": "json",
    "application/xml": "xml",
    "application/x-sh": "sh",
    "application/toml": "toml",
    "application/yaml": "yaml",
    "text/x-python": "python",
    "text/javascript": "javascript",
    "text/plain": "",
}
_BACKTICKS = re.compile(r"`{3,}")


def _language(mime_type: str | None) -> str:
    if not mime_type:
        return ""
    mime = mime_type.split(";", 1)[0].strip().lower()
    if mime in _LANGUAGES:
        return _LANGUAGES[mime]
    kind, _, sub = mime.partition("/")
    if kind == "text" or sub.startswith("x-"):
        return sub.removeprefix("x-").removeprefix("script.")
    return ""


def fence(text: str, language: str = "") -> str:
    """`text` in a fenced code block whose fence is longer than any backtick run inside it."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=2)
    marks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{marks}{language}\n{body}{marks}"


def _media(kind: str, data: str, mime_type: str, images: ImageStyle) -> str:
    if images == "data-uri":
        bang = "!" if kind == "image" else ""
        return f"{bang}[{kind}](data:{mime_type};base64,{data})"
    return f"[{kind}: {mime_type}]"


def _block_text(block: ContentBlock, images: ImageStyle) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return _media("image", block.data, block.mime_type, images)
    if isinstance(block, AudioContent):
        return _media("audio", block.data, block.mime_type, images)
    if isinstance(block, EmbeddedResource):
        if block.text is not None:
            return f"{block.uri}\n{fence(block.text, _language(block.mime_type))}"
        mime = block.mime_type or "application/octet-stream"
        if block.blob is not None and mime.startswith("image/"):
            return _media("image", block.blob, mime, images)
        return f"[resource: {block.uri} ({mime})]"
    if isinstance(block, ResourceLink):
        return f"[{block.title or block.name}]({block.uri})"
    raise TypeError(f"unknown content block: {block!r}")


def _runs(messages: Iterable[PromptMessage]) -> list[tuple[str, list[PromptMessage]]]:
    runs: list[tuple[str, list[PromptMessage]]] = []
    for message in messages:
        if runs and runs[-1][0] == message.role:
            runs[-1][1].append(message)
        else:
            runs.append((message.role, [message]))
    return runs


def to_editor_text(rendered: RenderedPrompt, *, images: ImageStyle = "placeholder") -> str:
    """The text that replaces a slash line once its prompt is rendered (no trailing newline)."""
    messages = rendered.messages
    headed = len({m.role for m in messages}) > 1
    parts: list[str] = []
    for role, run in _runs(messages):
        body = "\n\n".join(_block_text(m.content, images).strip("\n") for m in run)
        parts.append(f"## {role.capitalize()}\n\n{body}" if headed else body)
    return "\n\n".join(parts)
