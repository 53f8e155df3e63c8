"""The Skills extension's methods (`io.modelcontextprotocol/skills`), answered from the registry's snapshot.

`SkillAnswers` is the part of `Answers` that serves skills, for every
revision and transport alike:

* `skills/list`: every skill's entry (its `SKILL.md` URI, its frontmatter as
  written, every file with its SHA-256 digest and size), paged, cached and
  written as the prompts are (`SkillPages`, a `listing.ListPages`: sealed
  cursors, each entry's JSON made once per set of skills, never splitting an
  entry);
* `skills/get`: one entry by its `SKILL.md` URI; -32602 for any other URI;
* `resources/read` of a `skill://` URI (`read`), and the `skill://` files in
  `resources/list` (`resource_infos`): a `SKILL.md` named and described
  from its frontmatter;
* `resources/directory/read`: the direct children of a skill's folder or of
  any folder inside it (`directoryRead: true` is declared), -32602 for
  anything else.

At 2026-07-28 the lists and entries carry the cache hints (`ttlMs`,
`cacheScope`) as every cacheable result does. The extension defines no
notification of its own: a changed skill is a changed resource list
(`changes.py` announces it in both eras).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic_core import to_json

from ..exceptions import ResourceError
from ..models import SKILL_FILE, SKILL_SCHEME, SKILLS_EXTENSION, EmbeddedResource, ResourceInfo, Skill
from ..registry import PromptRegistry, RegistrySnapshot
from .listing import ListPages, Shape
from .paging import Paginator, fingerprint_of
from .revisions import is_modern

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "DIRECTORY_READ",
    "SKILLS_EXTENSION",
    "SKILLS_GET",
    "SKILLS_LIST",
    "SKILL_METHODS",
    "GetSkillParams",
    "ReadDirectoryParams",
    "SkillAnswers",
    "SkillPages",
]

SKILLS_LIST: Final = "skills/list"
SKILLS_GET: Final = "skills/get"
DIRECTORY_READ: Final = "resources/directory/read"
SKILL_METHODS: Final = frozenset({SKILLS_LIST, SKILLS_GET, DIRECTORY_READ})
DIRECTORY_MIME_TYPE: Final = "inode/directory"

ReadBytes = Callable[[Skill, str], bytes]
"""The bytes of a skill's file now (`SkillCatalog.read_bytes`); raises `FileRefusal` (an `Exception`)."""


class GetSkillParams(types.RequestParams):
    """`skills/get`: the URI of a skill's `SKILL.md`."""

    uri: str


class ReadDirectoryParams(types.PaginatedRequestParams):
    """`resources/directory/read`: a directory resource's URI (no trailing slash), and a cursor."""

    uri: str


def entry_of(skill: Skill) -> dict[str, Any]:
    """A skill's entry as `skills/list` and `skills/get` carry it."""
    base = f"{SKILL_SCHEME}{skill.path}/"
    return {
        "uri": skill.uri,
        "frontmatter": dict(skill.frontmatter),
        "resources": [{"uri": base + f.path, "digest": f.digest, "size": f.size} for f in skill.files or ()],
    }


def with_hints(hints: Callable[[], Mapping[str, Any]], revision: str, result: dict[str, Any]) -> dict[str, Any]:
    """`result` with the server's cache hints (`hints()`) at 2026-07-28, as every cacheable result has them."""
    return {**result, **hints()} if is_modern(revision) else result


class SkillPages(ListPages[Skill]):
    """The `skills/list` pages of a registry's snapshots (`listing.ListPages`); an entry as `entry_of` makes it,
    with the cache hints (`hints`) on every page at 2026-07-28."""

    kind = "skills"

    def __init__(self, paginator: Paginator, *, shape: Shape, hints: Callable[[], Mapping[str, Any]]) -> None:
        super().__init__(paginator, shape=shape)
        self._hints = hints

    def items_of(self, snapshot: RegistrySnapshot) -> Sequence[Skill]:
        return snapshot.skills

    def entries(self, items: Sequence[Skill], revision: str) -> list[bytes]:
        return [to_json(entry_of(skill)) for skill in items]

    def entry_form(self, revision: str) -> str:
        return ""  # an entry is the same in every revision (only the page's cache hints differ): made once

    def result(self, revision: str, next_cursor: str | None) -> dict[str, Any]:
        return with_hints(self._hints, revision, super().result(revision, next_cursor))


class SkillAnswers:
    """The skills methods of one registry (module docstring)."""

    def __init__(
        self,
        registry: PromptRegistry,
        paginator: Paginator,
        read_bytes: ReadBytes,
        *,
        hints: Callable[[], Mapping[str, Any]],
        shape: Shape,
    ) -> None:
        self.registry = registry
        self.paginator = paginator
        self._read_bytes = read_bytes
        self._hints = hints  # {"ttlMs": ..., "cacheScope": ...} of the server's cache policy
        self.pages = SkillPages(paginator, shape=shape, hints=hints)
        # Made once per set of skills (its fingerprint), not per request: the resource listing.
        self._infos: tuple[str, tuple[ResourceInfo, ...]] = ("", ())

    def list_skills(self, revision: str, cursor: str | None) -> dict[str, Any]:
        """The page `cursor` points at, as the SDK would put it on the wire, its list only as JSON
        (`SkillPages.page`; `prepared.plain_result` makes it a plain result)."""
        return self.pages.page(self.registry.snapshot(), revision, cursor)

    def get_skill(self, revision: str, uri: str) -> dict[str, Any]:
        skill = self.registry.snapshot().skills_by_uri.get(uri)
        if skill is None:
            raise MCPError(INVALID_PARAMS, f"No skill is served at {uri}", {"uri": uri})
        return with_hints(self._hints, revision, {"skill": entry_of(skill)})

    # --- resources --------------------------------------------------------------------------------------------

    def resource_infos(self, snapshot: RegistrySnapshot | None = None) -> tuple[ResourceInfo, ...]:
        """Every file of every skill, as `resources/list` shows it (a `SKILL.md` with its name and description)."""
        snapshot = snapshot or self.registry.snapshot()
        if self._infos[0] == snapshot.fingerprint:
            return self._infos[1]
        infos: list[ResourceInfo] = []
        for skill in snapshot.skills:
            base = f"{SKILL_SCHEME}{skill.path}/"
            for file in skill.files or ():
                top = file.path == SKILL_FILE
                name, description = (skill.name, skill.description) if top else (file.path.rsplit("/", 1)[-1], None)
                infos.append(ResourceInfo(base + file.path, name, None, description, file.mime_type, file.size))
        self._infos = (snapshot.fingerprint, tuple(infos))
        return self._infos[1]

    def _locate(self, snapshot: RegistrySnapshot, uri: str) -> tuple[Skill, str] | None:
        """The skill that serves the file at `uri` and the file's path in it (the innermost skill when nested)."""
        if not uri.startswith(SKILL_SCHEME):
            return None
        rest = uri[len(SKILL_SCHEME) :]
        parts = rest.split("/")
        for cut in range(len(parts) - 1, 0, -1):
            skill = snapshot.skills_by_uri.get(f"{SKILL_SCHEME}{'/'.join(parts[:cut])}/{SKILL_FILE}")
            if skill is not None:
                path = "/".join(parts[cut:])
                if skill.file(path) is not None:
                    return skill, path
                return None
        return None

    def serves(self, uri: str) -> bool:
        return uri.startswith(SKILL_SCHEME)

    def read(self, uri: str) -> list[EmbeddedResource]:
        """The contents of the skill file at `uri` (text when it is UTF-8, else base64); `ResourceError` else."""
        found = self._locate(self.registry.snapshot(), uri)
        if found is None:
            raise ResourceError(uri, f"Resource not found: {uri} is not a file of a served skill")
        skill, path = found
        try:
            data = self._read_bytes(skill, path)
        except Exception as problem:  # a refusal of the sandbox, or the file gone since the scan
            raise ResourceError(uri, f"{uri} cannot be read: {problem}") from None
        mime = next(f.mime_type for f in skill.files or () if f.path == path)
        try:
            return [EmbeddedResource(uri=uri, mime_type=mime or "text/plain", text=data.decode("utf-8"))]
        except UnicodeDecodeError:
            return [
                EmbeddedResource(
                    uri=uri, mime_type=mime or "application/octet-stream", blob=base64.b64encode(data).decode()
                )
            ]

    def read_directory(self, revision: str, uri: str, cursor: str | None) -> dict[str, Any]:
        """The direct children of the directory resource `uri` (a skill's folder or a folder inside it)."""
        snapshot = self.registry.snapshot()
        children = self._children(snapshot, uri.rstrip("/") if uri != SKILL_SCHEME else uri)
        if children is None:
            raise MCPError(INVALID_PARAMS, f"{uri} is not a directory resource of a served skill", {"uri": uri})
        page = self.paginator.page(f"directory {uri}", children, fingerprint_of(children), cursor)
        result: dict[str, Any] = {
            "resources": [
                {
                    k: v
                    for k, v in (("uri", i.uri), ("name", i.name), ("mimeType", i.mime_type), ("size", i.size))
                    if v is not None
                }
                for i in page.items
            ]
        }
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    @staticmethod
    def _children(snapshot: RegistrySnapshot, uri: str) -> tuple[ResourceInfo, ...] | None:
        if not uri.startswith(SKILL_SCHEME) or uri.endswith(f"/{SKILL_FILE}"):
            return None
        inside = uri[len(SKILL_SCHEME) :]
        owner: Skill | None = None
        prefix = ""
        for skill in snapshot.skills:  # the innermost skill whose folder holds the directory
            holds = inside == skill.path or inside.startswith(skill.path + "/")
            if holds and (owner is None or len(skill.path) > len(owner.path)):
                owner, prefix = skill, inside[len(skill.path) :].lstrip("/")
        if owner is None:
            return None
        below = prefix + "/" if prefix else ""
        files: dict[str, ResourceInfo] = {}
        folders: set[str] = set()
        for file in owner.files or ():
            if not file.path.startswith(below):
                continue
            rest = file.path[len(below) :]
            if "/" in rest:
                folders.add(rest.split("/", 1)[0])
            else:
                files[rest] = ResourceInfo(f"{uri}/{rest}", rest, None, None, file.mime_type, file.size)
        if below and not files and not folders:
            return None  # no such folder in the skill
        listed = [ResourceInfo(f"{uri}/{name}", name, None, None, DIRECTORY_MIME_TYPE) for name in sorted(folders)]
        return tuple(sorted([*files.values(), *listed], key=lambda info: info.uri))
