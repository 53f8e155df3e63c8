"""Turning code cell outputs and markdown attachments into content blocks.

Each output becomes at most one block, in its richest form: `image/png`,
`image/jpeg`, `image/gif`, `image/webp` → image; `audio/*` → audio;
`text/markdown`, `application/json`, `text/plain` → text; `text/html` only
when nothing else is there. Consecutive `stream` outputs of the same stream
are joined (kernels split one print into many), and `error` outputs become
`ename: evalue` and the traceback without ANSI colour codes.
"""

from __future__ import annotations

import binascii
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from ..models import AudioContent, ContentBlock, ImageContent, TextContent

__all__ = [
    "IMAGE_MIME_TYPES",
    "attachment_names",
    "clean_base64",
    "strip_ansi",
    "text_of",
    "to_attachment_blocks",
    "to_output_blocks",
]

Warn = Callable[[str], None]

IMAGE_MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXT_MIME_TYPES = ("text/markdown", "application/json", "text/plain")

# CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks).
_ANSI_PATTERN = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# `attachment:NAME` in a markdown link or image target, up to the closing bracket, quote or space.
_ATTACHMENT_PATTERN = re.compile(r"attachment:([^\s)\"'>]+)")


def text_of(value: Any) -> str:
    """A notebook string field, which nbformat stores as a string or a list of lines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)


def strip_ansi(text: str) -> str:
    """`text` without terminal colour and control sequences."""
    return _ANSI_PATTERN.sub("", text)


def clean_base64(text: str) -> str | None:
    """`text` without whitespace (notebooks wrap base64 over lines), or None when it is not valid base64."""
    data = "".join(text.split())
    try:
        binascii.a2b_base64(data.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        return None
    return data


def _base64_of(value: Any) -> str | None:
    return clean_base64(text_of(value)) or None


def _media_block(mime_type: str, value: Any) -> ContentBlock | None:
    data = _base64_of(value)
    if data is None:
        return None
    if mime_type.startswith("audio/"):
        return AudioContent(data=data, mime_type=mime_type)
    return ImageContent(data=data, mime_type=mime_type)


def _media_types(bundle: Mapping[str, Any]) -> list[str]:
    """The image and audio forms in a mime bundle, richest first: images in our order, then audio."""
    return [m for m in IMAGE_MIME_TYPES if m in bundle] + sorted(m for m in bundle if m.startswith("audio/"))


def _richest_block(bundle: Mapping[str, Any], describe: str, warn: Warn) -> ContentBlock | None:
    """One block for a mime bundle of `display_data` / `execute_result`, or None."""
    for mime_type in _media_types(bundle):
        block = _media_block(mime_type, bundle[mime_type])
        if block is not None:
            return block
        warn(f"{describe}: its {mime_type} data is not valid base64, skipped")
    for mime_type in _TEXT_MIME_TYPES:
        if mime_type in bundle:
            value = bundle[mime_type]
            if mime_type == "application/json" and not isinstance(value, str):
                return TextContent(text=json.dumps(value, indent=2, ensure_ascii=False))
            return TextContent(text=text_of(value))
    if "text/html" in bundle:
        return TextContent(text=text_of(bundle["text/html"]))
    if bundle:
        warn(f"{describe}: no supported form among {', '.join(sorted(bundle))}, skipped")
    return None


def to_output_blocks(outputs: Sequence[Any], *, describe: str, warn: Warn) -> list[ContentBlock]:
    """The content blocks of a code cell's outputs, in order.

    `describe` names the cell in warnings (e.g. "notebook.ipynb: cell 3").
    """
    blocks: list[ContentBlock] = []
    stream_name: str | None = None  # the stream the last block came from, to join split prints
    for number, output in enumerate(outputs, 1):
        where = f"{describe}: output {number}"
        if not isinstance(output, Mapping):
            warn(f"{where}: not an output object, skipped")
            continue
        kind = output.get("output_type")
        if kind == "stream":
            name = str(output.get("name", "stdout"))
            text = text_of(output.get("text"))
            if stream_name == name and blocks and isinstance(blocks[-1], TextContent):
                blocks[-1] = TextContent(text=blocks[-1].text + text)
            elif text:
                blocks.append(TextContent(text=text))
                stream_name = name
            continue
        stream_name = None
        if kind in ("display_data", "execute_result"):
            bundle = output.get("data")
            block = _richest_block(bundle, where, warn) if isinstance(bundle, Mapping) else None
            if block is not None:
                blocks.append(block)
        elif kind == "error":
            traceback = output.get("traceback")
            lines = [strip_ansi(text_of(line)) for line in traceback] if isinstance(traceback, list) else []
            header = strip_ansi(f"{text_of(output.get('ename'))}: {text_of(output.get('evalue'))}")
            blocks.append(TextContent(text="\n".join([header, *lines]) if lines else header))
        else:
            warn(f"{where}: unknown output type {kind!r}, skipped")
    return blocks


def attachment_names(source: str) -> tuple[str, ...]:
    """Names of the attachments a markdown source references (`attachment:NAME`), in order, once each."""
    return tuple(dict.fromkeys(_ATTACHMENT_PATTERN.findall(source)))


def to_attachment_blocks(source: str, attachments: Any, *, describe: str, warn: Warn) -> list[ContentBlock]:
    """An image (or audio) block for each attachment that a markdown cell references."""
    store = attachments if isinstance(attachments, Mapping) else {}
    blocks: list[ContentBlock] = []
    for name in attachment_names(source):
        bundle = store.get(name, store.get(unquote(name)))
        if not isinstance(bundle, Mapping):
            warn(f"{describe}: it references attachment:{name}, which the cell does not have")
            continue
        block = next((b for m in _media_types(bundle) if (b := _media_block(m, bundle[m])) is not None), None)
        if block is None:
            kinds = ", ".join(sorted(bundle)) or "nothing"
            warn(f"{describe}: attachment {name} has no supported image or audio form ({kinds}), skipped")
            continue
        blocks.append(block)
    return blocks
