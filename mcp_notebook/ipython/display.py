"""How prompts look in Jupyter and in terminals: conversations, prompt tables, server tables.

`PromptConversation` is a `RenderedPrompt` that shows itself as a chat (one
box per turn of consecutive messages of a role, user and assistant told apart
by the theme's colours, its Markdown rendered by the front end, images inline,
audio playable, embedded resources with URI and MIME type, other binary
resources as a download link, resource links clickable) and converts itself for LLM SDKs (`to_openai()`,
`to_anthropic()`). `PromptTable` and `ServerTable` show listings as HTML
tables in Jupyter and aligned text in terminals. `ServeReport` is what
`%mcp serve` shows: a short summary with each client's configuration folded
away in Jupyter, everything spelled out in a terminal.

Nothing here imports IPython: the objects follow its display protocol
(`_repr_markdown_`, `_repr_html_`, `_repr_pretty_`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import ServerConfig
from ..llm import Conversation
from ..models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptSpec,
    RenderedPrompt,
    TextContent,
)
from ..transcript import (
    Layout,
    clipped,
    code_span,
    data_size,
    describe_size,
    escape_markdown,
    fence,
    fence_language,
    role_label,
    to_transcript,
    turns,
)
from .client_config import ClientConfig

__all__ = [
    "PromptConversation",
    "PromptTable",
    "ServeReport",
    "ServerRow",
    "ServerTable",
    "conversation_markdown",
    "conversation_text",
]

_TEXT_PREVIEW = 4000


@dataclass(frozen=True, slots=True)
class PromptConversation(Conversation):
    """A rendered prompt that displays as a conversation and converts to LLM message formats."""

    # `of`, `to_openai`, `to_anthropic` and `to_dicts` are Conversation's: the API and the magics give one object.

    def __repr__(self) -> str:
        return conversation_text(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("PromptConversation(...)" if cycle else conversation_text(self))

    def _repr_markdown_(self) -> str:
        return conversation_markdown(self)


# For terminals: the name, the count and the description, then each turn under its role, long texts cut.
_TERMINAL = Layout(
    blocks="text", sections="turn", headings="always", heading="bracketed", title="summary", clip=_TEXT_PREVIEW
)


def conversation_text(rendered: RenderedPrompt) -> str:
    """The conversation as plain text, one block per turn under its role, for terminals."""
    return to_transcript(rendered, _TERMINAL)


def _decoded_size(data: str) -> str:
    return describe_size(data_size(data))


# Each role's look, from JupyterLab's theme variables so light and dark themes both read well; the
# fallbacks serve front ends without them (VS Code). (accent, background)
_TURN_STYLES = {
    "user": ("var(--jp-brand-color1, #1976d2)", "var(--jp-layout-color2, rgba(127, 127, 127, 0.1))"),
    "assistant": ("var(--jp-success-color1, #388e3c)", "var(--jp-layout-color1, transparent)"),
}
_OTHER_STYLE = ("var(--jp-border-color1, #999)", "transparent")


def _turn_open(role: str) -> str:
    accent, background = _TURN_STYLES.get(role, _OTHER_STYLE)
    indent = "2.5em" if role == "assistant" else "0"
    label = html.escape(role_label(role))
    return (
        f'<div class="mcp-turn mcp-turn-{html.escape(role)}" style="border: 1px solid var(--jp-border-color2, '
        f"transparent); border-left: 4px solid {accent}; background: {background}; border-radius: 4px; "
        f'padding: 4px 12px 1px; margin: 8px 0 8px {indent}">'
        f'<div class="mcp-role" style="color: {accent}; font-weight: bold; font-size: 0.85em; '
        f'text-transform: uppercase; letter-spacing: 0.05em">{label}</div>'
    )


def conversation_markdown(rendered: RenderedPrompt) -> str:
    """The conversation as Markdown: one box per turn, its role on top, user and assistant set apart.

    Markdown, not HTML, because front ends render Markdown only in a
    `text/markdown` output: the prompts' own Markdown shows formatted. Each
    turn is an HTML `<div>` whose content is Markdown again (a blank line after
    the opening tag makes it so); images and audio are inline HTML with data
    URIs, other binary resources a download link.
    """
    parts: list[str] = []
    if rendered.name or rendered.description:
        name = code_span(rendered.name) if rendered.name else ""
        parts.append(" — ".join(x for x in (name, escape_markdown(rendered.description or "")) if x))
    for role, blocks in turns(rendered.messages):
        body = "\n\n".join(_block_markdown(block) for block in blocks)
        parts.append(f"{_turn_open(role)}\n\n{body}\n\n</div>")
    return "\n\n".join(parts) + "\n"


def _resource_head(uri: str, mime: str) -> str:
    return f'<small style="opacity: 0.75">Resource</small> {code_span(uri)} · {escape_markdown(mime)}'


def _file_name(uri: str) -> str:
    name = uri.rstrip("/").rpartition("/")[2] or "resource"
    return re.sub(r"[^\w.\- ]", "_", name)


def _block_markdown(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return _img(block.mime_type, block.data)
    if isinstance(block, AudioContent):
        return _audio(block.mime_type, block.data)
    if isinstance(block, EmbeddedResource):
        mime = block.mime_type or "unknown type"
        head = _resource_head(block.uri, mime)
        if block.text is not None:
            return f"{head}\n\n{fence(clipped(block.text, _TEXT_PREVIEW), fence_language(block.mime_type))}"
        blob = block.blob or ""
        if mime.startswith("image/"):
            return f"{head}\n\n{_img(mime, blob)}"
        if mime.startswith("audio/"):
            return f"{head}\n\n{_audio(mime, blob)}"
        return f"{head}\n\n{_download(block.uri, block.mime_type or 'application/octet-stream', blob)}"
    label = (block.title or block.name).replace("]", "\\]")
    extra = " · ".join(x for x in (block.mime_type, block.description) if x)
    link = f'<small style="opacity: 0.75">Link</small> [{label}](<{block.uri}>)'
    return link + (f" ({escape_markdown(extra)})" if extra else "")


def _download(uri: str, mime: str, blob: str) -> str:
    """A link that saves the blob as a file, with its type and size; too large a blob is only described."""
    size = _decoded_size(blob)
    if len(blob) > _MAX_DOWNLOAD_BASE64:
        return f"*{html.escape(mime)}, {size}: too large to offer here; the bytes are in the result's messages.*"
    name = html.escape(_file_name(uri))
    href = f"data:{html.escape(mime)};base64,{html.escape(blob)}"
    return f'<a download="{name}" href="{href}">Download {name}</a> ({html.escape(mime)}, {size})'


_MAX_DOWNLOAD_BASE64 = 8 * 1024 * 1024  # about 6 MiB of bytes: more would swell the saved notebook


def _img(mime_type: str, data: str) -> str:
    return f'<img src="data:{html.escape(mime_type)};base64,{data}" style="max-width: 100%">'


def _audio(mime_type: str, data: str) -> str:
    return f'<audio controls src="data:{html.escape(mime_type)};base64,{data}"></audio>'


def _table_html(
    headers: Sequence[str], rows: Sequence[Sequence[str]], caption: str = "", *, nowrap: Collection[int] = ()
) -> str:
    """An HTML table of `rows` (HTML already); the text of the `nowrap` columns is never broken across lines."""
    head = "".join(f'<th style="text-align: left">{html.escape(h)}</th>' for h in headers)
    styles = ["text-align: left" + ("; white-space: nowrap" if i in nowrap else "") for i in range(len(headers))]
    body = "".join(
        "<tr>" + "".join(f'<td style="{style}">{cell}</td>' for style, cell in zip(styles, row, strict=True)) + "</tr>"
        for row in rows
    )
    cap = f"<caption style='text-align: left'>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _name_html(name: str) -> str:
    """A name in a table (`server:prompt`, a skill's path), in code, never broken across lines (not at a hyphen)."""
    return f'<code style="white-space: nowrap">{html.escape(name)}</code>'


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
            (_name_html(name), html.escape(title), html.escape(args), html.escape(desc))
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
        rows = [[_name_html(name), *map(html.escape, rest)] for name, *rest in self._cells()]
        notes = "".join(f"<div>{html.escape(note)}</div>" for note in self.notes)
        return _table_html(("server", "transport", "status", "target", "from"), rows) + notes


# Adds a Copy button above each block to paste, where the front end runs the output's script (JupyterLab and
# VS Code do for outputs of the running session); elsewhere, and in a reopened notebook, the text is still there.
_COPY_SCRIPT = """<script>
(function (root) {
  if (!root || !navigator.clipboard) return;
  root.querySelectorAll("pre.mcp-paste").forEach(function (pre) {
    var button = document.createElement("button");
    button.textContent = "Copy";
    button.className = "mcp-copy";
    button.style.cssText = "float: right; margin: 2px 0 2px 8px; cursor: pointer";
    button.onclick = function () {
      navigator.clipboard.writeText(pre.textContent).then(
        function () { button.textContent = "Copied"; },
        function () { button.textContent = "Copy failed: select the text"; });
    };
    pre.parentNode.insertBefore(button, pre);
  });
})(document.currentScript && document.currentScript.parentElement);
</script>"""

_PRE_STYLE = (
    "margin: 2px 0 6px; padding: 4px 8px; white-space: pre; overflow-x: auto; "
    "background: var(--jp-layout-color2, rgba(127, 127, 127, 0.1)); border-radius: 3px"
)
_WARNING_STYLE = "color: var(--jp-warn-color0, #bf5b00)"


def _with_code(text: str) -> str:
    """Plain text as HTML, its `backquoted` words as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _folded(summary: str, body: str) -> str:
    return (
        f'<details style="margin: 2px 0"><summary style="cursor: pointer">{summary}</summary>'
        f'<pre class="mcp-paste" style="{_PRE_STYLE}">{html.escape(body)}</pre></details>'
    )


@dataclass(frozen=True, slots=True)
class ServeReport:
    """What `%mcp serve` shows: what is served and where, and how to connect each client.

    In Jupyter (HTML) a short summary, each client's configuration folded in
    a `<details>` with a Copy button; in a terminal (text) everything, as
    lines to paste. Never the token: cell outputs are saved in the notebook.
    """

    served: str  # "Serving …." : what the server offers
    warnings: tuple[str, ...]
    config: ClientConfig
    notes: tuple[str, ...] = ()  # what changed since the last serve (a port that was taken, …)

    def __repr__(self) -> str:
        return "\n".join([self.served, *self.notes, *self.warnings, self.config.text()])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        config = self.config
        parts = [
            f"<div><b>MCP server of this kernel</b> at <code>{html.escape(config.url)}</code>, "
            f"named <code>{html.escape(config.name)}</code> in the configurations below.</div>",
            f"<div>{_with_code(self.served)}</div>",
            *(f"<div>{html.escape(note)}</div>" for note in self.notes),
            *(f'<div style="{_WARNING_STYLE}">{html.escape(warning)}</div>' for warning in self.warnings),
        ]
        if config.token_command is None:
            parts.append(f"<div>{html.escape(config.token_lines()[0])}</div>")
        else:
            summary = "Token: never shown here (cell outputs are saved in the notebook); this command prints it"
            parts.append(_folded(html.escape(summary), config.token_command))
        parts.append('<div style="margin-top: 4px">Connect a client:</div>')
        parts += [_folded(f"<b>{html.escape(heading)}</b>", body) for heading, body in config.clients]
        if config.connection_file:
            parts.append(
                _folded("Connection file (for editors and <code>mcp-notebook connect</code>)", config.connection_file)
            )
        return f'<div class="mcp-serve">{"".join(parts)}{_COPY_SCRIPT}</div>'
