"""Filling a prompt's `{{placeholders}}` with argument values, and completing argument values.

A placeholder is `{{name}}`, with optional spaces inside the braces; `\\{{` is a
literal `{{`. Substitution is literal and single-pass: a value is inserted as
it is, even when it contains `{{x}}` itself. Nothing is evaluated, formatted or
looked up (no Jinja, no `str.format`).
"""

from __future__ import annotations

import base64
import mimetypes
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from functools import lru_cache

from .exceptions import ArgumentTooLargeError, MissingArgumentsError, ResourceError, UnknownArgumentsError
from .models import (
    CompletionResult,
    ContentBlock,
    EmbeddedResource,
    MessageTemplate,
    PromptMessage,
    PromptSpec,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)
from .naming import closest_names

__all__ = [
    "MAX_COMPLETIONS",
    "PLACEHOLDER_PATTERN",
    "FileReader",
    "argument_values",
    "complete_argument",
    "is_textual_mime_type",
    "placeholders",
    "render_prompt",
    "substitute",
]

# One scan finds both escapes and placeholders, so `\{{x}}` is never read as a placeholder.
PLACEHOLDER_PATTERN = re.compile(r"\\\{\{|\{\{[ \t]*([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*\}\}")

MAX_COMPLETIONS = 100  # the protocol's cap on `completion/complete` values

FileReader = Callable[[PromptSpec, str], bytes]
"""Reads a file named relative to a prompt's notebook, staying inside the served root."""

# Non-`text/*` types whose bytes are text: sent as `text`, not base64.
_TEXTUAL_APPLICATION_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/sql",
        "application/toml",
        "application/yaml",
        "application/x-yaml",
        "application/x-sh",
        "application/x-python",
        "application/x-ipynb+json",
        "application/graphql",
    }
)


def placeholders(text: str) -> tuple[str, ...]:
    """Names of the `{{ name }}` placeholders in `text`, in order of first use, without duplicates."""
    seen: dict[str, None] = {}
    for match in PLACEHOLDER_PATTERN.finditer(text):
        name = match.group(1)
        if name is not None:
            seen.setdefault(name, None)
    return tuple(seen)


_Cut = tuple[tuple[str, ...], tuple[tuple[str | None, str], ...]]
_KEPT_CUT_CHARS = 8192
"""Texts up to this long keep their cut (`_kept_cut`, at most 512 of them): a template is rendered again and again."""


def _cut(text: str) -> _Cut:
    """`text` cut at its placeholders: the literal parts around them, and each placeholder's name (None for
    `\\{{`) and its text as written; one more part than placeholders."""
    parts: list[str] = []
    slots: list[tuple[str | None, str]] = []
    at = 0
    for match in PLACEHOLDER_PATTERN.finditer(text):
        parts.append(text[at : match.start()])
        slots.append((match.group(1), match.group(0)))
        at = match.end()
    parts.append(text[at:])
    return tuple(parts), tuple(slots)


_kept_cut = lru_cache(maxsize=512)(_cut)


def substitute(text: str, values: Mapping[str, str], names: Collection[str] | None = None) -> str:
    """`text` with its placeholders replaced by `values`, in a single literal pass.

    Only placeholders whose name is in `names` (every name when `names` is None)
    and in `values` are filled; any other `{{…}}` stays as written. `\\{{`
    becomes `{{`. For example `substitute("Hi {{ who }} \\{{x}}", {"who": "{{x}}"})`
    gives `"Hi {{x}} {{x}}"`.
    """
    if "{{" not in text:  # no placeholder, nothing escaped
        return text
    parts, slots = _kept_cut(text) if len(text) <= _KEPT_CUT_CHARS else _cut(text)
    out = [parts[0]]
    for index, (name, written) in enumerate(slots, start=1):
        if name is None:
            out.append("{{")
        elif (names is None or name in names) and name in values:
            out.append(values[name])
        else:
            out.append(written)
        out.append(parts[index])
    return "".join(out)


def is_textual_mime_type(mime_type: str | None) -> bool:
    """Whether a file of this type is sent as text (when it decodes as UTF-8) rather than base64."""
    if mime_type is None:
        return True  # unknown type: try UTF-8 and fall back to base64
    base = mime_type.split(";", 1)[0].strip().lower()
    return (
        base.startswith("text/")
        or base in _TEXTUAL_APPLICATION_TYPES
        or base.endswith("+json")
        or base.endswith("+xml")
        or base.endswith("+yaml")
    )


def check_arguments(spec: PromptSpec, given: Mapping[str, str]) -> None:
    """Raise the `PromptError` for names `spec` does not declare, then for required ones `given` lacks."""
    declared = [arg.name for arg in spec.arguments]
    unknown = [name for name in given if name not in declared]
    if unknown:
        raise UnknownArgumentsError(spec.name, unknown, declared, closest_names(unknown, declared))
    missing = [arg.name for arg in spec.arguments if arg.required and arg.name not in given]
    if missing:
        raise MissingArgumentsError(spec.name, missing)


def argument_values(spec: PromptSpec, arguments: Mapping[str, str] | None, max_argument_bytes: int) -> dict[str, str]:
    """The value of each of `spec`'s arguments for `arguments`: the one given, or its default, or "".

    Raises as `render_prompt` does: for unknown names, then missing ones, then a value too large.
    """
    given = arguments or {}
    values: dict[str, str] = {}
    taken = 0
    missing = False
    long: list[str] = []  # given values that may be too large: at most 4 bytes a character in UTF-8
    for arg in spec.arguments:
        if arg.name in given:
            value = values[arg.name] = given[arg.name]
            taken += 1
            if len(value) * 4 > max_argument_bytes:
                long.append(arg.name)
        elif arg.required:
            missing = True
        else:
            values[arg.name] = arg.default if arg.default is not None else ""
    if missing or taken != len(given) or len(values) != len(spec.arguments):  # (a name declared twice counts twice)
        check_arguments(spec, given)
    for name in long:
        size = len(values[name].encode("utf-8", "surrogatepass"))
        if size > max_argument_bytes:
            raise ArgumentTooLargeError(spec.name, name, size, max_argument_bytes)
    return values


def _fill_block(content: ContentBlock, values: Mapping[str, str], names: Collection[str]) -> ContentBlock:
    def fill(text: str | None) -> str | None:
        return None if text is None else substitute(text, values, names)

    if isinstance(content, TextContent):  # the usual block: made directly, `replace` costs several times more
        return TextContent(substitute(content.text, values, names), content.annotations, content.meta)
    if isinstance(content, EmbeddedResource):
        return replace(content, uri=substitute(content.uri, values, names), text=fill(content.text))
    if isinstance(content, ResourceLink):
        return replace(
            content,
            uri=substitute(content.uri, values, names),
            name=substitute(content.name, values, names),
            title=fill(content.title),
            description=fill(content.description),
        )
    return content  # images and audio carry no text to fill


def _embed_file(spec: PromptSpec, content: EmbeddedResource, path: str, read_file: FileReader | None) -> ContentBlock:
    if read_file is None:
        message = f"Prompt {spec.name!r} embeds the file {path!r}, but no files are served"
        raise ResourceError(content.uri or path, message)
    data = read_file(spec, path)
    mime_type = content.mime_type or mimetypes.guess_type(path, strict=False)[0]
    if is_textual_mime_type(mime_type):
        try:
            return replace(content, mime_type=mime_type or "text/plain", text=data.decode("utf-8"), blob=None)
        except UnicodeDecodeError:
            pass
    blob = base64.b64encode(data).decode("ascii")
    return replace(content, mime_type=mime_type or "application/octet-stream", text=None, blob=blob)


def _render_message(
    spec: PromptSpec,
    template: MessageTemplate,
    values: Mapping[str, str],
    read_file: FileReader | None,
) -> PromptMessage:
    names = values.keys()
    content = _fill_block(template.content, values, names) if template.substitute else template.content
    if template.path is not None and isinstance(content, EmbeddedResource):
        path = substitute(template.path, values, names) if template.substitute else template.path
        content = _embed_file(spec, content, path, read_file)
    return PromptMessage(role=template.role, content=content)


def render_prompt(
    spec: PromptSpec,
    arguments: Mapping[str, str] | None,
    *,
    read_file: FileReader | None = None,
    max_argument_bytes: int = 1_000_000,
) -> RenderedPrompt:
    """The answer to `prompts/get`: `spec`'s messages with `arguments` filled in.

    Raises `UnknownArgumentsError` for names the prompt does not declare,
    `MissingArgumentsError` (listing all of them) for absent required ones and
    `ArgumentTooLargeError` for a value over `max_argument_bytes` (UTF-8). An
    absent optional argument renders as its default, or as "". Files embedded
    by path are read through `read_file`, which enforces the served root.
    """
    values = argument_values(spec, arguments, max_argument_bytes)
    messages = tuple(_render_message(spec, template, values, read_file) for template in spec.messages)
    return RenderedPrompt(messages=messages, description=spec.description, name=spec.name)


def complete_argument(
    spec: PromptSpec,
    argument: str,
    value: str,
    context: Mapping[str, str] | None = None,
) -> CompletionResult:
    """Static completions of one argument that start with `value` (case-insensitive), at most 100.

    `context` (the arguments already chosen) is accepted for richer sources;
    static completions do not depend on it. An unknown argument gets no values.
    """
    del context  # static completions ignore the other arguments
    arg = spec.argument(argument)
    if arg is None:
        return CompletionResult(values=(), total=0, has_more=False)
    prefix = value.casefold()
    matches = [candidate for candidate in arg.completions if candidate.casefold().startswith(prefix)]
    return CompletionResult(
        values=tuple(matches[:MAX_COMPLETIONS]),
        total=len(matches),
        has_more=len(matches) > MAX_COMPLETIONS,
    )
