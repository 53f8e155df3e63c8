"""A rendered prompt written out as text or markdown: the one renderer every front end calls.

The CLI's `render`, the IPython text form (what `%mcp get` shows in a
terminal), the Markdown inside Jupyter's conversation display, the editor
bridge's slash expansion and the code cells a notebook publishes all take
their blocks, role headings, turns, fences, escaping and sizes from here.
Each caller names its `Layout`: nothing here guesses which front end it serves.

A block has two forms:

* text, for terminals: binary data named with its type and size, never
  printed; embedded text under a `[resource URI (type)]` line; links as
  `[link: title <URI>]`.
* markdown, for documents: images and audio as `data:` URI links or
  placeholders such as `[image: image/png]`; embedded text in a fence tagged
  with a language from its MIME type, under its URI; resource links as links.

A fence is always one code block holding exactly its text: it is longer than
any backtick run inside, and a language that cannot stand on the opening line
(a backtick, a line break) is left out.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .models import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    RenderedPrompt,
    ResourceLink,
    TextContent,
)

__all__ = [
    "BlockForm",
    "Grouping",
    "HeadingPolicy",
    "HeadingStyle",
    "Layout",
    "MediaStyle",
    "TitleStyle",
    "block_markdown",
    "block_text",
    "clipped",
    "code_span",
    "data_size",
    "describe_size",
    "escape_markdown",
    "fence",
    "fence_language",
    "frame_markdown",
    "markdown_table",
    "role_label",
    "to_transcript",
    "turns",
]

BlockForm = Literal["text", "markdown"]
MediaStyle = Literal["placeholder", "data-uri"]
Grouping = Literal["message", "turn"]
HeadingPolicy = Literal["always", "when-speakers-differ"]
HeadingStyle = Literal["markdown", "markdown-as-sent", "bracketed"]
TitleStyle = Literal["markdown", "summary"]


@dataclass(frozen=True, slots=True)
class Layout:
    """How `to_transcript` writes a rendered prompt out; each front end names every choice it makes."""

    blocks: BlockForm
    """`text` for terminals, `markdown` for documents (see the module's docstring)."""
    sections: Grouping
    """A section for each message, or for each turn (consecutive messages of one role)."""
    headings: HeadingPolicy
    """A role heading on every section, or only when more than one role speaks."""
    heading: HeadingStyle = "markdown"
    """`## User` (`markdown`), `## user` (`markdown-as-sent`, the role as the prompt names it) or `[user]`."""
    title: TitleStyle | None = None
    """`# name: description` when there is a description (`markdown`), or `name: N messages` and the
    description below (`summary`), or none."""
    media: MediaStyle = "placeholder"
    """Markdown only: images and audio as placeholders, or as links with the data in a `data:` URI."""
    clip: int | None = None
    """Text longer than this many characters is cut, saying how much was left out."""
    trim: bool = False
    """Line breaks around each block are dropped, so blocks stand exactly one blank line apart."""


# -- sizes and clipping ------------------------------------------------------------------------


def data_size(data: str) -> int:
    """Bytes encoded by a base64 string, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def describe_size(size: int) -> str:
    return f"{size} bytes" if size < 10_000 else f"{size / 1024:.0f} KiB"


def clipped(text: str, clip: int | None) -> str:
    """`text`, or its first `clip` characters and how many more there were."""
    if clip is None or len(text) <= clip:
        return text
    return f"{text[:clip]}… ({len(text) - clip} more characters)"


# -- markdown syntax ---------------------------------------------------------------------------

_BACKTICK_RUN = re.compile(r"`+")
_FENCE_RUN = re.compile(r"`{3,}")
_LINE_BREAKS = re.compile(r"[\r\n]+")
_LANGUAGES = {
    "application/json": "json",
    "application/javascript": "javascript",
    "application/x-ipynb+json": "json",
    "application/xml": "xml",
    "application/x-sh": "sh",
    "application/toml": "toml",
    "application/yaml": "yaml",
    "text/x-python": "python",
    "text/javascript": "javascript",
    "text/plain": "",
}


def fence(text: str, language: str | None = None) -> str:
    """`text` as one fenced code block, whatever it holds (no trailing newline).

    The fence is longer than any backtick run inside, so the text cannot close
    it early; a `language` that cannot stand on the opening line is left out.
    """
    longest = max((len(m.group(0)) for m in _FENCE_RUN.finditer(text)), default=2)
    marks = "`" * (longest + 1)
    tag = (language or "").strip()
    if "`" in tag or not tag.isprintable():
        tag = ""
    body = text if text.endswith("\n") else text + "\n"
    return f"{marks}{tag}\n{body}{marks}"


def fence_language(mime_type: str | None) -> str:
    """The language a fence is tagged with for text of this MIME type ("" when none fits)."""
    if not mime_type:
        return ""
    mime = mime_type.split(";", 1)[0].strip().lower()
    if mime in _LANGUAGES:
        return _LANGUAGES[mime]
    kind, _, sub = mime.partition("/")
    if kind == "text" or sub.startswith("x-"):
        return sub.removeprefix("x-").removeprefix("script.")
    return ""


def code_span(text: str) -> str:
    """`text` as inline code that no backtick inside ends early."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    marks = "`" * (longest + 1)
    # CommonMark takes one space off each end when both ends have one: pad so what it takes is ours.
    edges = text[:1] + text[-1:]
    pad = " " if "`" in edges or (edges == "  " and text.strip(" ")) else ""
    return f"{marks}{pad}{text}{pad}{marks}"


def escape_markdown(text: str) -> str:
    """`text` shown literally inside a line of Markdown: no HTML, emphasis or line break of its own."""
    one_line = _LINE_BREAKS.sub(" ", text)
    return html.escape(one_line, quote=False).replace("*", "\\*").replace("_", "\\_")


# -- tables ------------------------------------------------------------------------------------

TABLE_ROWS = 200  # a frame longer than this is sent as its first rows and a line saying how many there are
_CELL_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def _cell(value: object) -> str:
    # A cell is one line: a pipe would end it early, a line break would end the row.
    if isinstance(value, float) and value != value:
        return "NaN"  # as pandas prints a missing number
    return _CELL_BREAKS.sub(" ", str(value)).strip().replace("\\", "\\\\").replace("|", "\\|")


def markdown_table(header: Sequence[object], rows: Iterable[Sequence[object]], right: Collection[int] = ()) -> str:
    """A GitHub-flavoured Markdown table (no trailing newline); columns in `right` align right (numbers)."""
    head = [_cell(name) for name in header]
    lines = ["| " + " | ".join(head) + " |"]
    lines.append("|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|")
    lines.extend("| " + " | ".join(_cell(value) for value in row) + " |" for row in rows)
    return "\n".join(lines)


def _is_number_dtype(dtype: object) -> bool:
    # numpy's kind codes: bool, int, unsigned, float, complex. Extension dtypes (Int64, Float64) carry `kind` too.
    return getattr(dtype, "kind", "") in ("i", "u", "f", "c")


def _default_index(index: Any) -> bool:
    """Whether an index is the 0, 1, 2, … pandas gives a frame that was not given one (no need to show it)."""
    start, step = getattr(index, "start", None), getattr(index, "step", None)
    return type(index).__name__ == "RangeIndex" and start == 0 and step == 1 and index.name is None


def frame_markdown(frame: Any, max_rows: int = TABLE_ROWS) -> str:
    """A pandas DataFrame or Series as a Markdown table, through pandas' public API only (no `tabulate`).

    The index is a first column unless it is the default 0, 1, 2, …; numbers
    align right; missing values read as pandas prints them (`NaN`, `<NA>`,
    `NaT`). Past `max_rows` rows, the first ones are shown with a line saying
    how many there are.
    """
    if type(frame).__name__ == "Series":
        frame = frame.to_frame(name=frame.name if frame.name is not None else "value")
    index = frame.index
    show_index = not _default_index(index)
    columns = list(frame.columns)
    header: list[object] = ([index.name if index.name is not None else ""] if show_index else []) + columns
    dtypes = list(frame.dtypes)
    right = {i + show_index for i, dtype in enumerate(dtypes) if _is_number_dtype(dtype)}
    total = len(frame)
    shown = frame.head(max_rows) if total > max_rows else frame
    rows = (
        ((label, *values) if show_index else values)
        for label, values in zip(shown.index, shown.itertuples(index=False, name=None), strict=True)
    )
    table = markdown_table(header, rows, right)
    if total > max_rows:
        table += f"\n\n(the first {max_rows} of {total} rows)"
    return table


# -- blocks ------------------------------------------------------------------------------------


def block_text(block: ContentBlock, *, clip: int | None = None) -> str:
    """`block` as plain text; text longer than `clip` characters is cut, saying how much was left out."""
    if isinstance(block, TextContent):
        return clipped(block.text, clip)
    if isinstance(block, ImageContent | AudioContent):
        return f"[{block.mime_type}, {describe_size(data_size(block.data))}]"
    if isinstance(block, ResourceLink):
        return f"[link: {block.title or block.name} <{block.uri}>]"
    if not isinstance(block, EmbeddedResource):
        raise TypeError(f"unknown content block: {block!r}")
    if block.text is not None:
        return f"[resource {block.uri} ({block.mime_type or 'text'})]\n{clipped(block.text, clip)}"
    size = describe_size(data_size(block.blob or ""))
    return f"[resource {block.uri}, {block.mime_type or 'binary'}, {size}]"


def _media(kind: str, data: str, mime_type: str, media: MediaStyle) -> str:
    if media == "data-uri":
        bang = "!" if kind == "image" else ""
        return f"{bang}[{kind}](data:{mime_type};base64,{data})"
    return f"[{kind}: {mime_type}]"


def block_markdown(block: ContentBlock, *, media: MediaStyle = "placeholder", clip: int | None = None) -> str:
    """`block` as Markdown for a document; embedded text longer than `clip` characters is cut."""
    if isinstance(block, TextContent):
        return clipped(block.text, clip)
    if isinstance(block, ImageContent):
        return _media("image", block.data, block.mime_type, media)
    if isinstance(block, AudioContent):
        return _media("audio", block.data, block.mime_type, media)
    if isinstance(block, EmbeddedResource):
        if block.text is not None:
            return f"{block.uri}\n{fence(clipped(block.text, clip), fence_language(block.mime_type))}"
        mime = block.mime_type or "application/octet-stream"
        if block.blob is not None and mime.startswith("image/"):
            return _media("image", block.blob, mime, media)
        return f"[resource: {block.uri} ({mime})]"
    if isinstance(block, ResourceLink):
        return f"[{block.title or block.name}]({block.uri})"
    raise TypeError(f"unknown content block: {block!r}")


# -- speakers ----------------------------------------------------------------------------------


def turns(messages: Iterable[PromptMessage]) -> list[tuple[str, list[ContentBlock]]]:
    """The messages as turns: consecutive messages of one role are one turn, in order."""
    found: list[tuple[str, list[ContentBlock]]] = []
    for message in messages:
        if found and found[-1][0] == message.role:
            found[-1][1].append(message.content)
        else:
            found.append((message.role, [message.content]))
    return found


def role_label(role: str) -> str:
    """A role as a heading names it: `User`, `Assistant`."""
    return role.capitalize()


def _heading(role: str, style: HeadingStyle) -> str:
    if style == "bracketed":
        return f"[{role}]\n"
    return f"## {role if style == 'markdown-as-sent' else role_label(role)}\n\n"


def _title(rendered: RenderedPrompt, style: TitleStyle) -> str | None:
    if style == "markdown":
        return f"# {rendered.name}: {rendered.description}" if rendered.description else None
    count = len(rendered.messages)
    summary = f"{rendered.name or 'prompt'}: {count} message{'s' if count != 1 else ''}"
    return f"{summary}\n{rendered.description}" if rendered.description else summary


def _sections(rendered: RenderedPrompt, grouping: Grouping) -> list[tuple[str, Sequence[ContentBlock]]]:
    if grouping == "turn":
        return list(turns(rendered.messages))
    return [(message.role, [message.content]) for message in rendered.messages]


def to_transcript(rendered: RenderedPrompt, layout: Layout) -> str:
    """`rendered` written out as `layout` says: its title, then each section, a blank line apart."""
    headed = layout.headings == "always" or len({m.role for m in rendered.messages}) > 1
    parts: list[str] = []
    if layout.title is not None and (title := _title(rendered, layout.title)) is not None:
        parts.append(title)
    for role, blocks in _sections(rendered, layout.sections):
        texts = (
            block_text(b, clip=layout.clip)
            if layout.blocks == "text"
            else block_markdown(b, media=layout.media, clip=layout.clip)
            for b in blocks
        )
        body = "\n\n".join(t.strip("\n") if layout.trim else t for t in texts)
        parts.append(_heading(role, layout.heading) + body if headed else body)
    return "\n\n".join(parts)
