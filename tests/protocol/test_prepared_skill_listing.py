"""`skills/list` answered from prepared pages, as `prompts/list` is: the JSON the SDK path writes, page by page.

The pages are the same mechanism as the prompts' (`listing.ListPages`): each
skill's entry serialized once per set of skills, the page's bytes written as
they are by a transport that takes prepared results. These tests hold it to
what the extension's listing is without it: each page's entries are
`skills.entry_of` of the skills the paginator puts on that page, the
envelope is what the SDK's shaping makes at the revision, and the lines
written parse to the same objects whichever path answered.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from protocol_samples import FolderResources
from test_prepared_listing import PAGE_SIZE, Wire, _sdk_path, connected
from wire_harness import ALL_REVISIONS, MODERN

from mcp_notebook.models import Skill, SkillFile
from mcp_notebook.protocol.server import CachePolicy, PromptServer, create_server
from mcp_notebook.protocol.skills import SkillPages, entry_of
from mcp_notebook.registry import PromptRegistry

SKILLS = "skills/list"


def _skill(path: str, description: str, *extra: str) -> Skill:
    files = tuple(
        SkillFile(name, "sha256:" + f"{index:x}" * 64, 10 + index, "text/markdown" if name.endswith(".md") else None)
        for index, name in enumerate(("SKILL.md", *extra))
    )
    frontmatter = {"name": path.rsplit("/", 1)[-1], "description": description, "metadata": {"n": len(extra)}}
    return Skill(Skill.uri_at(path), frontmatter, files, origin=path)


SKILL_SET = [
    _skill("tidy", "Tidy a table."),
    _skill("acme/billing/refunds", 'Quotes " and \\ and \u2028 and emoji \U0001f600', "references/guide.md"),
    _skill("ünï", "tab\tnewline\ncontrol\x01", "scripts/run.py", "assets/logo.png"),
    *(_skill(f"s{i:02}", f"Skill {i}.", "references/guide.md", "scripts/run.py") for i in range(7)),
]


def _registry(skills: list[Skill] = SKILL_SET) -> PromptRegistry:
    registry = PromptRegistry()
    registry.set_skills(skills)
    return registry


def _server(registry: PromptRegistry, **options: Any) -> PromptServer:
    resources = FolderResources()
    return create_server(registry, page_size=PAGE_SIZE, resources=resources, skills=lambda s, p: b"", **options)


async def _pages(wire: Wire) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        reply = await wire.request(SKILLS, {"cursor": cursor} if cursor is not None else {})
        replies.append(reply)
        cursor = reply["result"].get("nextCursor")
        if cursor is None:
            return replies


@pytest.mark.parametrize("taken", [False, True], ids=["results not taken", "results taken"])
@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_every_skills_page_is_the_listing_the_extension_defines(revision: str, taken: bool) -> None:
    registry = _registry()
    policy = CachePolicy(ttl_ms=1234, scope="private")
    prepared, plain = _server(registry, cache=policy), _sdk_path(_server(registry, cache=policy))
    async with connected(prepared, revision, taken=taken) as fast, connected(plain, revision) as slow:
        for _ in range(2):  # built, then from the cache
            fast_pages, slow_pages = await _pages(fast), await _pages(slow)
            assert fast_pages == slow_pages
        # Taken: every page was written from its bytes; else each was serialized by the writer, as the SDK's are.
        assert fast.prepared_lines == (2 * len(fast_pages) if taken else 0)
        assert slow.prepared_lines == 0
        cursor = fast_pages[1]["result"]["nextCursor"]  # a cursor of one path is a cursor of the other
        assert await fast.request(SKILLS, {"cursor": cursor}) == await slow.request(SKILLS, {"cursor": cursor})
    # What the pages hold: every skill's entry once, in URI order, PAGE_SIZE a page.
    skills = registry.snapshot().skills
    assert len(fast_pages) == -(-len(skills) // PAGE_SIZE) > 3
    listed = [entry for page in fast_pages for entry in page["result"]["skills"]]
    assert listed == [json.loads(json.dumps(entry_of(skill))) for skill in skills]
    first = fast_pages[0]["result"]
    if revision == MODERN:
        assert (first["ttlMs"], first["cacheScope"], first["resultType"]) == (1234, "private", "complete")
        assert "serverInfo" in json.dumps(first["_meta"])
    else:
        assert "ttlMs" not in first and "_meta" not in first


@pytest.mark.parametrize("params", [{"cursor": 5}, {"cursor": "not-a-cursor"}, {"cursor": ""}, {"_meta": "x"}])
async def test_refused_params_get_the_sdk_paths_answer(params: dict[str, Any]) -> None:
    registry = _registry()
    async with (
        connected(_server(registry), "2025-11-25") as fast,
        connected(_sdk_path(_server(registry)), "2025-11-25") as slow,
    ):
        fast_reply, slow_reply = await fast.request(SKILLS, params), await slow.request(SKILLS, params)
    assert fast_reply == slow_reply and fast_reply["error"]["code"] == types.INVALID_PARAMS


async def test_a_server_without_skills_knows_no_skills_list() -> None:
    server = create_server(_registry(), page_size=PAGE_SIZE)  # no `skills` reader: the extension is not served
    async with connected(server, "2025-11-25", taken=True) as wire:
        reply = await wire.request(SKILLS)
    assert reply["error"]["code"] == types.METHOD_NOT_FOUND and wire.prepared_lines == 0


async def test_a_change_is_listed_at_once_and_the_unchanged_entries_are_not_made_again() -> None:
    registry = _registry()
    server = _server(registry)
    pages: SkillPages = server.answers.skills.pages  # type: ignore[union-attr]
    async with connected(server, "2025-11-25", taken=True) as wire:
        before = await _pages(wire)
        assert pages.built == len(SKILL_SET)
        added = _skill("zz/new", "A new skill.")
        registry.set_skills([*SKILL_SET, added])
        after = await _pages(wire)
        assert pages.built == len(SKILL_SET) + 1  # only the new skill's entry was made
        uris = [entry["uri"] for page in after for entry in page["result"]["skills"]]
        assert added.uri in uris and len(uris) == len(set(uris)) == len(SKILL_SET) + 1
        stale = await wire.request(SKILLS, {"cursor": before[0]["result"]["nextCursor"]})
        assert stale["error"]["code"] == types.INVALID_PARAMS


async def test_an_entry_is_made_once_for_clients_of_every_revision() -> None:
    # A skill's entry is the same in every revision; only the page's envelope (its cache hints) differs.
    registry = _registry()
    server = _server(registry, cache=CachePolicy(ttl_ms=1234, scope="private"))
    pages: SkillPages = server.answers.skills.pages  # type: ignore[union-attr]
    listings: dict[str, list[dict[str, Any]]] = {}
    for revision in ALL_REVISIONS:
        async with connected(server, revision, taken=True) as wire:
            listings[revision] = await _pages(wire)
    assert pages.built == len(SKILL_SET)
    entries = {
        revision: [e for page in pages_ for e in page["result"]["skills"]] for revision, pages_ in listings.items()
    }
    expected = [json.loads(json.dumps(entry_of(skill))) for skill in registry.snapshot().skills]
    assert all(listed == expected for listed in entries.values())
    assert "ttlMs" in listings[MODERN][0]["result"]
    assert all("ttlMs" not in listed[0]["result"] for revision, listed in listings.items() if revision != MODERN)
