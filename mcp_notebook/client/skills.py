"""The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) as a client uses it: entries and verified files.

A server that declares the extension under its capabilities' `extensions`
answers `skills/list` (paginated) and `skills/get` (one entry by the URI of
its `SKILL.md`). An entry carries the skill's frontmatter verbatim and a
complete manifest of its files, each with a SHA-256 digest and a size, or
the string "dynamic" when the server cannot publish stable digests. The
files themselves are ordinary resources, read with `resources/read`.

Here: our model of a skill (`Skill`, `SkillFile`, `SkillContent`, tagged
with the server they came from: a skill's identity is the pair of server and
URI) and finding one by name. The wire shapes and the checks a host makes on
what it reads are `skill_wire`'s; the requests, `skill_requests`'.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    pass

__all__ = [
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "Skill",
    "SkillContent",
    "SkillFile",
    "describe_files",
    "find_skill",
    "normalized_path",
    "split_frontmatter",
]

logger = logging.getLogger(__name__)

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
"""The extension's identifier, declared under `capabilities.extensions` by servers that serve skills."""

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill, as its entry lists it: where it is, and the digest and size its bytes must have."""

    uri: str
    path: str
    """Relative to the skill's folder, with `/`: `SKILL.md`, `references/FORMS.md`."""
    digest: str
    """`sha256:` and 64 lowercase hex digits."""
    size: int


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill one server serves: its `SKILL.md` URI, frontmatter and files (None when the server says "dynamic").

    The same skill URI on two servers is two skills: `server` is part of its identity.
    """

    server: str
    uri: str
    frontmatter: Mapping[str, Any]
    files: tuple[SkillFile, ...] | None
    meta: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def dynamic(self) -> bool:
        """Whether the server publishes no manifest (its files cannot be verified)."""
        return self.files is None

    @property
    def base(self) -> str:
        """The URI of the skill's folder (its `SKILL.md` URI without `/SKILL.md`): relative paths resolve here."""
        return self.uri[: -len(SKILL_FILE) - 1]

    @property
    def path(self) -> str:
        """The skill's path in its server's namespace: `pdf-processing`, `acme/billing/refunds`."""
        parts = urlsplit(self.base)
        return unquote(f"{parts.netloc}{parts.path}").strip("/")

    @property
    def reference(self) -> str:
        """How `%mcp skill` names it: `SERVER:NAME`."""
        return f"{self.server}:{self.name}"

    @property
    def size(self) -> int | None:
        return None if self.files is None else sum(f.size for f in self.files)

    def file(self, path: str) -> SkillFile | None:
        """The listed file at `path` (relative to the skill's folder), or None."""
        wanted = normalized_path(path)
        for each in self.files or ():
            if each.path == wanted:
                return each
        return None

    def uri_of(self, path: str) -> str:
        """The resource URI of `path` inside the skill's folder (a listed file's own URI when there is one)."""
        listed = self.file(path)
        return listed.uri if listed is not None else f"{self.base}/{normalized_path(path)}"


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


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """The YAML frontmatter of a Markdown text (None when it has none) and the text after it."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :]).lstrip("\n")
    return None, text


def describe_files(files: Sequence[SkillFile]) -> str:
    """`a.md, b/c.py` — for messages."""
    return ", ".join(f.path for f in files) or "none"


def find_skill(skills: Sequence[Skill], name: str) -> Skill:
    """The skill of `skills` (one server's) that `name` means: its path (`acme/billing/refunds`) or its name.

    Names need not be unique within a server: several skills of one name raise
    `UnknownSkillError` whose suggestions are their paths.
    """
    from ..exceptions import UnknownSkillError
    from ..naming import suggest_names

    wanted = name.strip("/")
    by_path = [s for s in skills if s.path == wanted]
    if by_path:
        return by_path[0]
    by_name = [s for s in skills if s.name == wanted]
    if len(by_name) == 1:
        return by_name[0]
    if by_name:
        raise UnknownSkillError(name, [f"{s.server}:{s.path}" for s in by_name], ambiguous=True)
    close = set(suggest_names(wanted, [s.name for s in skills]))
    raise UnknownSkillError(name, [s.reference for s in skills if s.name in close])
