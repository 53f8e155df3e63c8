"""Rendering a slash line in place: `prompts/get` (a skill's command: its SKILL.md), then one `workspace/applyEdit`.

Every command on the line is rendered before anything is edited, and the edit
is only sent when the line is still what it was: the document is replaced in
one piece or not at all.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from lsprotocol import types

from mcp_notebook.catalog.pool import CatalogSnapshot, ServerState
from mcp_notebook.catalog.skill_commands import to_skill_text
from mcp_notebook.exceptions import ServerError
from mcp_notebook.models import RenderedPrompt
from mcp_notebook.ranking import CommandEntry

from .diagnostics import ambiguous_prompt, missing_arguments, resolve_command, unknown_server
from .render import to_editor_text
from .slashline import SlashCommand, find_commands

if TYPE_CHECKING:
    from mcp_notebook.client.skills import SkillContent

    from .server import BridgeServer

__all__ = ["RENDER_COMMAND", "RenderOutcome", "prepare_line_edit", "render_line"]

RENDER_COMMAND = "mcpNotebook.renderPrompt"


@dataclass(frozen=True, slots=True)
class RenderOutcome:
    """What rendering a line gave: the edit (when it could be made), the text, or why not."""

    applied: bool
    text: str | None = None
    error: str | None = None
    edit: types.WorkspaceEdit | None = None


def _why_unresolved(snapshot: CatalogSnapshot, command: SlashCommand, trigger: str) -> str:
    server = command.server
    if server is None:
        matches = snapshot.index.with_name(command.prompt)
        if matches:
            return ambiguous_prompt(command.prompt, matches, trigger)
        return f"Unknown prompt {command.prompt!r}"
    status = snapshot.servers.get(server)
    if status is None:
        return unknown_server(snapshot, server)
    if status.state is not ServerState.READY:
        reason = f": {status.error}" if status.error else ""
        return f"MCP server {server!r} is not connected ({status.state.value}{reason})"
    return f"Unknown prompt {command.prompt!r} on MCP server {server!r}"


def _plan(
    snapshot: CatalogSnapshot, commands: list[SlashCommand], trigger: str
) -> list[tuple[SlashCommand, CommandEntry]] | str:
    """Each command with its prompt, or the reason one cannot be rendered."""
    plan: list[tuple[SlashCommand, CommandEntry]] = []
    for command in commands:
        entry = resolve_command(snapshot, command)
        if entry is None:
            return _why_unresolved(snapshot, command, trigger)
        if (missing := missing_arguments(entry, command, trigger)) is not None:
            return missing
        plan.append((command, entry))
    return plan


async def prepare_line_edit(server: BridgeServer, uri: str, number: int) -> RenderOutcome:
    """Render the slash commands on line `number` of `uri` into one edit (not applied yet)."""
    document = server.open_document(uri)
    if document is None:
        return RenderOutcome(False, error=f"{uri} is not open in the editor")
    version = document.version
    lines = server.lines_of(document)
    if not 0 <= number < len(lines):
        return RenderOutcome(False, error=f"Line {number + 1} is not in {uri}")
    line = server.line_at(lines, number)
    trigger = server.settings.trigger
    snapshot = server.catalog.snapshot()
    commands = [
        c
        for c in find_commands(line, trigger)
        if c.name and (c.server is not None or resolve_command(snapshot, c) is not None)
    ]
    if not commands:
        return RenderOutcome(False, error=f"No slash command on line {number + 1}")
    plan = _plan(snapshot, commands, trigger)
    if isinstance(plan, str):
        return RenderOutcome(False, error=plan)
    results = await asyncio.gather(
        *(
            server.catalog.read_skill(e.server, snapshot.skills[e.key])
            if e.is_skill
            else server.catalog.get_prompt(e.server, e.spec.name, c.values())
            for c, e in plan
        ),
        return_exceptions=True,
    )
    texts: list[str] = []
    for (_, entry), result in zip(plan, results, strict=True):
        if isinstance(result, ServerError):
            return RenderOutcome(False, error=f"Cannot render {trigger}{entry.key}: {result}")
        if isinstance(result, BaseException):
            raise result
        if isinstance(result, RenderedPrompt):
            texts.append(to_editor_text(result, images=server.settings.images))
        else:  # a skill's SKILL.md, read and checked
            texts.append(to_skill_text(cast("SkillContent", result)))
    current = server.open_document(uri)
    if current is None or current.version != version or server.line_at(server.lines_of(current), number) != line:
        return RenderOutcome(False, error="The line changed while the prompt was rendering; nothing was replaced")
    spans = _replaced_spans(line, [c for c, _ in plan])
    edits = [
        types.TextEdit(range=server.range_of(current, line, number, start, end), new_text=text)
        for (start, end), text in zip(spans, _separated(line, plan, texts), strict=True)
    ]
    capabilities = server.client_capabilities.workspace
    workspace_edit = capabilities.workspace_edit if capabilities is not None else None
    # A versioned edit lets the editor refuse it if the document moved on meanwhile.
    if workspace_edit is not None and workspace_edit.document_changes and version is not None:
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        edit = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
    else:
        edit = types.WorkspaceEdit(changes={uri: edits})
    return RenderOutcome(False, text="\n".join(texts), edit=edit)


def _next_text(line: str, end: int) -> int:
    """Where the text after column `end` starts (the line's length when only spaces follow)."""
    rest = line[end:]
    return end + (len(rest) - len(rest.lstrip())) if rest.strip() else len(line)


def _replaced_spans(line: str, commands: list[SlashCommand]) -> list[tuple[int, int]]:
    """What each command's rendering replaces: the command, and the spaces up to any text that follows it."""
    spans = []
    for command in commands:
        following = _next_text(line, command.end)
        spans.append((command.start, following if following < len(line) else command.end))
    return spans


def _separated(line: str, plan: list[tuple[SlashCommand, CommandEntry]], texts: list[str]) -> list[str]:
    """Each rendering, followed by a blank line when text (or another command) follows it on the line."""
    return [
        text + "\n\n" if _next_text(line, command.end) < len(line) else text
        for (command, _), text in zip(plan, texts, strict=True)
    ]


async def render_line(server: BridgeServer, uri: str, number: int) -> RenderOutcome:
    """Replace the slash commands on line `number` of `uri` with their rendered prompts."""
    prepared = await prepare_line_edit(server, uri, number)
    if prepared.edit is None:
        return prepared
    rendered = prepared.text
    capabilities = server.client_capabilities.workspace
    if capabilities is None or not capabilities.apply_edit:
        return RenderOutcome(False, text=rendered, error="The editor cannot apply edits (no workspace/applyEdit)")
    params = types.ApplyWorkspaceEditParams(edit=prepared.edit, label="Render prompt")
    answer = await server.workspace_apply_edit_async(params)
    if not answer.applied:
        reason = answer.failure_reason or "no reason given"
        return RenderOutcome(False, text=rendered, error=f"The editor did not apply the rendered prompt: {reason}")
    return RenderOutcome(True, text=rendered)
