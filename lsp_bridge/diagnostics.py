"""Problems on slash lines, found while the user types: unknown prompts, missing arguments, and so on.

Bare `/name` commands are only checked when exactly one server has that prompt
(a lone `/usr` may well be a path); `/server:prompt` always is, when it has the
shape of one (letters, digits, `_`, `.`, `-`: `/usr/bin:/bin` is left alone). A
server that is not connected yet is said so, instead of calling its prompts
unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lsprotocol import types

from mcp_notebook.catalog.pool import CatalogSnapshot, ServerState
from mcp_notebook.naming import suggest_names
from mcp_notebook.ranking import CommandEntry

from .slashline import MAX_ARGUMENTS, SlashCommand, find_commands

__all__ = [
    "MAX_DIAGNOSTICS",
    "SOURCE",
    "ambiguous_prompt",
    "line_diagnostics",
    "missing_arguments",
    "resolve_command",
    "to_diagnostics",
    "unknown_server",
]

SOURCE = "mcp-notebook"
# Editors show a handful; a document with thousands of bad lines must not cost the editor its patience.
MAX_DIAGNOSTICS = 500

# What a slash command looks like: server and prompt names fit the prompt-name rule.
_COMMAND_SHAPE = re.compile(r"^[A-Za-z0-9_.-]+(:[A-Za-z0-9_.-]+)?$")

# Turns (line, start column, end column) into an editor range.
LineRangeMaker = Callable[[int, int, int], types.Range]


def resolve_command(snapshot: CatalogSnapshot, command: SlashCommand) -> CommandEntry | None:
    """The prompt a slash command calls: `server:prompt`, or a bare name only one server has."""
    if command.server is not None:
        return snapshot.index.get(command.name)
    matches = snapshot.index.with_name(command.prompt)
    return matches[0] if len(matches) == 1 else None


def missing_arguments(entry: CommandEntry, command: SlashCommand, trigger: str) -> str | None:
    """`/server:prompt needs name=, lang=` when the command leaves required arguments out, else None."""
    given = command.values()
    missing = [name for name in entry.spec.required_arguments if name not in given]
    return f"{trigger}{entry.key} needs {', '.join(f'{m}=' for m in missing)}" if missing else None


def ambiguous_prompt(prompt: str, matches: Sequence[CommandEntry], trigger: str) -> str:
    """Why a bare `/prompt` that several servers have is not resolved."""
    choices = ", ".join(f"{trigger}{m.key}" for m in matches)
    return f"Several servers have a prompt {prompt!r}: write {choices}"


def unknown_server(snapshot: CatalogSnapshot, server: str) -> str:
    """Why `/server:prompt` on a server that is not configured is not resolved."""
    known = ", ".join(sorted(snapshot.servers)) or "none"
    return f"Unknown MCP server {server!r} (known: {known})"


def _diagnostic(where: types.Range, message: str, code: str, severity: types.DiagnosticSeverity) -> types.Diagnostic:
    return types.Diagnostic(range=where, message=message, severity=severity, code=code, source=SOURCE)


def _command_problems(
    snapshot: CatalogSnapshot, command: SlashCommand, trigger: str, span: Callable[[int, int], types.Range]
) -> list[types.Diagnostic]:
    name_range = span(command.start, command.name_end)
    server, prompt = command.server, command.prompt
    if server is None:
        matches = snapshot.index.with_name(prompt)
        if len(matches) > 1:
            message = ambiguous_prompt(prompt, matches, trigger)
            return [_diagnostic(name_range, message, "ambiguous-prompt", types.DiagnosticSeverity.Warning)]
        if not matches:
            return []  # maybe not a command at all
    elif server not in snapshot.servers:
        message = unknown_server(snapshot, server)
        return [_diagnostic(name_range, message, "unknown-server", types.DiagnosticSeverity.Warning)]
    elif snapshot.servers[server].state is not ServerState.READY:
        status = snapshot.servers[server]
        reason = f": {status.error}" if status.error else ""
        message = f"MCP server {server!r} is {status.state.value}{reason}; its prompts cannot be checked yet"
        return [_diagnostic(name_range, message, "server-unavailable", types.DiagnosticSeverity.Information)]
    entry = resolve_command(snapshot, command)
    if entry is None:
        names = [spec.name for spec in snapshot.servers[server or ""].prompts] if server else []
        hints = suggest_names(prompt, names)
        hint = f"; did you mean {', '.join(f'{trigger}{server}:{h}' for h in hints)}?" if hints else ""
        message = f"Unknown prompt {prompt!r} on MCP server {server!r}{hint}"
        found = _diagnostic(name_range, message, "unknown-prompt", types.DiagnosticSeverity.Error)
        # What a quick fix puts in place of the name (the server's code actions read it back).
        found.data = {"replacements": [f"{trigger}{server}:{h}" for h in hints]} if hints else None
        return [found]
    return _argument_problems(entry, command, trigger, span)


def _argument_problems(
    entry: CommandEntry, command: SlashCommand, trigger: str, span: Callable[[int, int], types.Range]
) -> list[types.Diagnostic]:
    spec = entry.spec
    problems: list[types.Diagnostic] = []
    if (message := missing_arguments(entry, command, trigger)) is not None:
        problems.append(
            _diagnostic(
                span(command.start, command.name_end), message, "missing-argument", types.DiagnosticSeverity.Error
            )
        )
    expected = ", ".join(a.name for a in spec.arguments) or "no arguments"
    seen: set[str] = set()
    for arg in command.arguments:
        where = span(arg.start, arg.end)
        if spec.argument(arg.name) is None:
            meant = suggest_names(arg.name, [a.name for a in spec.arguments], limit=1)
            hint = f". Did you mean {meant[0]}=?" if meant else ""
            message = f"Unknown argument {arg.name!r} for {trigger}{entry.key} (it takes: {expected}){hint}"
            problems.append(_diagnostic(where, message, "unknown-argument", types.DiagnosticSeverity.Warning))
        declared = spec.argument(arg.name)
        if declared is not None and declared.required and arg.value == "" and arg.closed:
            message = f"{arg.name}= is empty: {trigger}{entry.key} needs a value for it"
            problems.append(_diagnostic(where, message, "empty-value", types.DiagnosticSeverity.Warning))
        if arg.name in seen:
            message = f"Argument {arg.name!r} is given twice; the last value wins"
            problems.append(_diagnostic(where, message, "duplicate-argument", types.DiagnosticSeverity.Warning))
        seen.add(arg.name)
        if not arg.closed:
            message = f"The quote opened in {arg.name}= is not closed"
            problems.append(_diagnostic(where, message, "unclosed-quote", types.DiagnosticSeverity.Warning))
    for token in command.stray:
        message = f"{token.text!r} is not an argument: write name=value (arguments: {expected})"
        problems.append(
            _diagnostic(span(token.start, token.end), message, "stray-token", types.DiagnosticSeverity.Warning)
        )
    if command.trailing:
        # Often a value with spaces that lost its quotes; a hint only, since text after a command is allowed.
        first, last = command.trailing[0], command.trailing[-1]
        message = (
            f"Not part of {trigger}{entry.key}: rendering keeps this text. "
            'Quote values that contain spaces: name="two words"'
        )
        problems.append(
            _diagnostic(span(first.start, last.end), message, "trailing-text", types.DiagnosticSeverity.Hint)
        )
    return problems


def line_diagnostics(
    number: int, line: str, snapshot: CatalogSnapshot, trigger: str, make_range: LineRangeMaker
) -> list[types.Diagnostic]:
    """The problems with the slash commands of one line (without its line break)."""
    found: list[types.Diagnostic] = []
    for command in find_commands(line, trigger):
        if not _COMMAND_SHAPE.match(command.name):
            continue

        def span(start: int, end: int) -> types.Range:
            return make_range(number, start, end)

        found.extend(_command_problems(snapshot, command, trigger, span))
        if command.truncated:
            message = f"More than {MAX_ARGUMENTS} arguments: the rest of the line is not read"
            where = span(command.arguments[-1].start, command.end)
            found.append(_diagnostic(where, message, "too-many-arguments", types.DiagnosticSeverity.Warning))
    return found


def to_diagnostics(
    lines: Sequence[str], snapshot: CatalogSnapshot, trigger: str, make_range: LineRangeMaker
) -> list[types.Diagnostic]:
    """Every problem with the slash commands of a document (at most MAX_DIAGNOSTICS)."""
    found: list[types.Diagnostic] = []
    for number, line in enumerate(lines):
        if trigger not in line:
            continue  # the common case, and cheap
        found.extend(line_diagnostics(number, line.rstrip("\r\n"), snapshot, trigger, make_range))
        if len(found) >= MAX_DIAGNOSTICS:
            return found[:MAX_DIAGNOSTICS]
    return found
