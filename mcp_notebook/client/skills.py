"""The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) as a client uses it: entries and verified files.

A server that declares the extension under its capabilities' `extensions`
answers `skills/list` (paginated) and `skills/get` (one entry by the URI of
its `SKILL.md`). An entry carries the skill's frontmatter verbatim and a
complete manifest of its files, each with a SHA-256 digest and a size, or
the string "dynamic" when the server cannot publish stable digests. The
files themselves are ordinary resources, read with `resources/read`.

Here: the wire shapes (the SDK has no types for the extension, so these are
sent with the session's public `send_request`), our model of a skill
(`Skill`, `SkillFile`, `SkillContent`, tagged with the server they came
from: a skill's identity is the pair of server and URI), and the checks the
extension asks of a host: every file read matches its digest and size, a
`SKILL.md` matches the frontmatter its entry promised, and only files the
entry lists are read.
"""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import logging
import posixpath
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "SKILLS_EXTENSION",
    "Skill",
    "SkillContent",
    "SkillFile",
    "content_bytes",
    "find_skill",
    "get_request",
    "get_result_type",
    "list_request",
    "list_result_type",
    "skill_from_entry",
    "verify_content",
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


# -- the wire ----------------------------------------------------------------------------------------


def list_request(cursor: str | None) -> mcp_types.Request[Any, Any]:
    """A `skills/list` request for the page at `cursor`."""
    import mcp_types

    request: mcp_types.Request[Any, Any] = _wire().ListSkillsRequest(
        params=mcp_types.PaginatedRequestParams(cursor=cursor)
    )
    return request


def get_request(uri: str) -> mcp_types.Request[Any, Any]:
    """A `skills/get` request for the skill whose `SKILL.md` is at `uri`."""
    wire = _wire()
    request: mcp_types.Request[Any, Any] = wire.GetSkillRequest(params=wire.GetSkillParams(uri=uri))
    return request


@functools.cache
def _wire() -> Any:
    """The extension's requests and results as SDK models (made on first use: the SDK is imported late)."""
    import mcp_types
    from pydantic import ConfigDict

    class ListSkillsRequest(mcp_types.Request[mcp_types.PaginatedRequestParams, Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"
        params: mcp_types.PaginatedRequestParams

    class GetSkillParams(mcp_types.RequestParams):
        uri: str

    class GetSkillRequest(mcp_types.Request[GetSkillParams, Literal["skills/get"]]):
        method: Literal["skills/get"] = "skills/get"
        params: GetSkillParams

    # Entries are checked one by one (`skill_from_entry`): one bad entry must not lose the others.
    class ListSkillsResult(mcp_types.PaginatedResult):
        model_config = ConfigDict(extra="allow")
        skills: list[Any]

    class GetSkillResult(mcp_types.Result):
        model_config = ConfigDict(extra="allow")
        skill: Any

    return types.SimpleNamespace(
        ListSkillsRequest=ListSkillsRequest,
        GetSkillParams=GetSkillParams,
        GetSkillRequest=GetSkillRequest,
        ListSkillsResult=ListSkillsResult,
        GetSkillResult=GetSkillResult,
    )


def list_result_type() -> type[mcp_types.PaginatedResult]:
    """The model `skills/list` results are read into: `.skills` (raw entries), `.next_cursor`."""
    result: type[mcp_types.PaginatedResult] = _wire().ListSkillsResult
    return result


def get_result_type() -> type[mcp_types.Result]:
    """The model `skills/get` results are read into: `.skill` (the raw entry)."""
    result: type[mcp_types.Result] = _wire().GetSkillResult
    return result


def skill_from_entry(entry: object, server: str) -> Skill:
    """A `Skill` entry off the wire as our model; ValueError saying what is wrong when it is not a valid entry."""
    if not isinstance(entry, Mapping):
        raise ValueError("an entry is not an object")
    uri = entry.get("uri")
    if not isinstance(uri, str) or not uri.endswith("/" + SKILL_FILE):
        raise ValueError(f"its uri {uri!r} is not the URI of a {SKILL_FILE}")
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, Mapping):
        raise ValueError(f"{uri}: it has no frontmatter object")
    name, description = frontmatter.get("name"), frontmatter.get("description")
    if not isinstance(name, str) or not name or not isinstance(description, str):
        raise ValueError(f"{uri}: its frontmatter lacks a name or a description")
    base = uri[: -len(SKILL_FILE) - 1]
    if base.rstrip("/").rsplit("/", 1)[-1] != name:
        raise ValueError(f"{uri}: the last segment of its path is not its name {name!r}")
    resources = entry.get("resources")
    files: tuple[SkillFile, ...] | None
    if resources == "dynamic":
        files = None
    elif isinstance(resources, list):
        files = tuple(_skill_file(item, uri, base) for item in resources)
        if len({f.uri for f in files}) != len(files):
            raise ValueError(f"{uri}: its resources list a file twice")
        if not any(f.uri == uri for f in files):
            raise ValueError(f"{uri}: its resources do not list its {SKILL_FILE}")
    else:
        raise ValueError(f'{uri}: its resources are neither a list of files nor "dynamic"')
    meta = entry.get("_meta")
    return Skill(
        server=server,
        uri=uri,
        frontmatter=dict(frontmatter),
        files=files,
        meta=dict(meta) if isinstance(meta, Mapping) else None,
    )


def _skill_file(item: object, skill_uri: str, base: str) -> SkillFile:
    if not isinstance(item, Mapping):
        raise ValueError(f"{skill_uri}: a resource is not an object")
    uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
    if not isinstance(uri, str) or not uri.startswith(base + "/"):
        raise ValueError(f"{skill_uri}: the file {uri!r} is not inside the skill's folder")
    if not isinstance(digest, str) or not _is_digest(digest):
        raise ValueError(f"{skill_uri}: the file {uri} has no sha256:HEX digest")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"{skill_uri}: the file {uri} has no size")
    path = unquote(uri[len(base) + 1 :])
    if normalized_path(path, strict=False) != path:
        raise ValueError(f"{skill_uri}: the file {uri} has a path that leaves the skill's folder")
    return SkillFile(uri=uri, path=path, digest=digest, size=size)


def _is_digest(text: str) -> bool:
    hex_part = text.removeprefix("sha256:")
    return len(text) == 71 and len(hex_part) == 64 and all(c in "0123456789abcdef" for c in hex_part)


def normalized_path(path: str, *, strict: bool = True) -> str:
    """`path` inside a skill's folder, normalised (`./a//b` is `a/b`); ValueError when it leaves the folder."""
    cleaned = posixpath.normpath(path.replace("\\", "/").lstrip("/")) if path else ""
    if cleaned in ("", ".") or cleaned == ".." or cleaned.startswith("../"):
        if strict:
            raise ValueError(f"{path!r} is not a path inside the skill's folder")
        return ""
    return cleaned


# -- reading and checking -----------------------------------------------------------------------------


def content_bytes(result: mcp_types.ReadResourceResult, uri: str) -> tuple[bytes, str | None]:
    """The raw bytes (and MIME type) of the one content a `resources/read` of `uri` returned."""
    import mcp_types

    contents = [c for c in result.contents if str(c.uri) == uri] or list(result.contents)
    if len(contents) != 1:
        raise ValueError(f"reading {uri} returned {len(contents)} contents, not one")
    content = contents[0]
    if isinstance(content, mcp_types.TextResourceContents):
        return content.text.encode("utf-8"), content.mime_type
    return base64.b64decode(content.blob), content.mime_type


def verify_content(skill: Skill, path: str, listed: SkillFile | None, data: bytes) -> str | None:
    """Why `data` is not the file the entry listed (size, digest, a `SKILL.md`'s frontmatter); None when it is."""
    if listed is not None:
        if len(data) != listed.size:
            return f"it is {len(data)} bytes; the skill's entry says {listed.size}"
        if f"sha256:{hashlib.sha256(data).hexdigest()}" != listed.digest:
            return "its SHA-256 digest is not the one the skill's entry lists"
    if path == SKILL_FILE:
        return _frontmatter_mismatch(skill, data)
    return None


def _frontmatter_mismatch(skill: Skill, data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"its {SKILL_FILE} is not UTF-8 text"
    try:
        parsed = parse_frontmatter(text)
    except ValueError as error:
        return f"its frontmatter cannot be read: {error}"
    if parsed != dict(skill.frontmatter):
        differing = sorted(k for k in {*parsed, *skill.frontmatter} if parsed.get(k) != skill.frontmatter.get(k))
        return f"its frontmatter differs from the skill's entry in {', '.join(differing)}"
    return None


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """The YAML frontmatter of a Markdown text (None when it has none) and the text after it."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :]).lstrip("\n")
    return None, text


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a `SKILL.md` as JSON values (dates as ISO text); ValueError when there is none."""
    import yaml  # type: ignore[import-untyped]

    head, _body = split_frontmatter(text)
    if head is None:
        raise ValueError("the file does not begin with a --- frontmatter block")
    try:
        value = yaml.safe_load(head)
    except yaml.YAMLError as error:
        raise ValueError(str(error).splitlines()[0]) from None
    if not isinstance(value, dict):
        raise ValueError("the frontmatter is not a mapping")
    result: dict[str, Any] = _jsonable(value)
    return result


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return value


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
