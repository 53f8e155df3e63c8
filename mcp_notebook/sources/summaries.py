"""Default titles and descriptions of notebook prompts, read from their markdown.

One rule for every source (the folder, the Jupyter extension, a kernel's
`%%prompt`): a placeholder reads as its argument's name in brackets
(`readable`), since clients show a title and a description as they are and
never fill them in: "Say goodbye to [name]." rather than "{{name}}".
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..rendering import placeholders, substitute

__all__ = ["DESCRIPTION_LIMIT", "readable", "to_description", "to_title"]

DESCRIPTION_LIMIT = 200

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)")
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def readable(text: str) -> str:
    """`text` with each `{{name}}` written as `[name]`: a title or a description is read, never filled in."""
    return substitute(text, {name: f"[{name}]" for name in placeholders(text)})


def _prose_lines(markdown: str) -> Iterable[tuple[str, bool]]:
    """Each line outside fenced code, with whether it is a heading."""
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            yield line, bool(_HEADING.match(line))


def to_title(markdown: str) -> str | None:
    """The text of the first heading (`# …`) outside code blocks, or None."""
    for line, is_heading in _prose_lines(markdown):
        heading = _HEADING.match(line) if is_heading else None
        if heading and heading.group(1):
            return readable(heading.group(1))
    return None


def to_description(texts: Iterable[str]) -> str | None:
    """The first sentence of the texts, as plain text (no headings, code, images), at most 200 characters."""
    lines: list[str] = []
    for text in texts:
        for line, is_heading in _prose_lines(text):
            if not is_heading:
                plain = readable(_LINK.sub(r"\1", _IMAGE.sub("", line)))
                lines.append(plain.strip().lstrip(">*-+ ").strip())
    text = " ".join(" ".join(lines).split())
    if not text:
        return None
    sentence = _SENTENCE.match(text)
    text = sentence.group(1) if sentence else text
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1].rstrip() + "…"
