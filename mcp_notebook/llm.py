"""Rendered prompts as the message lists LLM SDKs take (OpenAI chat completions, Anthropic messages).

MCP prompt messages hold one content block each; LLM APIs take a list of
parts per message. Both converters therefore merge consecutive messages of
the same role into one message (Anthropic requires roles to alternate) and
translate each block to the nearest thing the target accepts. Blocks a target
cannot carry (audio for Anthropic, images in assistant turns) become a short
text note instead of disappearing silently.

Plain dictionaries come out, so neither SDK needs to be installed.
`Conversation` is a `RenderedPrompt` that converts itself: what
`Connection.get` returns, and what `%mcp get` returns (shown as a chat there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any, Self

from .models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)

__all__ = ["Conversation", "to_anthropic_messages", "to_openai_messages"]

_OPENAI_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_ANTHROPIC_IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}

Part = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Conversation(RenderedPrompt):
    """A rendered prompt that converts itself to the message lists of LLM SDKs."""

    @classmethod
    def of(cls, rendered: RenderedPrompt) -> Self:
        return cls(**{f.name: getattr(rendered, f.name) for f in fields(RenderedPrompt)})

    def to_openai(self) -> list[dict[str, Any]]:
        """The messages in OpenAI chat-completions form (see `to_openai_messages`)."""
        return to_openai_messages(self)

    def to_anthropic(self) -> list[dict[str, Any]]:
        """The messages in Anthropic Messages API form (see `to_anthropic_messages`)."""
        return to_anthropic_messages(self)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The messages as plain dictionaries (role and content fields)."""
        return [
            {"role": m.role, "content": {k: v for k, v in asdict(m.content).items() if v is not None}}
            for m in self.messages
        ]


def to_openai_messages(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """Chat-completions messages: `[{"role": "user", "content": [{"type": "text", ...}, ...]}, ...]`.

    Images become `image_url` parts with data URIs, WAV/MP3 audio `input_audio`
    parts, PDFs `file` parts; assistant turns carry their text as a string
    (the API takes only text there).
    """
    messages = _merge(rendered, _to_openai_part)
    for message in messages:
        if message["role"] == "assistant":
            message["content"] = "\n\n".join(part["text"] for part in message["content"])
    return messages


def to_anthropic_messages(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """Anthropic Messages API messages: content blocks, consecutive same-role messages merged.

    Images become base64 `image` blocks, embedded text resources and PDFs
    `document` blocks titled with their URI; assistant turns carry text only.
    """
    return _merge(rendered, _to_anthropic_part)


def _merge(rendered: RenderedPrompt, convert: Callable[[ContentBlock], Part]) -> list[dict[str, Any]]:
    """Text stays text and assistant turns carry text only, for both targets; `convert` does a user's other blocks."""
    messages: list[dict[str, Any]] = []
    for message in rendered.messages:
        block = message.content
        if isinstance(block, TextContent):
            part = _text(block.text)
        elif message.role == "assistant":
            part = _note(block)
        else:
            part = convert(block)
        if messages and messages[-1]["role"] == message.role:
            messages[-1]["content"].append(part)
        else:
            messages.append({"role": message.role, "content": [part]})
    return messages


def _text(text: str) -> Part:
    return {"type": "text", "text": text}


def _note(block: ContentBlock) -> Part:
    """A stand-in for a block the target cannot carry, so the model still knows it was there."""
    if isinstance(block, ResourceLink):
        label = block.title or block.name
        return _text(f"[{label}]({block.uri})" + (f" — {block.description}" if block.description else ""))
    if isinstance(block, EmbeddedResource):
        if block.text is not None:
            return _text(_resource_text(block))
        return _text(f"[attached resource {block.uri} ({block.mime_type or 'binary'})]")
    if isinstance(block, ImageContent | AudioContent):
        return _text(f"[{block.type}: {block.mime_type}]")
    return _text(block.text)


def _resource_text(block: EmbeddedResource) -> str:
    kind = f" ({block.mime_type})" if block.mime_type else ""
    return f"Resource {block.uri}{kind}:\n\n{block.text}"


def _data_uri(mime_type: str, data: str) -> str:
    return f"data:{mime_type};base64,{data}"


def _to_openai_part(block: ContentBlock) -> Part:
    if isinstance(block, ImageContent):
        return {"type": "image_url", "image_url": {"url": _data_uri(block.mime_type, block.data)}}
    if isinstance(block, AudioContent) and block.mime_type in _OPENAI_AUDIO_FORMATS:
        return {
            "type": "input_audio",
            "input_audio": {"data": block.data, "format": _OPENAI_AUDIO_FORMATS[block.mime_type]},
        }
    if isinstance(block, EmbeddedResource) and block.blob is not None and block.mime_type:
        if block.mime_type.startswith("image/"):
            return {"type": "image_url", "image_url": {"url": _data_uri(block.mime_type, block.blob)}}
        if block.mime_type == "application/pdf":
            filename = block.uri.rstrip("/").rsplit("/", 1)[-1] or "document.pdf"
            return {"type": "file", "file": {"filename": filename, "file_data": _data_uri(block.mime_type, block.blob)}}
    return _note(block)


def _to_anthropic_part(block: ContentBlock) -> Part:
    if isinstance(block, ImageContent) and block.mime_type in _ANTHROPIC_IMAGE_TYPES:
        return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}
    if isinstance(block, EmbeddedResource):
        if block.text is not None:
            return {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": block.text},
                "title": block.uri,
            }
        if block.blob is not None and block.mime_type in _ANTHROPIC_IMAGE_TYPES:
            return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.blob}}
        if block.blob is not None and block.mime_type == "application/pdf":
            return {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": block.blob},
                "title": block.uri,
            }
    return _note(block)
