"""The Skills extension on the wire: its requests and results, entries into `Skill`s, and the checks on reads.

The SDK has no types for the extension, so its requests are SDK request
models of our own, sent with the session's public `send_request`. An entry
is checked as the extension defines it before it becomes a `Skill`; a file
read must match the digest and size its entry lists, and a `SKILL.md` the
frontmatter its entry promised.
"""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote

from .skills import SKILL_FILE, Skill, SkillFile, normalized_path, split_frontmatter

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "content_bytes",
    "get_request",
    "get_result_type",
    "list_request",
    "list_result_type",
    "parse_frontmatter",
    "skill_from_entry",
    "verify_content",
]


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


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a `SKILL.md` as JSON values (dates as ISO text); ValueError when there is none."""
    import yaml

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
