"""What the editor shows and inserts for a slash command: markdown docs, snippets, plain text."""

from __future__ import annotations

from mcp_notebook.catalog.pool import ServerStatus
from mcp_notebook.models import PromptArgument, PromptSpec
from mcp_notebook.ranking import CommandEntry

__all__ = [
    "to_argument_markdown",
    "to_command_markdown",
    "to_command_plaintext",
    "to_command_summary",
    "to_insert_text",
    "to_snippet",
]

_SNIPPET_SPECIAL = str.maketrans({"\\": "\\\\", "$": "\\$", "}": "\\}"})


def to_command_summary(spec: PromptSpec) -> str:
    """A one-line description: the title, else the description's first line."""
    text = spec.title or spec.description or ""
    return text.strip().splitlines()[0] if text.strip() else ""


def _default(arg: PromptArgument) -> str:
    """` (default: python)`, as `mcp-notebook list` shows it; "" when the argument has none."""
    return f" (default: {arg.default})" if arg.default is not None else ""


def _argument_line(arg: PromptArgument) -> str:
    flag = " *(required)*" if arg.required else ""
    about = arg.description or arg.title or ""
    default = f" *(default: `{arg.default}`)*" if arg.default is not None else ""
    return f"- `{arg.name}`{flag}{default}" + (f" — {about}" if about else "")


def to_command_markdown(entry: CommandEntry, trigger: str, status: ServerStatus | None = None) -> str:
    """Markdown documentation of a slash command: title, description, arguments, server."""
    spec = entry.spec
    heading = f"**{spec.title}** · `{trigger}{entry.key}`" if spec.title else f"`{trigger}{entry.key}`"
    parts = [heading]
    if spec.description and spec.description != spec.title:
        parts.append(spec.description.strip())
    if spec.arguments:
        parts.append("**Arguments**\n\n" + "\n".join(_argument_line(a) for a in spec.arguments))
    where = f"MCP server `{entry.server}`"
    if status is not None and status.source:
        where += f" ({status.source})"
    parts.append(where)
    return "\n\n".join(parts)


def to_command_plaintext(entry: CommandEntry, trigger: str) -> str:
    """The same documentation for clients that show no markdown."""
    spec = entry.spec
    lines = [f"{trigger}{entry.key}" + (f" — {spec.title}" if spec.title else "")]
    if spec.description and spec.description != spec.title:
        lines += ["", spec.description.strip()]
    if spec.arguments:
        lines += ["", "Arguments:"]
        for arg in spec.arguments:
            about = arg.description or arg.title or ""
            flag = " (required)" if arg.required else ""
            lines.append(f"  {arg.name}{flag}{_default(arg)}" + (f": {about}" if about else ""))
    lines += ["", f"MCP server {entry.server}"]
    return "\n".join(lines)


def to_argument_markdown(arg: PromptArgument) -> str:
    """Markdown documentation of one argument."""
    heading = f"`{arg.name}`" + (" *(required)*" if arg.required else " *(optional)*")
    if arg.default is not None:
        heading += f" · default `{arg.default}`"
    parts = [heading]
    if arg.title and arg.title != arg.name:
        parts.append(f"**{arg.title}**")
    if arg.description:
        parts.append(arg.description)
    return "\n\n".join(parts)


def to_snippet(entry: CommandEntry, trigger: str) -> str:
    """`/server:prompt name=${1:name} lang=${2:lang}`: a tab stop per required argument."""
    head = f"{trigger}{entry.key}".translate(_SNIPPET_SPECIAL)
    required = [a for a in entry.spec.arguments if a.required]
    stops = [
        f"{a.name.translate(_SNIPPET_SPECIAL)}=${{{i}:{a.name.translate(_SNIPPET_SPECIAL)}}}"
        for i, a in enumerate(required, 1)
    ]
    return " ".join([head, *stops]) + ("$0" if not stops else "")


def to_insert_text(entry: CommandEntry, trigger: str) -> str:
    """The plain-text insertion: the command, and `name=` for each required argument."""
    required = [f"{a.name}=" for a in entry.spec.arguments if a.required]
    return " ".join([f"{trigger}{entry.key}", *required])
