"""How prompts look in Jupyter and in terminals: conversations, prompt tables, server tables.

`PromptConversation` is a `RenderedPrompt` that shows itself as a chat (role
per message, its Markdown rendered by the front end, images inline, audio
playable, embedded resources with URI and MIME type, resource links
clickable) and converts itself for LLM SDKs (`to_openai()`,
`to_anthropic()`). `PromptTable` and `ServerTable` show listings as HTML
tables in Jupyter and aligned text in terminals.

Nothing here imports IPython: the objects follow its display protocol
(`_repr_markdown_`, `_repr_html_`, `_repr_pretty_`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from ..config import ServerConfig
from ..llm import Conversation, to_anthropic_messages, to_openai_messages
from ..models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptSpec,
    RenderedPrompt,
    TextContent,
)
from ..transcript import block_text, data_size, describe_size

__all__ = [
    "PromptConversation",
    "PromptTable",
    "ServerRow",
    "ServerTable",
    "conversation_json",
    "conversation_markdown",
    "conversation_text",
]

_TEXT_PREVIEW = 4000


@dataclass(frozen=True, slots=True)
class PromptConversation(Conversation):
    """A rendered prompt that displays as a conversation and converts to LLM message formats."""

    @classmethod
    def of(cls, rendered: RenderedPrompt) -> PromptConversation:
        return cls(**{f.name: getattr(rendered, f.name) for f in fields(RenderedPrompt)})

    def to_openai(self) -> list[dict[str, Any]]:
        """The messages in OpenAI chat-completions form (see `mcp_notebook.llm.to_openai_messages`)."""
        return to_openai_messages(self)

    def to_anthropic(self) -> list[dict[str, Any]]:
        """The messages in Anthropic Messages API form (see `mcp_notebook.llm.to_anthropic_messages`)."""
        return to_anthropic_messages(self)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The messages as plain dictionaries (role and content fields)."""
        return [{"role": m.role, "content": _plain(asdict(m.content))} for m in self.messages]

    def __repr__(self) -> str:
        return conversation_text(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("PromptConversation(...)" if cycle else conversation_text(self))

    def _repr_markdown_(self) -> str:
        return conversation_markdown(self)


def _plain(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}


def conversation_text(rendered: RenderedPrompt) -> str:
    """The conversation as plain text, one block per message, for terminals."""
    title = rendered.name or "prompt"
    lines = [f"{title}: {len(rendered.messages)} message{'s' if len(rendered.messages) != 1 else ''}"]
    if rendered.description:
        lines.append(rendered.description)
    for message in rendered.messages:
        lines.append("")
        lines.append(f"[{message.role}]")
        lines.append(block_text(message.content, clip=_TEXT_PREVIEW))
    return "\n".join(lines)


def _clip(text: str) -> str:
    return block_text(TextContent(text=text), clip=_TEXT_PREVIEW)


def _decoded_size(data: str) -> str:
    return describe_size(data_size(data))


def conversation_markdown(rendered: RenderedPrompt) -> str:
    """The conversation as Markdown: a quoted block per message under its role.

    Markdown, not HTML, because front ends render Markdown only in a
    `text/markdown` output: the prompts' own Markdown shows formatted.
    Images and audio are inline HTML with data URIs (which Markdown allows).
    """
    parts: list[str] = []
    if rendered.name or rendered.description:
        name = f"`{rendered.name}`" if rendered.name else ""
        parts.append(" — ".join(x for x in (name, _escape_markdown(rendered.description or "")) if x))
    for message in rendered.messages:
        body = _block_markdown(message.content)
        quoted = "\n".join(f"> {line}" if line else ">" for line in body.splitlines() or [""])
        parts.append(f"> **{message.role.upper()}**\n>\n{quoted}")
    return "\n\n".join(parts) + "\n"


def _escape_markdown(text: str) -> str:
    return html.escape(text, quote=False).replace("*", "\\*").replace("_", "\\_")


def _block_markdown(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return _img(block.mime_type, block.data)
    if isinstance(block, AudioContent):
        return _audio(block.mime_type, block.data)
    if isinstance(block, EmbeddedResource):
        mime = block.mime_type or "unknown type"
        head = f"📎 `{block.uri}` · {mime}"
        if block.text is not None:
            return f"{head}\n\n{_fenced(_clip(block.text), mime)}"
        if block.blob is not None and mime.startswith("image/"):
            return f"{head}\n\n{_img(mime, block.blob)}"
        if block.blob is not None and mime.startswith("audio/"):
            return f"{head}\n\n{_audio(mime, block.blob)}"
        return f"{head} (binary, {_decoded_size(block.blob or '')})"
    label = (block.title or block.name).replace("]", "\\]")
    extra = " · ".join(x for x in (block.mime_type, block.description) if x)
    return f"🔗 [{label}](<{block.uri}>)" + (f" ({_escape_markdown(extra)})" if extra else "")


def _img(mime_type: str, data: str) -> str:
    return f'<img src="data:{html.escape(mime_type)};base64,{data}" style="max-width: 100%">'


def _audio(mime_type: str, data: str) -> str:
    return f'<audio controls src="data:{html.escape(mime_type)};base64,{data}"></audio>'


def _fenced(text: str, mime_type: str) -> str:
    """A fenced code block that the text itself cannot close early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    language = _FENCE_LANGUAGES.get(mime_type, mime_type.rpartition("/")[2].removeprefix("x-"))
    return f"{fence}{language}\n{text}\n{fence}"


_FENCE_LANGUAGES = {
    "text/plain": "",
    "text/markdown": "markdown",
    "application/json": "json",
    "text/x-python": "python",
}


def _table_html(headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "") -> str:
    head = "".join(f'<th style="text-align: left">{html.escape(h)}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="text-align: left">{cell}</td>' for cell in row) + "</tr>" for row in rows
    )
    cap = f"<caption style='text-align: left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _table_text(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def _arguments_text(spec: PromptSpec) -> str:
    return " ".join(
        a.name if a.required else f"[{a.name}]" if a.default is None else f"[{a.name}={a.default}]"
        for a in spec.arguments
    )


@dataclass(frozen=True, slots=True)
class PromptTable:
    """Prompts of one or more servers: an HTML table in Jupyter, aligned columns in a terminal."""

    listings: Mapping[str, Sequence[PromptSpec]]
    errors: Mapping[str, str] | None = None

    @property
    def prompts(self) -> tuple[PromptSpec, ...]:
        return tuple(spec for specs in self.listings.values() for spec in specs)

    def _rows(self) -> list[tuple[str, str, str, str]]:
        return [
            (f"{server}:{spec.name}", spec.title or "", _arguments_text(spec), (spec.description or "").strip())
            for server, specs in self.listings.items()
            for spec in specs
        ]

    def __repr__(self) -> str:
        rows = [(name, args, _first_line(desc)) for name, _title, args, desc in self._rows()]
        text = _table_text(("prompt", "arguments", "description"), rows) if rows else "No prompts."
        return text + "".join(f"\n{server}: {error}" for server, error in (self.errors or {}).items())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        rows = [
            (f"<code>{html.escape(name)}</code>", html.escape(title), html.escape(args), html.escape(desc))
            for name, title, args, desc in self._rows()
        ]
        table = _table_html(("prompt", "title", "arguments", "description"), rows) if rows else "<i>No prompts.</i>"
        errors = "".join(
            f'<div style="color: #d32f2f">{html.escape(server)}: {html.escape(error)}</div>'
            for server, error in (self.errors or {}).items()
        )
        return table + errors


def _first_line(text: str, limit: int = 80) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class ServerRow:
    config: ServerConfig
    status: str


@dataclass(frozen=True, slots=True)
class ServerTable:
    """The servers `%mcp` knows: where they come from and whether they are connected."""

    rows: Sequence[ServerRow]
    notes: Sequence[str] = ()

    def _cells(self) -> list[tuple[str, str, str, str, str]]:
        return [
            (
                row.config.name,
                row.config.transport,
                row.status,
                row.config.describe(),
                row.config.source or "%mcp connect",
            )
            for row in self.rows
        ]

    def __repr__(self) -> str:
        if not self.rows:
            return "\n".join(["No MCP servers configured. Add one with %mcp connect NAME -- COMMAND.", *self.notes])
        return "\n".join([_table_text(("server", "transport", "status", "target", "from"), self._cells()), *self.notes])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        if not self.rows:
            return "<i>No MCP servers configured. Add one with <code>%mcp connect NAME -- COMMAND</code>.</i>"
        rows = [[html.escape(cell) for cell in row] for row in self._cells()]
        rows = [[f"<code>{row[0]}</code>", *row[1:]] for row in rows]
        notes = "".join(f"<div>{html.escape(note)}</div>" for note in self.notes)
        return _table_html(("server", "transport", "status", "target", "from"), rows) + notes


def conversation_json(rendered: RenderedPrompt) -> str:
    """The messages as JSON text (role and content fields), e.g. to copy into another tool."""
    return json.dumps(PromptConversation.of(rendered).to_dicts(), indent=2)
