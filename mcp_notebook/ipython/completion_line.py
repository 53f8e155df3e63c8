"""Where the cursor is on a `%mcp` line (or a `%%prompt` cell's first line): what Tab should complete.

Pure text work, no servers: `read_magic_line` splits the text before the
cursor the way `%mcp` will (shell words, quotes group), tolerating the
unclosed quote of a value still being typed, and says which word is being
typed. `quoted` writes a completion back so that `%mcp` reads it as one word.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

__all__ = ["MagicLine", "quoted", "read_magic_line"]

# `%mcp …`, also as the right-hand side of an assignment (`msgs = %mcp get …`).
_MCP_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\s*=\s*)?%mcp\s+")
_PROMPT_LINE = re.compile(r"^%%prompt\s+")
# Words that need no quotes on a `%mcp` line.
_PLAIN = re.compile(r"[\w@%+=:,./~-]+")


@dataclass(frozen=True, slots=True)
class MagicLine:
    """The words of a magic line before the cursor, and the one being typed.

    `fragment` is the word being typed exactly as it stands in the text (with
    an opening quote, if any), so completions can replace it; `word` is its
    value with quotes removed. `words` are the finished words before it.
    """

    magic: str  # "mcp" or "prompt"
    words: tuple[str, ...]
    fragment: str
    word: str

    @property
    def subcommand(self) -> str | None:
        """For `%mcp`, the subcommand once it is typed (None while it is the word being typed)."""
        return self.words[0] if self.magic == "mcp" and self.words else None

    @property
    def arguments(self) -> tuple[str, ...]:
        """The finished words after the subcommand."""
        return self.words[1:] if self.magic == "mcp" else self.words


def read_magic_line(full_text: str, line: int, before_cursor: str) -> MagicLine | None:
    """The magic line the cursor is on, or None when it is not a `%mcp` line or a `%%prompt` first line."""
    match = _MCP_LINE.match(before_cursor)
    magic = "mcp"
    if match is None:
        match = _PROMPT_LINE.match(before_cursor) if line == 0 and full_text.startswith("%%prompt") else None
        magic = "prompt"
    if match is None:
        return None
    rest = before_cursor[match.end() :]
    start = _last_word_start(rest)
    finished, fragment = rest[:start], rest[start:]
    try:
        words = tuple(shlex.split(finished))
    except ValueError:
        return None  # a quote left open before the word being typed: nothing sensible to offer
    return MagicLine(magic=magic, words=words, fragment=fragment, word=_unquoted(fragment))


def _last_word_start(text: str) -> int:
    """Where the last (possibly unfinished) shell word of `text` starts; len(text) after a space."""
    start, quote, escaped, in_word = len(text), "", False, False
    for index, char in enumerate(text):
        if not in_word and not char.isspace():
            start, in_word = index, True
        if escaped:
            escaped = False
        elif quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                escaped = True
        elif char == "\\":
            escaped = True
        elif char in "'\"":
            quote = char
        elif char.isspace():
            in_word = False
    return start if in_word else len(text)


def _unquoted(fragment: str) -> str:
    for closing in ("", '"', "'"):
        try:
            words = shlex.split(fragment + closing)
        except ValueError:
            continue
        return words[0] if words else ""
    return fragment


def quoted(value: str, typed: str) -> str:
    """`value` as one shell word, in the quoting the user started (`"two words"` after typing `"tw`)."""
    mark = typed[:1]
    if mark == '"':
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if mark == "'":
        return "'" + value.replace("'", "'\\''") + "'"
    if value and _PLAIN.fullmatch(value):
        return value
    return shlex.quote(value)
