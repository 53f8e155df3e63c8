""" "Did you mean …?" for a mistyped command line, read from the error argparse gives it.

Both commands (`mcp-notebook`, `mcp-notebook-lsp`) add this to argparse's own
error, so a misspelled subcommand, option or choice comes with what to type.
The close names are `naming.suggest_names`, the rule `%mcp` follows too. Only
the error path imports this module: `--help` stays light.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from .naming import suggest_names

__all__ = ["Correction", "correction_for", "options_of"]

# argparse's wording (3.11 quotes the value and each choice with repr; later versions may not).
_INVALID_CHOICE = re.compile(r"invalid choice: (?P<typed>.*?) \(choose from (?P<choices>.*)\)$")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<words>.*)$")


def _unquoted(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


class Correction:
    """`typed` was meant to be `meant`; `argv_with` is the command line with that one word changed."""

    __slots__ = ("meant", "typed")

    def __init__(self, typed: str, meant: str) -> None:
        self.typed, self.meant = typed, meant

    def argv_with(self, argv: Sequence[str]) -> list[str]:
        """`argv` with the first word `typed` (or `typed=VALUE`) replaced by `meant`."""
        fixed = list(argv)
        for index, word in enumerate(fixed):
            name, equals, value = word.partition("=")
            if word == self.typed or (equals and name == self.typed and name.startswith("-")):
                fixed[index] = self.meant + equals + value
                break
        return fixed


def options_of(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of `parser` (`-h`, `--help`, `--http`, ...), hidden ones too, in order."""
    # `_actions` is the one list argparse keeps of them (its usage line names `-h` but not `--help`).
    return [option for action in parser._actions for option in action.option_strings]


def correction_for(message: str, options: Sequence[str]) -> Correction | None:
    """What was meant, for argparse's error `message` about a parser with these `options`.

    An invalid choice (a subcommand, or a value from a fixed set) is matched
    against the choices the message lists; an unrecognized option against
    `options`. None when nothing is close.
    """
    if found := _INVALID_CHOICE.search(message):
        typed = _unquoted(found["typed"])
        choices = [_unquoted(choice) for choice in found["choices"].split(",")]
        meant = suggest_names(typed, choices, limit=1)
        return Correction(typed, meant[0]) if meant else None
    if found := _UNRECOGNIZED.search(message):
        for word in found["words"].split():
            typed = word.partition("=")[0]
            if typed.startswith("-") and (meant := suggest_names(typed, options, limit=1)):
                return Correction(typed, meant[0])
    return None
