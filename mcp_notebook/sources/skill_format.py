"""The Agent Skills format as the Skills extension serves it: `SKILL.md` frontmatter, names, limits, digests."""

from __future__ import annotations

import hashlib
import json
import mimetypes
import re
from typing import Any

import yaml

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SEGMENT",
    "SkillFormatError",
    "digest_of_bytes",
    "mime_type_of",
    "parse_skill_md",
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


# libyaml's parser where it is built in (twenty times faster than the pure-Python one), else that one.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):  # type: ignore[valid-type,misc]
    """YAML as JSON knows it: dates stay the strings they were written as (JSON has no date)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
}


def valid_skill_name(name: str) -> bool:
    """Whether `name` follows the Agent Skills naming rules: 1-64 of a-z, 0-9 and single inner hyphens."""
    return bool(_NAME.match(name))


def digest_of_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def mime_type_of(path: str) -> str | None:
    if path.endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(path, strict=False)[0]


def parse_skill_md(text: str) -> dict[str, Any]:
    """The frontmatter of a `SKILL.md`, as JSON-ready values; raises `SkillFormatError` saying what is wrong."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        raise SkillFormatError(
            "SKILL.md does not begin with YAML frontmatter: start it with a '---' line, then 'name: ...' and "
            "'description: ...', then a '---' line"
        )
    try:
        frontmatter = yaml.load(match.group(1), Loader=_Loader)
    except yaml.YAMLError as error:
        raise SkillFormatError(f"its frontmatter is not valid YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(frontmatter, dict):
        raise SkillFormatError("its frontmatter is not a mapping of fields (name: ..., description: ...)")
    try:
        json.dumps(frontmatter, allow_nan=False)
        checked: dict[str, Any] = json.loads(json.dumps(frontmatter))
    except (TypeError, ValueError):
        raise SkillFormatError("its frontmatter holds values JSON cannot carry (keys must be text)") from None
    if checked != frontmatter:
        raise SkillFormatError("its frontmatter holds values JSON cannot carry (keys must be text)")
    for field in ("name", "description"):
        value = frontmatter.get(field)
        if not isinstance(value, str) or not value.strip():
            raise SkillFormatError(f"its frontmatter has no {field!r} (the Agent Skills format requires one)")
    return checked
