"""What a live magic printed and displayed, as prompt content.

A magic run in the kernel (`ipython.live_magics.run_magic`) hands back its
captured output as plain data: text streams and display bundles (a mapping of
MIME type to data, as IPython's display system makes them). This module turns
that into content blocks, the richest form of each display first: images, then
markdown, JSON or plain text (HTML only when nothing else is there).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..models import ContentBlock, ImageContent, PromptMessage, PromptSpec, RenderedPrompt, TextContent
from ..transcript import fence
from .outputs import IMAGE_MIME_TYPES

if TYPE_CHECKING:
    from .magics import MagicInvocation

__all__ = ["CapturedOutput", "to_content_blocks", "to_live_result"]


@dataclass(frozen=True, slots=True)
class CapturedOutput:
    """What a live magic printed and displayed, in order: text streams, display bundles, its result."""

    stdout: str = ""
    stderr: str = ""
    displays: tuple[Mapping[str, Any], ...] = ()
    result: Mapping[str, Any] | None = None


def _text_of(bundle: Mapping[str, Any]) -> str | None:
    for mime in ("text/markdown", "text/plain"):
        value = bundle.get(mime)
        if isinstance(value, str):
            return value
    if "application/json" in bundle:
        return json.dumps(bundle["application/json"], indent=2, default=str)
    html = bundle.get("text/html")
    return html if isinstance(html, str) else None


def _to_block(bundle: Mapping[str, Any]) -> ContentBlock | None:
    for mime in IMAGE_MIME_TYPES:
        data = bundle.get(mime)
        if isinstance(data, bytes | bytearray):
            return ImageContent(data=base64.b64encode(bytes(data)).decode("ascii"), mime_type=mime)
        if isinstance(data, str):
            return ImageContent(data="".join(data.split()), mime_type=mime)
    text = _text_of(bundle)
    return TextContent(text=text) if text is not None else None


def to_content_blocks(captured: CapturedOutput) -> tuple[ContentBlock, ...]:
    """Captured output as content blocks, richest form of each display first: images, then text."""
    blocks: list[ContentBlock] = []
    if captured.stdout:
        blocks.append(TextContent(text=captured.stdout))
    if captured.stderr:
        blocks.append(TextContent(text=f"stderr:\n{captured.stderr}"))
    for bundle in (*captured.displays, *((captured.result,) if captured.result else ())):
        block = _to_block(bundle)
        if block is not None:
            blocks.append(block)
    return tuple(blocks)


def to_live_result(spec: PromptSpec, invocation: MagicInvocation, captured: CapturedOutput) -> RenderedPrompt:
    """A live magic's answer: what ran, then its output."""
    blocks = to_content_blocks(captured)
    # A line break after the source, inside the fence: an empty cell body shows as an empty line.
    code = fence(invocation.source + "\n", "python")
    intro = f"Ran in the kernel:\n\n{code}"
    if not blocks:
        intro += "\n\nIt printed nothing."
    messages = [PromptMessage(role="user", content=TextContent(text=intro))]
    messages.extend(PromptMessage(role="user", content=block) for block in blocks)
    return RenderedPrompt(messages=tuple(messages), description=spec.description, name=spec.name)
