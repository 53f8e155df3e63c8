"""The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) as a client uses it: entries and verified files.

A server that declares the extension under its capabilities' `extensions`
answers `skills/list` (paginated) and `skills/get` (one entry by the URI of
its `SKILL.md`). An entry carries the skill's frontmatter verbatim and a
complete manifest of its files, each with a SHA-256 digest and a size, or
the string "dynamic" when the server cannot publish stable digests. The
files themselves are ordinary resources, read with `resources/read`.

Here: the content of a skill's file (`SkillContent`; a skill and its files
are the model's `Skill` and `SkillFile`, tagged with the server they came
from: a skill's identity is the pair of server and URI) and finding one by
name. The wire shapes and the checks a host makes on what it reads are
`skill_wire`'s; the requests, `skill_requests`'.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from ..models import SKILL_FILE, Skill, SkillFile

__all__ = [
    "SKILL_FILE",
    "Skill",
    "SkillContent",
    "SkillFile",
    "find_skill",
    "normalized_path",
]


@dataclass(frozen=True, slots=True)
class SkillContent:
    """The content of one file of a skill, checked against the skill's entry.

    `text` is the file decoded as UTF-8 (None for a binary file); `data` its
    raw bytes. `verified` is False only for a dynamic skill, whose files have
    no digests to check.
    """

    skill: Skill
    path: str
    uri: str
    data: bytes
    mime_type: str | None
    verified: bool

    @property
    def text(self) -> str | None:
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def body(self) -> str | None:
        """The text without its YAML frontmatter (for a `SKILL.md`: the instructions)."""
        from ..sources.skill_format import split_frontmatter

        text = self.text
        return None if text is None else split_frontmatter(text)[1]


def normalized_path(path: str, *, strict: bool = True) -> str:
    """`path` inside a skill's folder, normalised (`./a//b` is `a/b`); ValueError when it leaves the folder."""
    cleaned = posixpath.normpath(path.replace("\\", "/").lstrip("/")) if path else ""
    if cleaned in ("", ".") or cleaned == ".." or cleaned.startswith("../"):
        if strict:
            raise ValueError(f"{path!r} is not a path inside the skill's folder")
        return ""
    return cleaned


def find_skill(skills: Sequence[Skill], name: str) -> Skill:
    """The skill of `skills` (of one server or several) that `name` means: its path (`acme/billing/refunds`),
    else its name.

    Names need not be unique within a server, nor paths across servers:
    several skills raise `UnknownSkillError` whose suggestions are `server:path`.
    """
    from ..exceptions import UnknownSkillError
    from ..naming import suggest_names

    wanted = name.strip("/")
    for found in ([s for s in skills if s.path == wanted], [s for s in skills if s.name == wanted]):
        if len(found) > 1:
            raise UnknownSkillError(name, [f"{s.server}:{s.path}" for s in found], ambiguous=True)
        if found:
            return found[0]
    close = set(suggest_names(wanted, [s.name for s in skills]))
    raise UnknownSkillError(name, [s.reference for s in skills if s.name in close])
