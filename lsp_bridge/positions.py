"""Editor columns (UTF-16, UTF-8 or UTF-32 code units) and Python columns (code points), converted in C.

pygls converts character by character in Python, which costs seconds on a
long line; encoding the text once does the same in C.
"""

from __future__ import annotations

__all__ = ["to_code_points", "to_units"]

_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def _codec(encoding: str | None) -> tuple[str, int]:
    return _CODECS.get(str(encoding or "utf-16").lower(), _CODECS["utf-16"])


def to_units(text: str, encoding: str | None) -> int:
    """How many code units of the editor's encoding `text` takes."""
    if text.isascii():
        return len(text)
    codec, width = _codec(encoding)
    return len(text.encode(codec, "surrogatepass")) // width


def to_code_points(line: str, units: int, encoding: str | None) -> int:
    """The Python column of the editor column `units` on `line` (inside a character: its start)."""
    units = max(0, units)
    if line.isascii():
        return min(units, len(line))
    codec, width = _codec(encoding)
    head = line.encode(codec, "surrogatepass")[: units * width]
    # A character cut in two by the column is dropped: the column is at its start.
    return len(head.decode(codec, "ignore"))
