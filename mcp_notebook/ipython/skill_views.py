"""How skills look in Jupyter and in terminals: the table of `%mcp skills`, one skill or file of `%mcp skill`.

`SkillTable` lists the skills of several servers (an HTML table in Jupyter,
aligned columns in a terminal), and says which servers offer none and why.
`SkillView` is a `SkillContent` (what `Connection.read_skill` returns) that
shows itself: a `SKILL.md` as its instructions rendered as Markdown under the
skill's name, origin and description, then the skill's files, each with the
`%mcp skill` line that opens it; any other file as Markdown (`.md`) or as a
fenced block of code. Whatever a server sent is shown as its content, never
as our own interface: names and descriptions are escaped.

Nothing here imports IPython: the objects follow its display protocol.
"""

from __future__ import annotations

import dataclasses
import html
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..client.skills import SKILL_FILE, Skill, SkillContent
from ..sources.skill_format import mime_type_of, split_frontmatter
from ..transcript import code_span, describe_size, escape_markdown, fence, fence_language, markdown_table
from .display import _first_line, _name_html, _table_html, _table_text

__all__ = ["SkillTable", "SkillView"]

_TEXT_LIMIT = 200_000  # characters shown of one file; the object holds all of it


_DYNAMIC = "dynamic (the server publishes no list of files)"


def _files_text(skill: Skill) -> str:
    return _DYNAMIC if skill.size is None else f"{len(skill.files or ())} ({describe_size(skill.size)})"


def open_command(skill: Skill, path: str | None = None) -> str:
    """The `%mcp skill` line that shows `skill` (or one of its files)."""
    words = ["%mcp", "skill", f"{skill.server}:{skill.path}"] + ([path] if path else [])
    return shlex.join(words)


@dataclass(frozen=True, slots=True)
class SkillTable:
    """The skills of one or more servers; `unavailable` says, per server, why it has none to list."""

    listings: Mapping[str, Sequence[Skill]]
    unavailable: Mapping[str, str] | None = None

    @property
    def skills(self) -> tuple[Skill, ...]:
        return tuple(skill for skills in self.listings.values() for skill in skills)

    def _rows(self) -> list[tuple[str, str, str]]:
        """(name, description, files) of each skill; the description whole (a terminal shows its first line)."""
        return [(f"{s.server}:{s.path}", s.description.strip(), _files_text(s)) for s in self.skills]

    def _empty(self) -> str:
        if self.listings:
            return "No skills: the servers that offer skills list none."
        return "No skills."

    def __repr__(self) -> str:
        rows = [(name, _first_line(description), files) for name, description, files in self._rows()]
        text = _table_text(("skill", "description", "files"), rows) if rows else self._empty()
        notes = [f"{server}: {why}" for server, why in (self.unavailable or {}).items()]
        if rows:
            notes.append("%mcp skill SERVER:SKILL shows one.")
        return "\n".join([text, *notes])

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        rows = self._rows()
        if rows:
            cells = [(_name_html(name), *map(html.escape, rest)) for name, *rest in rows]
            table = _table_html(("skill", "description", "files"), cells, nowrap=(2,))
            table += "<div><code>%mcp skill SERVER:SKILL</code> shows one.</div>"
        else:
            table = f"<i>{html.escape(self._empty())}</i>"
        notes = "".join(
            f"<div>{html.escape(server)}: {html.escape(why)}</div>" for server, why in (self.unavailable or {}).items()
        )
        return table + notes


@dataclass(frozen=True, slots=True)
class SkillView(SkillContent):
    """A file of a skill, read and checked, that shows itself; a `SKILL.md` shows the whole skill."""

    @classmethod
    def of(cls, content: SkillContent) -> SkillView:
        return cls(*(getattr(content, field.name) for field in dataclasses.fields(content)))

    @property
    def is_instructions(self) -> bool:
        return self.path == SKILL_FILE

    def _origin(self) -> str:
        check = "checked against its digest" if self.verified else "not checked: the skill is dynamic"
        return f"from MCP server {self.skill.server}, {self.uri} ({describe_size(len(self.data))}, {check})"

    def _details(self) -> list[tuple[str, str]]:
        """Frontmatter fields beyond the name and description, as text."""
        import json

        return [
            (key, value if isinstance(value, str) else json.dumps(value))
            for key, value in self.skill.frontmatter.items()
            if key not in ("name", "description")
        ]

    def _file_rows(self) -> list[tuple[str, str, str]]:
        return [(f.path, describe_size(f.size), open_command(self.skill, f.path)) for f in self.skill.files or ()]

    def __repr__(self) -> str:
        skill = self.skill
        if not self.is_instructions:
            text = self.text
            shown = "(binary file)" if text is None else text[:_TEXT_LIMIT]
            return f"{self.path} of skill {skill.server}:{skill.path}, {self._origin()}\n\n{shown}"
        lines = [f"Skill {skill.server}:{skill.path}: {skill.description}", self._origin()]
        lines += [f"{key}: {value}" for key, value in self._details()]
        lines += ["", (self.body or "").strip()[:_TEXT_LIMIT], ""]
        if skill.files is None:
            lines.append(f"Files: {_DYNAMIC}.")
        else:
            lines += ["Files:", _table_text(("file", "size", "open it with"), self._file_rows())]
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("SkillView(...)" if cycle else repr(self))

    def _repr_markdown_(self) -> str:
        skill = self.skill
        name = code_span(f"{skill.server}:{skill.path}")
        if not self.is_instructions:
            head = f"{code_span(self.path)} of skill {name} — {escape_markdown(self._origin())}"
            return f"{head}\n\n{self._file_markdown()}"
        parts = [f"**Skill {name}** — {escape_markdown(skill.description)}", escape_markdown(self._origin())]
        details = self._details()
        if details:
            parts.append(markdown_table(("field", "value"), [(code_span(k), escape_markdown(v)) for k, v in details]))
        body = (self.body or "").strip()[:_TEXT_LIMIT]
        parts.append(
            '<div class="mcp-skill" style="border-left: 4px solid var(--jp-brand-color1, #1976d2); '
            f'padding: 1px 12px; margin: 8px 0">\n\n{body}\n\n</div>'
        )
        if skill.files is None:
            parts.append(f"Files: {_DYNAMIC}.")
        else:
            rows = [(code_span(p), size, code_span(command)) for p, size, command in self._file_rows()]
            parts.append(markdown_table(("file", "size", "open it with"), rows, right=(1,)))
        return "\n\n".join(parts)

    def _file_markdown(self) -> str:
        text = self.text
        if text is None:
            return f"*A binary file of {describe_size(len(self.data))}; its bytes are in `.data`.*"
        shown = text[:_TEXT_LIMIT]
        mime = self.mime_type or mime_type_of(self.path) or ""
        if mime.startswith("text/markdown") or self.path.endswith(".md"):
            _frontmatter, body = split_frontmatter(shown)
            return body
        return fence(shown, fence_language(mime) or None)
