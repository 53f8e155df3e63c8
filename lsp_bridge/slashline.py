"""The slash line: `/server:prompt name=value lang="two words"`, parsed.

A slash command starts with the trigger character (default `/`) at a *slash
position*: the start of a line or just after whitespace (so `a/b` and
`http://x` are not commands). Its first token is the command (`server:prompt`,
or a bare `prompt`); the following tokens are its arguments `name=value`. A
value may be quoted with `"` or `'`; inside quotes a backslash escapes the next
character. The command ends with its last argument: words after it are
ordinary text (*trailing*, kept when the command is rendered), words between
arguments are *stray* (diagnostics point at both).

All columns are indexes into the Python string (code points); converting to
editor units is the server's job. Nothing here imports pygls.

The work per line is bounded, whatever the document holds: a line longer
than `MAX_LINE_LENGTH` characters is not a slash line, and a command stops
being read after `MAX_ARGUMENTS` arguments (it is marked `truncated`, and the
rest of the line is left alone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "MAX_ARGUMENTS",
    "MAX_LINE_LENGTH",
    "ArgumentNameContext",
    "ArgumentValueContext",
    "CommandNameContext",
    "CursorContext",
    "SlashArgument",
    "SlashCommand",
    "StrayToken",
    "context_at",
    "find_commands",
    "format_invocation",
    "quote_value",
    "split_command_name",
]

_NEEDS_QUOTES = frozenset(" \t\"'\\=")
# A quoted value: backslash escapes any character (a backslash ending the line is itself); its closing quote, if any.
_QUOTED = {quote: re.compile(rf"{quote}((?:\\.|\\$|[^\\{quote}])*)({quote}?)") for quote in "\"'"}
_ESCAPE = re.compile(r"\\(.)")
_SPACE = re.compile(r"\s")

# A longer line is prose or data, not a command someone typed.
MAX_LINE_LENGTH = 10_000
# No prompt takes more; the parse of a line stops there.
MAX_ARGUMENTS = 100


@dataclass(frozen=True, slots=True)
class SlashArgument:
    """One `name=value` token. `value` is unquoted; columns cover the raw text."""

    name: str
    value: str
    start: int  # column of the name
    end: int  # column after the value (after the closing quote, if any)
    value_start: int  # column right after `=`
    quote: str | None = None  # the opening quote character, when quoted
    closed: bool = True  # False for a quote left open at the end of the line


@dataclass(frozen=True, slots=True)
class StrayToken:
    """A token after the command that is not `name=value`."""

    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One slash command on a line."""

    start: int  # column of the trigger character
    name_end: int  # column after the command name
    end: int  # column after the last argument (or the name): what rendering replaces
    name: str  # the command without the trigger: "server:prompt" or "prompt"
    arguments: tuple[SlashArgument, ...] = ()
    stray: tuple[StrayToken, ...] = ()  # words between the name and the last argument
    trailing: tuple[StrayToken, ...] = ()  # words after the last argument, up to the next command
    truncated: bool = False  # more than MAX_ARGUMENTS arguments: the rest of the line was not read

    @property
    def server(self) -> str | None:
        """The server part of `server:prompt`, or None for a bare prompt name."""
        return split_command_name(self.name)[0]

    @property
    def prompt(self) -> str:
        """The prompt part of `server:prompt` (the whole name when there is no server)."""
        return split_command_name(self.name)[1]

    def values(self) -> dict[str, str]:
        """The arguments as a mapping; a name given twice keeps its last value."""
        return {arg.name: arg.value for arg in self.arguments}

    def argument_at(self, column: int) -> SlashArgument | None:
        for arg in self.arguments:
            if arg.start <= column <= arg.end:
                return arg
        return None


@dataclass(frozen=True, slots=True)
class CommandNameContext:
    """The cursor is in a command name: complete `/server:prompt`."""

    query: str  # what is typed between the trigger and the cursor
    start: int  # column of the trigger: the replaced text starts here
    end: int  # column after the command name: the replaced text ends here
    command: SlashCommand


@dataclass(frozen=True, slots=True)
class ArgumentNameContext:
    """The cursor is where an argument name goes: complete `name=`."""

    command: SlashCommand
    prefix: str  # the part of the name before the cursor
    start: int
    end: int
    used: frozenset[str]  # argument names already given elsewhere on the line


@dataclass(frozen=True, slots=True)
class ArgumentValueContext:
    """The cursor is in the value of `name=`: complete values for that argument."""

    command: SlashCommand
    argument: str
    prefix: str  # the unquoted value before the cursor
    start: int  # column right after `=` (the replaced text starts here, quote included)
    end: int  # column after the value
    others: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


CursorContext = CommandNameContext | ArgumentNameContext | ArgumentValueContext


def split_command_name(name: str) -> tuple[str | None, str]:
    """`"server:prompt"` → `("server", "prompt")`; `"prompt"` → `(None, "prompt")`."""
    server, colon, prompt = name.partition(":")
    return (server, prompt) if colon else (None, name)


def quote_value(value: str) -> str:
    """A value as it must be written on a slash line (quoted when it needs to be)."""
    if value and not any(ch in _NEEDS_QUOTES for ch in value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def format_invocation(name: str, arguments: Mapping[str, str], trigger: str = "/") -> str:
    """The slash line that calls `name` with `arguments` (the inverse of parsing)."""
    parts = [f"{trigger}{name}", *(f"{key}={quote_value(value)}" for key, value in arguments.items())]
    return " ".join(parts)


def _is_slash_position(line: str, column: int) -> bool:
    return column == 0 or line[column - 1].isspace()


def _scan_value(line: str, pos: int) -> tuple[str, int, str | None, bool]:
    """Read a value starting at `pos`: (unquoted value, end column, quote, closed)."""
    quote = line[pos : pos + 1]
    if quote in ('"', "'"):
        found = _QUOTED[quote].match(line, pos)
        assert found is not None  # the pattern matches any quoted text, closed or not
        return _ESCAPE.sub(r"\1", found[1]), found.end(), quote, bool(found[2])
    space = _SPACE.search(line, pos)
    end = space.start() if space is not None else len(line)
    return line[pos:end], end, None, True


@dataclass(slots=True)
class _CommandBuilder:
    start: int
    name_end: int
    name: str
    arguments: list[SlashArgument] = field(default_factory=list)
    words: list[StrayToken] = field(default_factory=list)
    truncated: bool = False

    def build(self) -> SlashCommand:
        end = self.arguments[-1].end if self.arguments else self.name_end
        stray = tuple(w for w in self.words if w.start < end)
        trailing = tuple(w for w in self.words if w.start >= end)
        return SlashCommand(
            self.start, self.name_end, end, self.name, tuple(self.arguments), stray, trailing, self.truncated
        )


def find_commands(line: str, trigger: str = "/") -> tuple[SlashCommand, ...]:
    """Every slash command on one line (without its line break), left to right.

    Nothing on a line longer than MAX_LINE_LENGTH; the line's last command is
    `truncated` when it has more than MAX_ARGUMENTS arguments.
    """
    commands: list[SlashCommand] = []
    current: _CommandBuilder | None = None
    n = len(line)
    if n > MAX_LINE_LENGTH or trigger not in line:
        return ()
    i = 0
    while i < n:
        if line[i].isspace():
            i += 1
            continue
        token_start = j = i
        if line.startswith(trigger, i) and _is_slash_position(line, i):
            if current is not None:
                commands.append(current.build())
            j = i + len(trigger)
            while j < n and not line[j].isspace():
                j += 1
            current = _CommandBuilder(start=i, name_end=j, name=line[i + len(trigger) : j])
            i = j
            continue
        # Any other token: an argument of the current command, or plain text before any command.
        while j < n and not line[j].isspace() and line[j] != "=":
            j += 1
        if j < n and line[j] == "=" and j > token_start:
            value, end, quote, closed = _scan_value(line, j + 1)
            if current is not None and len(current.arguments) >= MAX_ARGUMENTS:
                current.truncated = True
                break
            if current is not None:
                current.arguments.append(
                    SlashArgument(line[token_start:j], value, token_start, end, j + 1, quote, closed)
                )
            i = end
            continue
        while j < n and not line[j].isspace():
            j += 1
        if current is not None:
            current.words.append(StrayToken(line[token_start:j], token_start, j))
        i = j
    if current is not None:
        commands.append(current.build())
    return tuple(commands)


def _command_at(commands: tuple[SlashCommand, ...], column: int) -> SlashCommand | None:
    """The command whose reach (from its trigger to the next command) holds `column`."""
    found: SlashCommand | None = None
    for command in commands:
        if command.start < column:
            found = command
        else:
            break
    return found


def context_at(line: str, column: int, trigger: str = "/") -> CursorContext | None:
    """What the cursor at `column` of `line` would complete, if anything."""
    column = max(0, min(column, len(line)))
    commands = find_commands(line, trigger)
    command = _command_at(commands, column)
    if command is None or (command.truncated and column > command.end):
        return None
    if column <= command.name_end:
        if column < command.start + len(trigger):
            return None
        return CommandNameContext(
            query=line[command.start + len(trigger) : column],
            start=command.start,
            end=command.name_end,
            command=command,
        )
    arg = command.argument_at(column)
    if arg is not None and column >= arg.value_start:
        others = {a.name: a.value for a in command.arguments if a is not arg}
        raw_before = line[arg.value_start : column]
        prefix = _scan_value(raw_before, 0)[0] if arg.quote else raw_before
        return ArgumentValueContext(
            command=command,
            argument=arg.name,
            prefix=prefix,
            start=arg.value_start,
            end=arg.end,
            others=MappingProxyType(others),
        )
    used = frozenset(a.name for a in command.arguments if a is not arg)
    if arg is not None:  # in the name part of `name=value`
        return ArgumentNameContext(command, line[arg.start : column], arg.start, arg.value_start, used)
    for token in (*command.stray, *command.trailing):
        if token.start <= column <= token.end:
            return ArgumentNameContext(command, line[token.start : column], token.start, token.end, used)
    if line[column - 1].isspace():
        return ArgumentNameContext(command, "", column, column, used)
    return None
