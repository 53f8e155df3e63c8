"""Reading the `metadata.mcp` fields of a cell into the prompt model, reporting what is malformed.

Every reader takes `where` (how warnings name the cell) and `warn`. A
malformed value is reported and ignored, so the default applies; one bad
field never hides the rest of a notebook.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Literal

from ..models import Annotations, EmbeddedResource, Icon, PromptArgument, ResourceLink, Role
from .outputs import clean_base64
from .reader import exceeds_nesting

__all__ = [
    "ARGUMENT_NAME_PATTERN",
    "CELL_FIELDS",
    "KNOWN_FIELDS",
    "MAX_META_NESTING",
    "PROMPT_FIELDS",
    "to_annotations",
    "to_arguments",
    "to_flag",
    "to_icons",
    "to_link",
    "to_meta",
    "to_resource",
    "to_role",
    "to_text",
]

Warn = Callable[[str], None]

PROMPT_FIELDS = ("title", "description", "arguments", "icons", "_meta")
CELL_FIELDS = ("role", "outputs", "source", "resource", "link", "annotations")
KNOWN_FIELDS = frozenset({"prompt", "skill", *PROMPT_FIELDS, *CELL_FIELDS})  # `skill`: notebook_skills.py

# `_meta` goes to clients as it is written; their JSON parsers and validators recurse.
MAX_META_NESTING = 32

# An argument is only useful when a placeholder can name it (see rendering.PLACEHOLDER_PATTERN).
ARGUMENT_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")

_ARGUMENT_KEYS = frozenset({"name", "title", "description", "required", "default", "completions", "ask"})
_ICON_KEYS = frozenset({"src", "mimeType", "sizes", "theme"})
_RESOURCE_KEYS = frozenset({"uri", "mimeType", "text", "blob", "path"})
_LINK_KEYS = frozenset({"uri", "name", "title", "description", "mimeType"})
_ANNOTATION_KEYS = frozenset({"audience", "priority", "lastModified"})


def _unknown_keys(value: Mapping[str, Any], known: frozenset[str], where: str, warn: Warn) -> None:
    if known.issuperset(value):  # the common case, checked without building anything
        return
    extra = sorted(str(key) for key in value if key not in known)
    if extra:
        warn(f"{where}: unknown keys {', '.join(extra)} ignored (known: {', '.join(sorted(known))})")


def to_text(value: Any, field: str, where: str, warn: Warn) -> str | None:
    """A string field, or None (reported) when it is something else."""
    if value is None or isinstance(value, str):
        return value
    warn(f"{where}: {field} must be a string, ignored")
    return None


def to_meta(value: Any, where: str, warn: Warn) -> Mapping[str, Any] | None:
    """A prompt's `_meta` object, or None (reported) when it is not an object or nests too deeply."""
    if not isinstance(value, Mapping):
        warn(f"{where}: _meta must be an object, ignored")
        return None
    if exceeds_nesting(dict(value), MAX_META_NESTING):
        warn(f"{where}: _meta nests more than {MAX_META_NESTING} levels deep, ignored")
        return None
    return value


def to_flag(value: Any, field: str, default: bool, where: str, warn: Warn) -> bool:
    """A true/false field such as `outputs` or `source`."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    warn(f"{where}: {field} must be true or false, ignored")
    return default


def to_role(value: Any, where: str, warn: Warn) -> Role | None:
    """`"user"` or `"assistant"`, or None when absent or invalid (reported)."""
    if value is None:
        return None
    if value == "user" or value == "assistant":
        return "user" if value == "user" else "assistant"
    warn(f"{where}: role must be 'user' or 'assistant', not {value!r}; ignored")
    return None


def _to_question(value: Any, argument: PromptArgument, where: str, warn: Warn) -> str | None:
    """The question `ask` puts to the user for a missing argument, or None when it is never asked for.

    `true` asks with the argument's description, else its title, else its name.
    Only a required argument is asked for: an optional one has its default.
    """
    if value is None or value is False:
        return None
    if value is True:
        question = argument.description or argument.title or f"Value for {argument.name}"
    elif isinstance(value, str) and value.strip():
        question = value.strip()
    else:
        warn(f"{where}: ask must be a question (a non-empty string) or true/false, ignored")
        return None
    if not argument.required:
        warn(f"{where}: ask only applies to a required argument (an optional one falls back to its default), ignored")
        return None
    return question


def _to_argument(value: Any, where: str, warn: Warn) -> PromptArgument | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        warn(f"{where}: each argument must be an object with a string 'name'; {value!r} ignored")
        return None
    name = value["name"]
    here = f"{where}: argument {name!r}"
    if not ARGUMENT_NAME_PATTERN.match(name):
        warn(f"{here}: a name must start with a letter or '_' and hold only letters, digits, '_', '.', '-'; ignored")
        return None
    _unknown_keys(value, _ARGUMENT_KEYS, here, warn)
    default = to_text(value.get("default"), "default", here, warn)
    required = value.get("required")
    if required is not None and not isinstance(required, bool):
        warn(f"{here}: required must be true or false, ignored")
        required = None
    completions = value.get("completions", [])
    if not isinstance(completions, list) or not all(isinstance(c, str) for c in completions):
        warn(f"{here}: completions must be a list of strings, ignored")
        completions = []
    argument = PromptArgument(
        name=name,
        title=to_text(value.get("title"), "title", here, warn),
        description=to_text(value.get("description"), "description", here, warn),
        # Declared without `required`: required unless it has a default to fall back on.
        required=required if required is not None else default is None,
        default=default,
        completions=tuple(dict.fromkeys(completions)),
    )
    question = _to_question(value.get("ask"), argument, here, warn)
    return replace(argument, ask=question) if question is not None else argument


def to_arguments(value: Any, where: str, warn: Warn) -> tuple[PromptArgument, ...] | None:
    """Declared arguments, or None when `arguments` is not a list (then they are inferred)."""
    if not isinstance(value, list):
        warn(f"{where}: arguments must be a list of objects, ignored")
        return None
    arguments: dict[str, PromptArgument] = {}
    for item in value:
        argument = _to_argument(item, where, warn)
        if argument is None:
            continue
        if argument.name in arguments:
            warn(f"{where}: argument {argument.name!r} is declared twice; the first is kept")
            continue
        arguments[argument.name] = argument
    return tuple(arguments.values())


def _to_icon(value: Any, where: str, warn: Warn) -> Icon | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("src"), str):
        warn(f"{where}: each icon must be an object with a string 'src'; {value!r} ignored")
        return None
    _unknown_keys(value, _ICON_KEYS, f"{where}: icon", warn)
    sizes = value.get("sizes")
    if isinstance(sizes, str):
        sizes = [sizes]
    if sizes is not None and not (isinstance(sizes, list) and all(isinstance(s, str) for s in sizes)):
        warn(f"{where}: icon sizes must be a list of strings such as '48x48', ignored")
        sizes = None
    theme: Literal["light", "dark"] | None = None
    raw_theme = value.get("theme")
    if raw_theme == "light" or raw_theme == "dark":
        theme = "light" if raw_theme == "light" else "dark"
    elif raw_theme is not None:
        warn(f"{where}: icon theme must be 'light' or 'dark', ignored")
    return Icon(
        src=value["src"],
        mime_type=to_text(value.get("mimeType"), "icon mimeType", where, warn),
        sizes=tuple(sizes) if sizes is not None else None,
        theme=theme,
    )


def to_icons(value: Any, where: str, warn: Warn) -> tuple[Icon, ...]:
    """The prompt's icons (MCP `Icon` objects: `{src, mimeType?, sizes?, theme?}`)."""
    if not isinstance(value, list):
        warn(f"{where}: icons must be a list of objects, ignored")
        return ()
    return tuple(icon for item in value if (icon := _to_icon(item, where, warn)) is not None)


def to_annotations(value: Any, where: str, warn: Warn, last_modified: str | None = None) -> Annotations | None:
    """Annotations for a cell's blocks; `last_modified` fills `lastModified` when the cell gives none."""
    if not isinstance(value, Mapping):
        warn(f"{where}: annotations must be an object, ignored")
        return None
    _unknown_keys(value, _ANNOTATION_KEYS, f"{where}: annotations", warn)
    audience: tuple[Role, ...] | None = None
    raw_audience = value.get("audience")
    if raw_audience is not None:
        if isinstance(raw_audience, list) and all(a in ("user", "assistant") for a in raw_audience):
            audience = tuple("user" if a == "user" else "assistant" for a in raw_audience)
        else:
            warn(f"{where}: annotations audience must be a list of 'user' and 'assistant', ignored")
    priority: float | None = None
    raw_priority = value.get("priority")
    if raw_priority is not None:
        if isinstance(raw_priority, int | float) and not isinstance(raw_priority, bool) and 0 <= raw_priority <= 1:
            priority = float(raw_priority)
        else:
            warn(f"{where}: annotations priority must be a number from 0 to 1, ignored")
    stamp = to_text(value.get("lastModified"), "annotations lastModified", where, warn) or last_modified
    return Annotations(audience=audience, priority=priority, last_modified=stamp)


def to_resource(value: Any, where: str, warn: Warn) -> tuple[EmbeddedResource, str | None] | None:
    """An embedded resource and its `path` (a file read at render time), or None when malformed.

    Exactly one of `text`, `blob` (base64) or `path` gives the contents. Without a
    `uri`, a `path` resource gets its URI from the caller (the returned uri is "").
    """
    here = f"{where}: resource"
    if not isinstance(value, Mapping):
        warn(f"{here} must be an object, ignored")
        return None
    _unknown_keys(value, _RESOURCE_KEYS, here, warn)
    given = [key for key in ("text", "blob", "path") if value.get(key) is not None]
    if len(given) != 1:
        warn(f"{here} needs exactly one of text, blob or path (it has {', '.join(given) or 'none'}); ignored")
        return None
    kind = given[0]
    if not isinstance(value[kind], str):
        warn(f"{here}: {kind} must be a string; ignored")
        return None
    uri = value.get("uri")
    if not isinstance(uri, str) or not uri:
        if kind != "path" or uri is not None:
            warn(f"{here} needs a string 'uri' (only a 'path' resource may leave it out); ignored")
            return None
        uri = ""
    blob: str | None = None
    if kind == "blob":
        blob = clean_base64(value["blob"])
        if blob is None:
            warn(f"{here}: blob is not valid base64; ignored")
            return None
    resource = EmbeddedResource(
        uri=uri,
        mime_type=to_text(value.get("mimeType"), "resource mimeType", where, warn),
        text=value["text"] if kind == "text" else None,
        blob=blob,
    )
    return resource, value["path"] if kind == "path" else None


def to_link(value: Any, where: str, warn: Warn) -> ResourceLink | None:
    """A `resource_link` block, or None when `uri` or `name` is missing."""
    here = f"{where}: link"
    if (
        not isinstance(value, Mapping)
        or not isinstance(value.get("uri"), str)
        or not isinstance(value.get("name"), str)
    ):
        warn(f"{here} must be an object with string 'uri' and 'name'; ignored")
        return None
    _unknown_keys(value, _LINK_KEYS, here, warn)
    return ResourceLink(
        uri=value["uri"],
        name=value["name"],
        title=to_text(value.get("title"), "link title", where, warn),
        description=to_text(value.get("description"), "link description", where, warn),
        mime_type=to_text(value.get("mimeType"), "link mimeType", where, warn),
    )
