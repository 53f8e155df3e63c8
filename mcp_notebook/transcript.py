"""A rendered prompt's content as plain text, for terminals: what `render` prints and `%mcp get` shows there.

Binary data is named with its type and size, never printed.
"""

from __future__ import annotations

from .models import AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceLink, TextContent

__all__ = ["block_text", "data_size", "describe_size"]


def data_size(data: str) -> int:
    """Bytes encoded by a base64 string, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def describe_size(size: int) -> str:
    return f"{size} bytes" if size < 10_000 else f"{size / 1024:.0f} KiB"


def _clipped(text: str, clip: int | None) -> str:
    if clip is None or len(text) <= clip:
        return text
    return f"{text[:clip]}… ({len(text) - clip} more characters)"


def block_text(block: ContentBlock, *, clip: int | None = None) -> str:
    """`block` as plain text; text longer than `clip` characters is cut, saying how much was left out."""
    if isinstance(block, TextContent):
        return _clipped(block.text, clip)
    if isinstance(block, ImageContent | AudioContent):
        return f"[{block.mime_type}, {describe_size(data_size(block.data))}]"
    if isinstance(block, ResourceLink):
        return f"[link: {block.title or block.name} <{block.uri}>]"
    assert isinstance(block, EmbeddedResource)
    if block.text is not None:
        return f"[resource {block.uri} ({block.mime_type or 'text'})]\n{_clipped(block.text, clip)}"
    size = describe_size(data_size(block.blob or ""))
    return f"[resource {block.uri}, {block.mime_type or 'binary'}, {size}]"
