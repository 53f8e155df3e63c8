"""`SkillRequests`: the Skills extension's requests, made by `PromptClient` (a mixin, to keep that module small).

`skills/list` (every page) and `skills/get` for entries; `resources/read` for
a skill's files, each checked against the entry that lists it (skill_wire.py
says how). A server that does not declare the extension gets no skills
request: `SkillsNotOfferedError` says so.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Protocol

from ..exceptions import ServerError, SkillsNotOfferedError
from .skills import SKILL_FILE, Skill, SkillContent, normalized_path

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["SkillRequests"]

logger = logging.getLogger(__name__)

# A listing that never ends must not hang the caller.
_MAX_PAGES = 1000


class _Host(Protocol):
    """What the requests need of the client they are made by (`PromptClient`)."""

    @property
    def name(self) -> str: ...

    @property
    def offers_skills(self) -> bool | None: ...

    def _live_client(self) -> Client | None: ...

    async def _client(self) -> Client: ...

    async def _skills_client(self) -> Client: ...

    async def get_skill(self, uri: str) -> Skill: ...

    async def _read_checked(self, skill: Skill, path: str) -> tuple[SkillContent | None, str]: ...

    def _translated_errors(self, method: str) -> contextlib.AbstractContextManager[None]: ...


class SkillRequests:
    """The skills of one MCP server: list them, get one entry, read a file of one (checked)."""

    @property
    def offers_skills(self: _Host) -> bool | None:
        """Whether the server declares the Skills extension; None before connecting."""
        client = self._live_client()
        if client is None:
            return None
        from .skills import SKILLS_EXTENSION

        return SKILLS_EXTENSION in (client.server_capabilities.extensions or {})

    async def _skills_client(self: _Host) -> Client:
        client = await self._client()
        if not self.offers_skills:
            raise SkillsNotOfferedError(self.name, client.protocol_version)
        return client

    async def list_skills(self: _Host) -> tuple[Skill, ...]:
        """Every skill the server lists (all pages). `SkillsNotOfferedError` when it does not declare the extension.

        An entry that is not valid is left out with a warning in the log (the
        extension forbids loading it); the others are kept.
        """
        from .skill_wire import list_request, list_result_type, skill_from_entry

        client = await self._skills_client()
        result_type = list_result_type()
        skills: list[Skill] = []
        cursor: str | None = None
        seen: set[str] = set()
        with self._translated_errors("skills/list"):
            for _ in range(_MAX_PAGES):
                page: Any = await client.session.send_request(list_request(cursor), result_type)
                for entry in page.skills:
                    try:
                        skills.append(skill_from_entry(entry, self.name))
                    except ValueError as error:
                        logger.warning("MCP server %s lists a skill that is not valid, left out: %s", self.name, error)
                cursor = page.next_cursor
                if cursor is None:
                    break
                if cursor in seen:
                    raise ServerError(f"{self.name}: skills/list returned the cursor {cursor!r} again")
                seen.add(cursor)
            else:
                raise ServerError(f"{self.name}: skills/list did not end after {_MAX_PAGES} pages")
        return tuple(skills)

    async def get_skill(self: _Host, uri: str) -> Skill:
        """The entry of the skill whose `SKILL.md` is at `uri` (listed or not), fresh from the server."""
        from .skill_wire import get_request, get_result_type, skill_from_entry

        client = await self._skills_client()
        with self._translated_errors("skills/get"):
            result: Any = await client.session.send_request(get_request(uri), get_result_type())
        try:
            return skill_from_entry(result.skill, self.name)
        except ValueError as error:
            raise ServerError(f"{self.name}: skills/get returned an entry that is not valid: {error}") from None

    async def read_skill_file(self: _Host, skill: Skill, path: str = SKILL_FILE) -> SkillContent:
        """One file of `skill`, read with `resources/read` and checked against the skill's entry.

        Only files the entry lists are read; the bytes must have the size and
        digest it lists, and a `SKILL.md` the frontmatter it promised. When they
        do not, the entry is fetched again (`skills/get`: the skill may have
        changed since it was listed) and the file read once more against it; a
        second mismatch is a `ServerError`. A dynamic skill's files have nothing
        to check against but the frontmatter.
        """
        try:
            wanted = normalized_path(path)
        except ValueError as error:
            raise ServerError(f"{skill.reference}: {error}") from None
        problem = ""
        for attempt in range(2):
            content, problem = await self._read_checked(skill, wanted)
            if content is not None:
                return content
            if attempt == 0:
                skill = await self.get_skill(skill.uri)  # changed since listed? check against the current entry
        raise ServerError(f"{skill.reference}: {wanted} does not match the skill's entry: {problem}")

    async def _read_checked(self: _Host, skill: Skill, path: str) -> tuple[SkillContent | None, str]:
        from .skill_wire import content_bytes, verify_content
        from .skills import describe_files

        listed = skill.file(path)
        if listed is None and not skill.dynamic:
            files = describe_files(skill.files or ())
            raise ServerError(f"{skill.reference} has no file {path} (its files: {files})")
        uri = skill.uri_of(path)
        client = await self._client()
        with self._translated_errors("resources/read"):
            result = await client.read_resource(uri)
        try:
            data, mime_type = content_bytes(result, uri)
        except ValueError as error:
            raise ServerError(f"{self.name}: {error}") from None
        problem = verify_content(skill, path, listed, data)
        if problem is not None:
            return None, problem
        content = SkillContent(
            skill=skill, path=path, uri=uri, data=data, mime_type=mime_type, verified=listed is not None
        )
        return content, ""
