"""The bridge's settings, read from `initializationOptions` or `workspace/didChangeConfiguration`.

Either flat or under an `mcpNotebook` key (the editor settings section):

    {"mcpNotebook": {"trigger": "/", "fileTypes": ["markdown", "plaintext"],
                     "images": "placeholder", "maxItems": 100,
                     "diagnostics": true, "diagnosticsDelay": 300, "magics": false}}

`fileTypes` lists LSP language ids; `"*"` (alone or in the list) means every
document. Unknown keys are ignored; a bad value keeps the previous setting and
is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .render import ImageStyle

__all__ = ["ALL_FILE_TYPES", "BridgeSettings", "parse_setting", "to_settings"]

ALL_FILE_TYPES = "*"
_SECTION = "mcpNotebook"


@dataclass(frozen=True, slots=True)
class BridgeSettings:
    """What the user can tune."""

    # The character (or short string) that starts a slash command.
    trigger: str = "/"
    # Language ids where the bridge is active; "*" means all of them.
    file_types: frozenset[str] = frozenset({"markdown", "plaintext"})
    # How images in rendered prompts are written: a placeholder, or a data: URI link.
    images: ImageStyle = "placeholder"
    # At most this many slash commands per completion answer (the list is re-asked as you type).
    max_items: int = 100
    diagnostics: bool = True
    # Seconds to wait after the last keystroke before checking a document.
    diagnostics_delay: float = 0.3
    # Whether a kernel's magic prompts (`magic`, `magic.<name>`) are in the `/` menu; off, they still render.
    magics: bool = False

    def applies_to(self, language_id: str | None) -> bool:
        """True when the bridge should serve a document of this language."""
        if ALL_FILE_TYPES in self.file_types:
            return True
        return language_id is not None and language_id in self.file_types


def _trigger(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= 3 or any(ch.isspace() for ch in value):
        raise ValueError("must be one to three non-space characters")
    return value


def _file_types(value: Any) -> frozenset[str]:
    if value == ALL_FILE_TYPES:
        return frozenset({ALL_FILE_TYPES})
    # A set too: the command line hands over the ids already parsed.
    if not isinstance(value, list | tuple | set | frozenset) or not all(isinstance(v, str) and v for v in value):
        raise ValueError('must be a list of language ids, or "*"')
    return frozenset(value)


def _images(value: Any) -> ImageStyle:
    if value == "placeholder":
        return "placeholder"
    if value == "data-uri":
        return "data-uri"
    raise ValueError('must be "placeholder" or "data-uri"')


def _max_items(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5000:
        raise ValueError("must be a whole number from 1 to 5000")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _delay(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10_000:
        raise ValueError("must be a number of milliseconds from 0 to 10000")
    return float(value) / 1000


_FIELDS = {
    "trigger": ("trigger", _trigger),
    "fileTypes": ("file_types", _file_types),
    "images": ("images", _images),
    "maxItems": ("max_items", _max_items),
    "diagnostics": ("diagnostics", _flag),
    "diagnosticsDelay": ("diagnostics_delay", _delay),
    "magics": ("magics", _flag),
}


def parse_setting(key: str, value: Any) -> Any:
    """One setting's value, checked (`key` as in the options: "maxItems"); ValueError says what is wrong."""
    return _FIELDS[key][1](value)


def to_settings(options: Any, base: BridgeSettings | None = None) -> tuple[BridgeSettings, tuple[str, ...]]:
    """Settings updated from editor options; returns them and a message per rejected value."""
    settings = base or BridgeSettings()
    if not isinstance(options, Mapping):
        return settings, ()
    section = options.get(_SECTION)
    if isinstance(section, Mapping):
        options = section
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, (attribute, parse) in _FIELDS.items():
        if key not in options or options[key] is None:
            continue
        try:
            changes[attribute] = parse(options[key])
        except ValueError as error:
            problems.append(f"mcpNotebook.{key} {error}; keeping {getattr(settings, attribute)!r}")
    return replace(settings, **changes), tuple(problems)
