"""A magic call built from a prompt's arguments, each value data for its own option.

`build_invocation` turns documentation-mode arguments into the line to paste
(switches that are true, options and positionals that are set, each value
quoted, and no word of a value allowed to look like an option);
`build_live_invocation` first checks every value against the magic's
`live_policy`, for a magic that is about to run.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .live_policy import (
    InvalidMagicArgumentError,
    LivePolicy,
    check_line_words,
    check_parser_word,
    check_value,
)

if TYPE_CHECKING:
    from .magics import MagicInfo, MagicOption

__all__ = ["ESCAPES", "MagicInvocation", "MagicKind", "build_invocation", "build_live_invocation"]

MagicKind = Literal["line", "cell"]
ESCAPES: Mapping[MagicKind, str] = {"line": "%", "cell": "%%"}

_FALSE_WORDS = frozenset({"", "0", "false", "no", "off", "n", "f"})


@dataclass(frozen=True, slots=True)
class MagicInvocation:
    """A magic call built from prompt arguments: what to run, or to paste into a cell."""

    name: str
    kind: MagicKind
    line: str
    body: str | None = None

    @property
    def source(self) -> str:
        head = f"{ESCAPES[self.kind]}{self.name}" + (f" {self.line}" if self.line else "")
        return head if self.kind == "line" else f"{head}\n{self.body or ''}"


def _words_of(option: MagicOption, value: str) -> list[str]:
    """The words of one value: several, split the shell way, for an argument that takes several; else one."""
    if not option.multiple:
        return [value]  # one word is quoted as one, spaces and all
    try:
        return shlex.split(value)
    except ValueError:  # an unbalanced quote: the words as typed
        return value.split()


def _value_words(prompt: str, option: MagicOption, value: str) -> list[str]:
    """The quoted words of one option's or positional's value; none of them may look like an option."""
    words = _words_of(option, value)
    for word in words:
        check_parser_word(prompt, option, word.lstrip())
    return [shlex.quote(word) for word in words]


def build_invocation(info: MagicInfo, values: Mapping[str, str], prompt: str | None = None) -> MagicInvocation:
    """The magic call the arguments ask for: switches that are true, options and positionals that are set.

    Every value is data for its own option: quoted word by word, and refused
    (`InvalidMagicArgumentError`) when a word starts with `-`.
    """
    prompt = prompt or info.title
    body_name = info.body_argument
    body = values.get(body_name, "") if body_name is not None else None
    if info.options is None:
        return MagicInvocation(name=info.name, kind=info.kind, line=values.get("line", "").strip(), body=body)
    words: list[str] = []
    positionals: list[str] = []
    for option in info.options:
        value = values.get(option.argument, "")
        if option.flag is None:
            if value.strip():
                positionals.extend(_value_words(prompt, option, value))
        elif not option.takes_value:
            if value.strip().lower() not in _FALSE_WORDS:
                words.append(option.flag)
        elif value.strip():
            words.append(" ".join([option.flag, *_value_words(prompt, option, value)]))
    return MagicInvocation(name=info.name, kind=info.kind, line=" ".join([*words, *positionals]), body=body)


def build_live_invocation(
    info: MagicInfo, policy: LivePolicy, values: Mapping[str, str], prompt: str | None = None
) -> MagicInvocation:
    """The call a client asks a live magic for, every value checked against `policy` first.

    Raises `InvalidMagicArgumentError` (nothing runs) for control characters,
    over-long lines, words that look like options, options not offered live,
    and (for a magic that only reads) any word the magic would not accept.
    """
    prompt = prompt or info.title
    body_name = info.body_argument
    for name, value in values.items():
        check_value(prompt, name, value, body=name == body_name)
        if name in policy.excluded and value.strip():
            raise InvalidMagicArgumentError(prompt, name, f"is not offered live: that option {policy.excluded[name]}")
    body = values.get(body_name, "") if body_name is not None else None
    if info.options is None:
        line = values.get("line", "")
        if policy.effect == "reads":
            line = " ".join(check_line_words(prompt, policy, line))
        return MagicInvocation(name=info.name, kind=info.kind, line=line.strip(), body=body)
    if policy.effect == "reads":
        for option in info.options:
            value = values.get(option.argument, "")
            if not value.strip() or (option.flag is not None and not option.takes_value):
                continue
            accepted = policy.values.get(option.argument)
            if accepted is None:
                raise InvalidMagicArgumentError(prompt, option.argument, "is not offered live")
            pattern, what = accepted
            for word in _words_of(option, value):
                if not pattern.match(word):
                    raise InvalidMagicArgumentError(prompt, option.argument, f"has {word!r}, which is not {what}")
    return build_invocation(info, values, prompt)
