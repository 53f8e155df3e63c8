"""Which magics may run live for a client, and what a client may pass them.

Allowing a magic with `%mcp serve --live` allows exactly that magic's
documented effect. Arguments are data: the kernel never expands `{expr}` or
`$var` in them (see `ipython.live_magics`), and this module checks every value
before anything runs. Each magic has one policy:

* **reads** — it shows information (variables, the history, an object's
  documentation, a display). Every value is checked against what the magic
  accepts (a type name, a history range, a number); options that would write
  a file (`%history -f`) are not offered live.
* **runs code** — running code, commands or writing files is what it is for
  (`%timeit`, `%%bash`, `%%writefile`, `%pip`). Allowing it lets any client
  that holds the token run code in the kernel; its prompt says so in its
  description and `_meta`.
* **refused** — IPython's other magics change the kernel's state (`%cd`,
  `%reset`, `%config`, `%alias`, …) and never run live.

Magics that neither IPython nor ipykernel provide (an extension's, your own)
are unknown, and treated as running code.

For every magic: a value may not contain control characters (a cell body may
hold newlines and tabs, never NUL), a line is at most `MAX_LINE` characters,
and no word of an option's or positional's value may start with `-` (it would
be read as another option).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from ..exceptions import InvalidMagicArgumentError

if TYPE_CHECKING:
    from .magics import MagicInfo, MagicOption

__all__ = [
    "MAX_LINE",
    "Effect",
    "InvalidMagicArgumentError",
    "LivePolicy",
    "check_line_words",
    "check_parser_word",
    "check_value",
    "is_builtin_magic",
    "live_policy",
    "refusal_reason",
]

Effect = Literal["reads", "runs-code", "unknown"]

MAX_LINE = 4096  # characters of one line magic's argument; a body may be longer (the shared argument limit)

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BODY_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # a body keeps \t, \n and \r
_BUILTIN_MODULES = ("IPython.", "ipykernel.")


@dataclass(frozen=True, slots=True)
class LivePolicy:
    """What a magic may be asked to do live."""

    effect: Effect
    # A magic without a parser takes a free-form line: each word must match `words`; None means no words at all.
    words: re.Pattern[str] | None = None
    max_words: int = 32
    what: str = "a word"  # what a word is, for the error message
    # A magic with a parser: each word of an argument's value must match its pattern (reads only).
    values: Mapping[str, tuple[re.Pattern[str], str]] = field(default_factory=lambda: MappingProxyType({}))
    # Parser arguments not offered live (they would write files), with the reason.
    excluded: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def executes_code(self) -> bool:
        """True when a client can make the kernel run code or commands through this magic."""
        return self.effect != "reads"


_TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,199}\Z")
_OBJECT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,15}\Z")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,199}\Z")
_NUMBER = re.compile(r"[0-9]{1,9}\Z")
_HISTORY_RANGE = re.compile(r"(?:~?[0-9]{1,9}/)?[0-9]{0,9}(?:[-:](?:~?[0-9]{1,9}/)?[0-9]{0,9})?\Z")
_GLOB = re.compile(r"[^\s\-]\S{0,199}\Z")

_NO_FILES = "writes a file"


def _reads_line(words: re.Pattern[str] | None, what: str = "a word", max_words: int = 32) -> LivePolicy:
    return LivePolicy(effect="reads", words=words, what=what, max_words=max_words)


_HISTORY = LivePolicy(
    effect="reads",
    values=MappingProxyType(
        {
            "range": (_HISTORY_RANGE, "a history range such as 4, 4-6, 243/1-5 or ~2/7"),
            "limit": (_NUMBER, "a number of lines"),
            "pattern": (_GLOB, "a glob pattern of history lines"),
        }
    ),
    excluded=MappingProxyType({"filename": _NO_FILES, "overwrite": _NO_FILES}),
)
_DISPLAY = LivePolicy(effect="reads")  # shows its body; what it displays comes back to the client only

# Keyed by title (`%who`, `%%bash`): a line magic and its cell twin can differ.
_READS: Mapping[str, LivePolicy] = MappingProxyType(
    {
        "%who": _reads_line(_TYPE_NAME, "a type name"),
        "%whos": _reads_line(_TYPE_NAME, "a type name"),
        "%who_ls": _reads_line(_TYPE_NAME, "a type name"),
        "%pwd": _reads_line(None),
        "%lsmagic": _reads_line(None),
        "%dhist": _reads_line(_NUMBER, "a number", max_words=2),
        "%env": _reads_line(_VARIABLE, "an environment variable's name", max_words=1),
        "%pinfo": _reads_line(_OBJECT_NAME, "an object's name", max_words=1),
        "%pinfo2": _reads_line(_OBJECT_NAME, "an object's name", max_words=1),
        "%pdoc": _reads_line(_OBJECT_NAME, "an object's name", max_words=1),
        "%pdef": _reads_line(_OBJECT_NAME, "an object's name", max_words=1),
        "%history": _HISTORY,
        "%hist": _HISTORY,
        "%%markdown": _DISPLAY,
        "%%latex": _DISPLAY,
        "%%html": _DISPLAY,
        "%%HTML": _DISPLAY,
        "%%svg": _DISPLAY,
        "%%SVG": _DISPLAY,
    }
)

_RUNS_CODE = frozenset(
    {
        "%timeit",
        "%%timeit",
        "%time",
        "%%time",
        "%prun",
        "%%prun",
        "%run",
        "%debug",
        "%%debug",
        "%%capture",
        "%%bash",
        "%%sh",
        "%%script",
        "%%perl",
        "%%ruby",
        "%%python",
        "%%python2",
        "%%python3",
        "%%pypy",
        "%sx",
        "%%sx",
        "%system",
        "%%system",
        "%%writefile",
        "%%file",
        "%pip",
        "%conda",
        "%mamba",
        "%micromamba",
        "%uv",
        "%load_ext",
        "%reload_ext",
        "%rerun",
    }
)
_CODE = LivePolicy(effect="runs-code")
_UNKNOWN = LivePolicy(effect="unknown")


def is_builtin_magic(info: MagicInfo) -> bool:
    """True for the magics IPython and ipykernel define (their effects are known here)."""
    return info.module is not None and info.module.startswith(_BUILTIN_MODULES)


def live_policy(info: MagicInfo) -> LivePolicy | None:
    """The policy of a magic allowed to run live; None when it may never run live."""
    reads = _READS.get(info.title)
    if reads is not None:
        return reads
    if info.title in _RUNS_CODE:
        return _CODE
    if is_builtin_magic(info):
        return None
    return _UNKNOWN


def refusal_reason(info: MagicInfo) -> str:
    """Why a magic may not run live (for `%mcp serve --live`)."""
    return (
        f"{info.title} changes the kernel's state or files, so clients may not run it; "
        "live magics either read (%who, %whos, %history, %pwd, %env, %pinfo, …) or run code on purpose "
        "(%timeit, %%bash, %pip, …)"
    )


def check_value(prompt: str, argument: str, value: str, *, body: bool = False) -> None:
    """Refuse control characters (a body may hold newlines and tabs) and over-long lines."""
    bad = (_BODY_CONTROL if body else _CONTROL).search(value)
    if bad is not None:
        raise InvalidMagicArgumentError(prompt, argument, f"contains the control character {bad.group()!r}")
    if not body and len(value) > MAX_LINE:
        raise InvalidMagicArgumentError(prompt, argument, f"is {len(value)} characters long; at most {MAX_LINE}")


def check_parser_word(prompt: str, option: MagicOption, word: str) -> None:
    """A word of an option's or positional's value must not look like an option."""
    if word.startswith("-"):
        label = option.flag or "the positional value"
        raise InvalidMagicArgumentError(
            prompt,
            option.argument,
            f"has the word {word!r}, which starts with '-' and would be read as an option, not as {label}'s value",
        )


def check_line_words(prompt: str, policy: LivePolicy, line: str) -> list[str]:
    """The words of a reads-only magic's free-form line, each checked against what the magic accepts."""
    words = line.split()
    if policy.words is None:
        if words:
            raise InvalidMagicArgumentError(prompt, "line", "must be empty: this magic takes no arguments live")
        return words
    if len(words) > policy.max_words:
        raise InvalidMagicArgumentError(prompt, "line", f"has {len(words)} words; at most {policy.max_words}")
    for word in words:
        if not policy.words.match(word):
            raise InvalidMagicArgumentError(prompt, "line", f"has {shlex.quote(word)}, which is not {policy.what}")
    return words
