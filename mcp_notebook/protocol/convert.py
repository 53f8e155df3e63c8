"""Translation between our prompt model and the SDK's `mcp_types`, both ways.

`to_mcp_*` build what a server sends, for one negotiated protocol revision:
fields the revision does not define are left out (see `revisions`), and
content blocks it cannot carry are degraded to text so the message still
makes sense:

* audio before 2025-03-26 becomes a text note naming the type and size
  (`[audio/wav, 1234 bytes: audio needs MCP 2025-03-26 or newer]`), keeping
  the message count and order;
* a resource_link before 2025-06-18 becomes a text block with a Markdown
  link (`[title](uri)`, then the description), which every client can show.

`from_mcp_*` read what a server sent, completely (every content block,
annotations, icons, `_meta`), for the client side. An embedded resource's
`meta` is the block's `_meta`; a resource read result's `meta` is the
contents' `_meta`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from ..models import (
    Annotations,
    AudioContent,
    CompletionResult,
    ContentBlock,
    EmbeddedResource,
    Icon,
    ImageContent,
    PromptArgument,
    PromptMessage,
    PromptSpec,
    RenderedPrompt,
    ResourceInfo,
    ResourceLink,
    TextContent,
)
from .revisions import LATEST_REVISION, supports

__all__ = [
    "ARGUMENT_DEFAULTS_META_KEY",
    "EntryFields",
    "from_mcp_annotations",
    "from_mcp_completion",
    "from_mcp_content",
    "from_mcp_get_prompt_result",
    "from_mcp_icon",
    "from_mcp_prompt",
    "from_mcp_prompt_argument",
    "from_mcp_prompt_message",
    "to_mcp_annotations",
    "to_mcp_completion",
    "to_mcp_content",
    "to_mcp_get_prompt_result",
    "to_mcp_icon",
    "to_mcp_prompt",
    "to_mcp_prompt_entry",
    "to_mcp_prompt_message",
    "to_mcp_resource",
    "to_mcp_resource_contents",
]

MAX_COMPLETION_VALUES = 100

ARGUMENT_DEFAULTS_META_KEY = "io.github.mcp-notebook/argumentDefaults"
"""The key of a prompt's `_meta` that maps argument names to their defaults (text)."""
_PLAIN_DEFAULT = 60


def _meta(meta: Mapping[str, Any] | None, revision: str) -> dict[str, Any] | None:
    return dict(meta) if meta and supports(revision, "meta") else None


def _title(title: str | None, revision: str) -> str | None:
    return title if supports(revision, "title") else None


def _icons(icons: tuple[Icon, ...] | None, revision: str) -> list[types.Icon] | None:
    return [to_mcp_icon(icon) for icon in icons] if icons and supports(revision, "icons") else None


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


# --- model -> mcp_types -------------------------------------------------------------------------------------------


def to_mcp_icon(icon: Icon) -> types.Icon:
    return types.Icon(
        src=icon.src,
        mime_type=icon.mime_type,
        sizes=list(icon.sizes) if icon.sizes is not None else None,
        theme=icon.theme,
    )


def to_mcp_annotations(annotations: Annotations | None, revision: str = LATEST_REVISION) -> types.Annotations | None:
    """`audience` and `priority` exist in every revision; `lastModified` since 2025-06-18."""
    if annotations is None:
        return None
    last_modified = annotations.last_modified if supports(revision, "last_modified") else None
    if annotations.audience is None and annotations.priority is None and last_modified is None:
        return None
    return types.Annotations(
        audience=list(annotations.audience) if annotations.audience is not None else None,
        priority=annotations.priority,
        last_modified=last_modified,
    )


def _default_words(default: str, *, alone: bool = False) -> str:
    """How an argument's default reads in its description: `(default: Python)`, or `Default: Python` alone.

    A value that would not read back unambiguously (empty, spaces at either
    end, several lines, long) is shown JSON-quoted, cut at 60 characters.
    """
    plain = default and default == default.strip() and "\n" not in default and len(default) <= _PLAIN_DEFAULT
    shown = default if plain else json.dumps(_cut(default), ensure_ascii=False)
    return f"Default: {shown}" if alone else f"(default: {shown})"


def _cut(text: str) -> str:
    return text if len(text) <= _PLAIN_DEFAULT else text[: _PLAIN_DEFAULT - 1] + "…"


def _described_default(description: str | None, default: str | None) -> str | None:
    if default is None:
        return description
    return f"{description} {_default_words(default)}" if description else _default_words(default, alone=True)


def _prompt_meta(meta: Mapping[str, Any] | None, defaults: Mapping[str, str], revision: str) -> dict[str, Any] | None:
    """A prompt's `_meta` at `revision`: its own, and its arguments' `defaults` (name -> default) under their key."""
    # MCP's PromptArgument has no `_meta` in any revision, so the defaults ride on the prompt's `_meta`.
    merged = dict(meta or {})
    if defaults:
        merged[ARGUMENT_DEFAULTS_META_KEY] = dict(defaults)
    return _meta(merged, revision)


@dataclass(frozen=True, slots=True)
class EntryFields:
    """What a revision's `prompts/list` entries carry beyond names, descriptions and arguments."""

    title: bool
    icons: bool

    @staticmethod
    def of(revision: str) -> EntryFields:
        return EntryFields(title=supports(revision, "title"), icons=supports(revision, "icons"))


def to_mcp_prompt_entry(
    spec: PromptSpec, revision: str = LATEST_REVISION, fields: EntryFields | None = None
) -> dict[str, Any]:
    """A prompt's `prompts/list` entry in its wire form (plain JSON values): the one builder of an entry.

    Empty `arguments` are omitted (some clients skip prompts with `[]`); an argument's default, which MCP has no
    field for, is told in words in its description and carried in the prompt's `_meta`. A listing makes this
    for every prompt, so it is lean: one pass over the arguments, no model per prompt; `fields` may be given
    once for many entries of one revision.
    """
    fields = fields or EntryFields.of(revision)
    entry: dict[str, Any] = {"name": spec.name}
    if fields.title and spec.title is not None:
        entry["title"] = spec.title
    if spec.description is not None:
        entry["description"] = spec.description
    defaults: dict[str, str] = {}
    if spec.arguments:
        listed: list[dict[str, Any]] = []
        for argument in spec.arguments:
            item: dict[str, Any] = {"name": argument.name}
            if fields.title and argument.title is not None:
                item["title"] = argument.title
            description = argument.description
            if argument.default is not None:
                description = _described_default(description, argument.default)
                defaults[argument.name] = argument.default
            if description is not None:
                item["description"] = description
            item["required"] = argument.required
            listed.append(item)
        entry["arguments"] = listed
    if spec.icons and fields.icons:
        entry["icons"] = [
            to_mcp_icon(icon).model_dump(by_alias=True, mode="json", exclude_none=True) for icon in spec.icons
        ]
    meta = _prompt_meta(spec.meta, defaults, revision)
    if meta is not None:
        entry["_meta"] = meta
    return entry


def to_mcp_prompt(spec: PromptSpec, revision: str = LATEST_REVISION) -> types.Prompt:
    """A `prompts/list` entry as the SDK's model: `to_mcp_prompt_entry`, validated."""
    return types.Prompt.model_validate(to_mcp_prompt_entry(spec, revision))


def to_mcp_resource_contents(
    resource: EmbeddedResource, revision: str = LATEST_REVISION
) -> types.TextResourceContents | types.BlobResourceContents:
    """The `resource` of an embedded block, or one entry of `resources/read` contents."""
    meta = _meta(resource.meta, revision)
    if resource.blob is not None:
        return types.BlobResourceContents(
            uri=resource.uri, mime_type=resource.mime_type, blob=resource.blob, _meta=meta
        )
    return types.TextResourceContents(
        uri=resource.uri, mime_type=resource.mime_type, text=resource.text or "", _meta=meta
    )


def _degraded_audio(block: AudioContent, revision: str) -> types.TextContent:
    note = f"[{block.mime_type}, {_decoded_size(block.data)} bytes: audio needs MCP 2025-03-26 or newer]"
    return types.TextContent(text=note, annotations=to_mcp_annotations(block.annotations, revision))


def _degraded_link(block: ResourceLink, revision: str) -> types.TextContent:
    text = f"[{block.title or block.name}]({block.uri})"
    if block.description:
        text += f"\n\n{block.description}"
    return types.TextContent(text=text, annotations=to_mcp_annotations(block.annotations, revision))


def to_mcp_content(block: ContentBlock, revision: str = LATEST_REVISION) -> types.ContentBlock:
    """One content block as `revision` can carry it (see the module docstring for degradations)."""
    annotations = to_mcp_annotations(block.annotations, revision)
    meta = _meta(block.meta, revision)
    if isinstance(block, TextContent):
        return types.TextContent(text=block.text, annotations=annotations, _meta=meta)
    if isinstance(block, ImageContent):
        return types.ImageContent(data=block.data, mime_type=block.mime_type, annotations=annotations, _meta=meta)
    if isinstance(block, AudioContent):
        if not supports(revision, "audio"):
            return _degraded_audio(block, revision)
        return types.AudioContent(data=block.data, mime_type=block.mime_type, annotations=annotations, _meta=meta)
    if isinstance(block, ResourceLink):
        if not supports(revision, "resource_link"):
            return _degraded_link(block, revision)
        return types.ResourceLink(
            uri=block.uri,
            name=block.name,
            title=block.title,
            description=block.description,
            mime_type=block.mime_type,
            size=block.size,
            icons=_icons(block.icons, revision),
            annotations=annotations,
            _meta=meta,
        )
    # The resource's own `_meta` is left out: our model keeps one `meta`, the block's.
    contents = to_mcp_resource_contents(EmbeddedResource(block.uri, block.mime_type, block.text, block.blob), revision)
    return types.EmbeddedResource(resource=contents, annotations=annotations, _meta=meta)


def to_mcp_prompt_message(message: PromptMessage, revision: str = LATEST_REVISION) -> types.PromptMessage:
    return types.PromptMessage(role=message.role, content=to_mcp_content(message.content, revision))


def to_mcp_get_prompt_result(rendered: RenderedPrompt, revision: str = LATEST_REVISION) -> types.GetPromptResult:
    """The `prompts/get` result. Result-level `_meta` exists in every revision."""
    return types.GetPromptResult(
        description=rendered.description,
        messages=[to_mcp_prompt_message(message, revision) for message in rendered.messages],
        _meta=dict(rendered.meta) if rendered.meta else None,
    )


def to_mcp_completion(result: CompletionResult) -> types.Completion:
    """At most 100 values, as the protocol requires; `hasMore` says when some were cut."""
    values = list(result.values[:MAX_COMPLETION_VALUES])
    has_more = result.has_more or len(result.values) > MAX_COMPLETION_VALUES
    return types.Completion(values=values, total=result.total, has_more=has_more)


def to_mcp_resource(info: ResourceInfo, revision: str = LATEST_REVISION) -> types.Resource:
    return types.Resource(
        uri=info.uri,
        name=info.name,
        title=_title(info.title, revision),
        description=info.description,
        mime_type=info.mime_type,
        size=info.size,
    )


# --- mcp_types -> model -------------------------------------------------------------------------------------------


def from_mcp_icon(icon: types.Icon) -> Icon:
    return Icon(
        src=icon.src,
        mime_type=icon.mime_type,
        sizes=tuple(icon.sizes) if icon.sizes is not None else None,
        theme=icon.theme,
    )


def _from_icons(icons: list[types.Icon] | None) -> tuple[Icon, ...] | None:
    return tuple(from_mcp_icon(icon) for icon in icons) if icons else None


def from_mcp_annotations(annotations: types.Annotations | None) -> Annotations | None:
    if annotations is None:
        return None
    return Annotations(
        audience=tuple(annotations.audience) if annotations.audience is not None else None,
        priority=annotations.priority,
        last_modified=annotations.last_modified,
    )


def from_mcp_prompt_argument(argument: types.PromptArgument, default: str | None = None) -> PromptArgument:
    """`required` defaults to false on the wire (our model's default is true).

    `default` is the one the prompt's `_meta` declares; the words that told it
    in the description are taken off again, so the description is the author's.
    """
    description = argument.description
    if default is not None and description is not None:
        if description == _default_words(default, alone=True):
            description = None
        else:
            description = description.removesuffix(" " + _default_words(default))
    return PromptArgument(
        name=argument.name,
        title=argument.title,
        description=description,
        required=bool(argument.required),
        default=default,
    )


def _argument_defaults(meta: Mapping[str, Any] | None) -> dict[str, str]:
    """The argument defaults a prompt's `_meta` declares (text values only; anything else is ignored)."""
    declared = (meta or {}).get(ARGUMENT_DEFAULTS_META_KEY)
    if not isinstance(declared, Mapping):
        return {}
    return {name: value for name, value in declared.items() if isinstance(name, str) and isinstance(value, str)}


def from_mcp_prompt(prompt: types.Prompt, *, origin: str | None = None) -> PromptSpec:
    """A listed prompt, without templates (they live on the server); `origin` names the server.

    Argument defaults declared in `_meta` move onto the arguments (and out of `meta`).
    """
    defaults = _argument_defaults(prompt.meta)
    return PromptSpec(
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=tuple(from_mcp_prompt_argument(arg, defaults.get(arg.name)) for arg in prompt.arguments or ()),
        icons=_from_icons(prompt.icons) or (),
        meta={k: v for k, v in prompt.meta.items() if k != ARGUMENT_DEFAULTS_META_KEY} or None if prompt.meta else None,
        origin=origin,
    )


def from_mcp_content(block: types.ContentBlock) -> ContentBlock:
    annotations = from_mcp_annotations(block.annotations)
    meta = dict(block.meta) if block.meta else None
    if isinstance(block, types.TextContent):
        return TextContent(text=block.text, annotations=annotations, meta=meta)
    if isinstance(block, types.ImageContent):
        return ImageContent(data=block.data, mime_type=block.mime_type, annotations=annotations, meta=meta)
    if isinstance(block, types.AudioContent):
        return AudioContent(data=block.data, mime_type=block.mime_type, annotations=annotations, meta=meta)
    if isinstance(block, types.ResourceLink):
        return ResourceLink(
            uri=block.uri,
            name=block.name,
            title=block.title,
            description=block.description,
            mime_type=block.mime_type,
            size=block.size,
            icons=_from_icons(block.icons),
            annotations=annotations,
            meta=meta,
        )
    resource = block.resource
    text = resource.text if isinstance(resource, types.TextResourceContents) else None
    blob = resource.blob if isinstance(resource, types.BlobResourceContents) else None
    return EmbeddedResource(
        uri=resource.uri, mime_type=resource.mime_type, text=text, blob=blob, annotations=annotations, meta=meta
    )


def from_mcp_prompt_message(message: types.PromptMessage) -> PromptMessage:
    return PromptMessage(role=message.role, content=from_mcp_content(message.content))


def from_mcp_get_prompt_result(result: types.GetPromptResult, *, name: str | None = None) -> RenderedPrompt:
    return RenderedPrompt(
        messages=tuple(from_mcp_prompt_message(message) for message in result.messages),
        description=result.description,
        name=name,
        meta=dict(result.meta) if result.meta else None,
    )


def from_mcp_completion(completion: types.Completion) -> CompletionResult:
    return CompletionResult(values=tuple(completion.values), total=completion.total, has_more=bool(completion.has_more))
