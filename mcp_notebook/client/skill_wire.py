"""The Skills extension on the wire: its requests and results, entries into `Skill`s, and the checks on reads.

The SDK has no types for the extension, so its requests are SDK request
models of our own, sent with the session's public `send_request`. An entry
is checked as the extension defines it before it becomes a `Skill`; a file
read must match the digest and size its entry lists, and a `SKILL.md` the
frontmatter its entry promised.
"""

from __future__ import annotations

import base64
import functools
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote

from ..sources.skill_format import SkillFormatError, digest_of_bytes, parse_skill_md
from .skills import SKILL_FILE, Skill, SkillFile, normalized_path

if TYPE_CHECKING:
    import mcp_types
    from mcp import Client

__all__ = ["content_bytes", "get_entry", "list_page", "skill_from_entry", "verify_content"]


async def list_page(client: Client, cursor: str | None) -> Any:
    """The `skills/list` page at `cursor`: `.skills` (its entries, unchecked), `.next_cursor`."""
    import mcp_types

    wire = _wire()
    request = wire.ListSkillsRequest(params=mcp_types.PaginatedRequestParams(cursor=cursor))
    return await client.session.send_request(request, wire.ListSkillsResult)


async def get_entry(client: Client, uri: str) -> object:
    """The `skills/get` entry (unchecked) of the skill whose `SKILL.md` is at `uri`."""
    from ..protocol.skills import GetSkillParams

    wire = _wire()
    result = await client.session.send_request(
        wire.GetSkillRequest(params=GetSkillParams(uri=uri)), wire.GetSkillResult
    )
    return result.skill


@functools.cache
def _wire() -> Any:
    """The extension's requests and results as SDK models (made on first use: the SDK is imported late)."""
    import mcp_types
    from pydantic import ConfigDict

    from ..protocol.skills import GetSkillParams

    class ListSkillsRequest(mcp_types.Request[mcp_types.PaginatedRequestParams, Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"
        params: mcp_types.PaginatedRequestParams

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
        GetSkillRequest=GetSkillRequest,
        ListSkillsResult=ListSkillsResult,
        GetSkillResult=GetSkillResult,
    )


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
        if digest_of_bytes(data) != listed.digest:
            return "its SHA-256 digest is not the one the skill's entry lists"
    if path == SKILL_FILE:
        return _frontmatter_mismatch(skill, data)
    return None


def _frontmatter_mismatch(skill: Skill, data: bytes) -> str | None:
    try:
        parsed = parse_skill_md(data)
    except SkillFormatError as error:
        return f"its frontmatter cannot be read: {error}"
    if parsed != dict(skill.frontmatter):
        differing = sorted(k for k in {*parsed, *skill.frontmatter} if parsed.get(k) != skill.frontmatter.get(k))
        return f"its frontmatter differs from the skill's entry in {', '.join(differing)}"
    return None
