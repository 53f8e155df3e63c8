"""The Agent Skills format as the Skills extension serves it: `SKILL.md` frontmatter, names, limits, digests."""

from __future__ import annotations

import functools
import hashlib
import mimetypes
import re
from math import isfinite
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SEGMENT",
    "SkillFormatError",
    "digest_of_bytes",
    "mime_type_of",
    "parse_skill_md",
    "split_frontmatter",
    "valid_skill_name",
]

MAX_SKILL_FILES = 512
"""The extension's limit of files per skill, `SKILL.md` included."""
MAX_SKILL_BYTES = 16 * 1024 * 1024
"""The extension's limit of bytes per skill, over all its files."""

_NAME = re.compile(r"^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")  # a path segment that needs no escaping in a URI
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class SkillFormatError(ValueError):
    """A `SKILL.md` that is not a valid skill; the message says what to change."""


@functools.cache
def _loader() -> type[yaml.SafeLoader]:
    """YAML as JSON knows it: dates stay the strings they were written as (JSON has no date). libyaml's parser
    where it is built in (twenty times faster than the pure-Python one), else that one. Made, and YAML imported,
    the first time a `SKILL.md` is read: a start that takes every skill from the index never needs it."""
    import yaml

    safe: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(safe):  # type: ignore[valid-type,misc]
        pass

    _Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in safe.yaml_implicit_resolvers.items()
    }
    return _Loader


def valid_skill_name(name: str) -> bool:
    """Whether `name` follows the Agent Skills naming rules: 1-64 of a-z, 0-9 and single inner hyphens."""
    return bool(_NAME.match(name))


def digest_of_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def mime_type_of(path: str) -> str | None:
    if path.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(path, strict=False)[0]


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """The YAML frontmatter of a Markdown text (None when it has none) and the text after it."""
    text = text.removeprefix("\ufeff")
    match = _FRONTMATTER.match(text)
    return (None, text) if match is None else (match.group(1), text[match.end() :].lstrip("\r\n"))


def parse_skill_md(data: bytes | str) -> dict[str, Any]:
    """The frontmatter of a `SKILL.md`, as JSON values; raises `SkillFormatError` saying what is wrong.

    Served and read alike: a server checks its skills with it, a client what it reads against the entry.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise SkillFormatError("its SKILL.md is not UTF-8 text") from None
    head, _body = split_frontmatter(text)
    if head is None:
        raise SkillFormatError(
            "SKILL.md does not begin with YAML frontmatter: start it with a '---' line, then 'name: ...' and "
            "'description: ...', then a '---' line"
        )
    import yaml

    try:
        frontmatter = yaml.load(head, Loader=_loader())
    except yaml.YAMLError as error:
        raise SkillFormatError(f"its frontmatter is not valid YAML ({str(error).splitlines()[0]})") from None
    except (ValueError, RecursionError) as error:  # a number of thousands of digits, nesting past Python's stack
        raise SkillFormatError(f"its frontmatter holds a value too large to read ({error})") from None
    if not isinstance(frontmatter, dict):
        raise SkillFormatError("its frontmatter is not a mapping of fields (name: ..., description: ...)")
    _check_json(frontmatter, limit=2 * len(head) + 64)
    for field in ("name", "description"):
        value = frontmatter.get(field)
        if not isinstance(value, str) or not value.strip():
            raise SkillFormatError(f"its frontmatter has no {field!r} (the Agent Skills format requires one)")
    return frontmatter


def _check_json(frontmatter: dict[str, Any], limit: int) -> None:
    """Refuse values JSON cannot carry, and values far larger than their text (YAML aliases repeating them)."""
    pending: list[Any] = [frontmatter]
    size = 0
    while pending:
        value = pending.pop()
        size += 1 + (len(value) if isinstance(value, str) else 0)
        if isinstance(value, dict | list):
            pending.extend(value.values() if isinstance(value, dict) else value)
        keys = value if isinstance(value, dict) else ()
        json_value = isinstance(value, str | int | dict | list | None) or (isinstance(value, float) and isfinite(value))
        if not json_value or not all(isinstance(key, str) for key in keys):
            raise SkillFormatError("its frontmatter holds values JSON cannot carry (keys must be text)")
        if size > limit:
            raise SkillFormatError(
                "its frontmatter's values are far larger than its text (YAML aliases repeat them): write them out"
            )
