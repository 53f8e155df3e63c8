"""What both command lines (`mcp-notebook`, `mcp-notebook-lsp`) share on top of argparse.

`correction_for` reads argparse's error for a misspelled subcommand, option or
choice and says what was meant, so the error comes with what to type ("did you
mean"); the close names are `naming.suggest_names`, the rule `%mcp` follows
too. `HelpFormatter` is argparse's layout, at most 80 columns wide
(`terminal.py`), without argparse's import of shutil. Only argparse, re and
sys are imported up front, so `--help` stays light; the suggestions are
imported on the error path.
"""

from __future__ import annotations

import argparse
import re

from .terminal import help_columns

TYPE_CHECKING = False  # not typing's: importing typing would make `--help` slower
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Correction", "HelpFormatter", "correction_for", "options_of"]

# argparse's wording (3.11 quotes the value and each choice with repr; later versions may not).
_INVALID_CHOICE = re.compile(r"invalid choice: (?P<typed>.*?) \(choose from (?P<choices>.*)\)$")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<words>.*)$")
_OPTION_WORD = re.compile(r"--?[A-Za-z]")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's layout at `terminal.help_columns()` (at most 80), without argparse's import of shutil."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=help_columns() - 2)  # argparse keeps 2 columns free, as it does by default


def _unquoted(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


class Correction:
    """`typed` was meant to be `meant`; `argv_with` is the command line with that one word changed.

    `whole` says whether that change answers the error itself (else the error is about something else too).
    """

    __slots__ = ("meant", "typed", "whole")

    def __init__(self, typed: str, meant: str, *, whole: bool = True) -> None:
        self.typed, self.meant, self.whole = typed, meant, whole

    def hint(self, prog: str, argv: Sequence[str]) -> str:
        """The line to add to the error: `did you mean X? type: PROG ARGV…` (without `type:` unless `whole`)."""
        if not self.whole:
            return f"did you mean {self.meant}?"
        import shlex

        return f"did you mean {self.meant}? type: {shlex.join([prog, *self.argv_with(argv)])}"

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


def correction_for(message: str, options: Sequence[str], argv: Sequence[str] = ()) -> Correction | None:
    """What was meant, for argparse's error `message` about a parser with these `options`.

    An invalid choice (a subcommand, or a value from a fixed set) is matched
    against the choices the message lists; an unrecognized option against
    `options`. For any other error (a missing PATH said before the unknown
    option), an option word of `argv` that is none of `options` nor the start
    of one is. None when nothing is close.
    """
    from .naming import suggest_names

    if found := _INVALID_CHOICE.search(message):
        typed = _unquoted(found["typed"])
        choices = [_unquoted(choice) for choice in found["choices"].split(",")]
        meant = suggest_names(typed, choices, limit=1)
        return Correction(typed, meant[0]) if meant else None
    found = _UNRECOGNIZED.search(message)
    words = found["words"].split() if found else list(argv[: argv.index("--")] if "--" in argv else argv)
    for word in words:
        typed = word.partition("=")[0]
        if not _OPTION_WORD.match(typed) or any(option.startswith(typed) for option in options):
            continue  # a value (`-1`), a known option, or an abbreviation of one (argparse's allow_abbrev)
        if meant := suggest_names(typed, options, limit=1):
            return Correction(typed, meant[0], whole=found is not None)
    return None
