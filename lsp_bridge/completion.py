"""Completion items for the three places on a slash line: command, argument name, argument value.

Command lists are cut to the best `maxItems` and always marked incomplete, so
the editor asks again as the user types and our ranking (not the editor's own
filter) decides: every item's `filterText` is what the user typed and its
`sortText` its rank. While servers are still connecting, the list ends with
one "connecting to N servers…" item (choosing it changes nothing), so a menu
is never silently empty and the editor keeps asking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lsprotocol import types

from mcp_notebook.catalog.pool import CatalogSnapshot, ServerState, ServerStatus
from mcp_notebook.models import CompletionResult, PromptSpec
from mcp_notebook.ranking import CommandEntry, is_magic

from .documentation import (
    to_argument_markdown,
    to_command_markdown,
    to_command_plaintext,
    to_command_summary,
    to_insert_text,
    to_snippet,
)
from .slashline import ArgumentNameContext, ArgumentValueContext, CommandNameContext, quote_value
from .trust_prompt import TRUST_COMMAND

__all__ = [
    "CompletionStyle",
    "to_argument_name_list",
    "to_argument_value_list",
    "to_command_documentation",
    "to_command_list",
]

# Turns (start column, end column) on the current line into an editor range.
RangeMaker = Callable[[int, int], types.Range]


@dataclass(frozen=True, slots=True)
class CompletionStyle:
    """What the editor can show, from its capabilities."""

    snippets: bool = False
    markdown: bool = False
    # Documentation is filled in by completionItem/resolve instead of in the list.
    lazy_documentation: bool = False

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities) -> CompletionStyle:
        item = (
            capabilities.text_document.completion.completion_item
            if capabilities.text_document is not None and capabilities.text_document.completion is not None
            else None
        )
        if item is None:
            return cls()
        formats = item.documentation_format or ()
        resolvable = item.resolve_support.properties if item.resolve_support is not None else ()
        return cls(
            snippets=bool(item.snippet_support),
            markdown=types.MarkupKind.Markdown in formats,
            lazy_documentation="documentation" in resolvable,
        )


def to_command_documentation(
    entry: CommandEntry, trigger: str, snapshot: CatalogSnapshot, style: CompletionStyle
) -> types.MarkupContent:
    status = snapshot.servers.get(entry.server)
    if style.markdown:
        return types.MarkupContent(types.MarkupKind.Markdown, to_command_markdown(entry, trigger, status))
    return types.MarkupContent(types.MarkupKind.PlainText, to_command_plaintext(entry, trigger))


def to_command_list(
    snapshot: CatalogSnapshot,
    context: CommandNameContext,
    *,
    trigger: str,
    limit: int,
    style: CompletionStyle,
    make_range: RangeMaker,
    starting: bool = False,
    magics: bool = True,
) -> types.CompletionList:
    """The best slash commands for what is typed after the trigger.

    `starting`: the bridge has not yet set which servers to connect to (the
    moments after `initialized`); the list then says it is connecting too.
    `magics`: whether a kernel's magic prompts (`magic`, `magic.<name>`) are listed.
    """
    index = snapshot.index
    result = index.search(context.query, limit if magics else limit + index.magics)
    matches = result.matches if magics else tuple(m for m in result.matches if not is_magic(m.entry.spec))[:limit]
    edit_range = make_range(context.start, context.end)
    typed = trigger + context.query
    items: list[types.CompletionItem] = []
    for rank, match in enumerate(matches):
        entry = match.entry
        if style.snippets:
            text, fmt = to_snippet(entry, trigger), types.InsertTextFormat.Snippet
        else:
            text, fmt = to_insert_text(entry, trigger), types.InsertTextFormat.PlainText
        item = types.CompletionItem(
            label=f"{trigger}{entry.key}",
            kind=types.CompletionItemKind.Module if entry.is_skill else types.CompletionItemKind.Function,
            detail=to_command_summary(entry.spec) or None,
            documentation=None
            if style.lazy_documentation
            else to_command_documentation(entry, trigger, snapshot, style),
            sort_text=f"{rank:05d}",
            filter_text=typed,
            insert_text_format=fmt,
            text_edit=types.TextEdit(range=edit_range, new_text=text),
            data={"key": entry.key} if style.lazy_documentation else None,
        )
        items.append(item)
    # Servers still starting, those listed from their stored list included: their fresh lists are on the way.
    connecting = sorted(n for n, s in snapshot.servers.items() if s.state is ServerState.CONNECTING or s.cached)
    if connecting or starting:
        items.append(_connecting_item(connecting, typed, trigger + context.command.name, edit_range))
    untrusted = [s for s in snapshot.servers.values() if s.state is ServerState.NOT_TRUSTED]
    if untrusted:
        items.append(_untrusted_item(untrusted, typed, trigger + context.command.name, edit_range))
    return types.CompletionList(is_incomplete=True, items=items)


def _untrusted_item(
    servers: list[ServerStatus], typed: str, current: str, edit_range: types.Range
) -> types.CompletionItem:
    """Says which servers a project file names that were not started; accepting it asks about trusting the file."""
    count = len(servers)
    again = "choose this item to be asked again"
    listed = "\n".join(f"- `{s.name}` {s.error or ''} (from `{s.source}`)" for s in servers[:10])
    return types.CompletionItem(
        label=f"{count} server{'s' if count != 1 else ''} not trusted: {', '.join(s.name for s in servers[:3])}",
        kind=types.CompletionItemKind.Text,
        detail=again,
        documentation=types.MarkupContent(
            types.MarkupKind.Markdown,
            "This project's MCP configuration names servers that were not started, because you have not "
            f"trusted the file:\n\n{listed}\n\nTo start them, {again}, or run `mcp-notebook trust FILE` "
            "in a terminal.",
        ),
        sort_text="~~",  # after every ranked item, and after "connecting…"
        filter_text=typed,
        text_edit=types.TextEdit(range=edit_range, new_text=current),
        command=types.Command("Review the project's MCP configuration", TRUST_COMMAND),
    )


def _connecting_item(servers: list[str], typed: str, current: str, edit_range: types.Range) -> types.CompletionItem:
    """Says that more prompts are on their way (from `servers`, or from servers not known yet);
    accepting it leaves the text as typed."""
    count = len(servers)
    shown = ", ".join(servers[:5]) + (", …" if count > 5 else "")
    return types.CompletionItem(
        label=f"connecting to {count} server{'s' if count != 1 else ''}…" if servers else "connecting to MCP servers…",
        kind=types.CompletionItemKind.Text,
        detail=shown or None,
        sort_text="~",  # after every ranked item
        filter_text=typed,
        text_edit=types.TextEdit(range=edit_range, new_text=current),
    )


def to_argument_name_list(
    spec: PromptSpec, context: ArgumentNameContext, *, style: CompletionStyle, make_range: RangeMaker
) -> types.CompletionList:
    """`name=` for each argument not given yet: required ones first, in declaration order."""
    prefix = context.prefix.lower()
    candidates = [a for a in spec.arguments if a.name not in context.used and a.name.lower().startswith(prefix)]
    candidates.sort(key=lambda a: not a.required)
    edit_range = make_range(context.start, context.end)
    items = [
        types.CompletionItem(
            label=f"{arg.name}=",
            kind=types.CompletionItemKind.Property,
            detail="required" if arg.required else "optional",
            documentation=types.MarkupContent(types.MarkupKind.Markdown, to_argument_markdown(arg))
            if style.markdown
            else arg.description,
            sort_text=f"{rank:05d}",
            filter_text=f"{arg.name}=",
            text_edit=types.TextEdit(range=edit_range, new_text=f"{arg.name}="),
        )
        for rank, arg in enumerate(candidates)
    ]
    return types.CompletionList(is_incomplete=False, items=items)


def to_argument_value_list(
    result: CompletionResult,
    context: ArgumentValueContext,
    *,
    typed: str,
    make_range: RangeMaker,
) -> types.CompletionList:
    """The server's suggestions for a value, quoted where the slash line needs quotes."""
    edit_range = make_range(context.start, context.end)
    items: list[types.CompletionItem] = []
    for rank, value in enumerate(result.values):
        text = quote_value(value)
        item = types.CompletionItem(
            label=value,
            kind=types.CompletionItemKind.Value,
            sort_text=f"{rank:05d}",
            filter_text=typed,
            text_edit=types.TextEdit(range=edit_range, new_text=text),
        )
        items.append(item)
    if not items and not context.prefix:
        # Nothing to offer for an empty value: one item says so (choosing it leaves the text as typed).
        items.append(
            types.CompletionItem(
                label=f"no suggestions for {context.argument}=",
                kind=types.CompletionItemKind.Text,
                detail="the server offers none: type a value",
                sort_text="~",
                filter_text=typed,
                text_edit=types.TextEdit(range=edit_range, new_text=typed),
            )
        )
    return types.CompletionList(is_incomplete=True, items=items)
