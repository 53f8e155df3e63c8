"""`prompts/list` pages built as dicts once per snapshot: the same wire form as the models, rebuilt on change."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from mcp.server.caching import CacheHint, apply_cache_hint
from mcp_types import methods
from protocol_samples import RICH, sample_registry, simple_prompt

from mcp_notebook.exceptions import InvalidCursorError
from mcp_notebook.models import Icon, PromptArgument, PromptSpec
from mcp_notebook.protocol.convert import to_mcp_prompt, to_mcp_prompt_entry
from mcp_notebook.protocol.listing import PromptPages
from mcp_notebook.protocol.paging import Paginator
from mcp_notebook.protocol.prepared import prepared_json
from mcp_notebook.protocol.revisions import KNOWN_REVISIONS
from mcp_notebook.protocol.server import create_server
from mcp_notebook.registry import PromptRegistry

VARIED = (
    RICH,
    simple_prompt("plain"),
    PromptSpec(name="bare", messages=RICH.messages),
    PromptSpec(name="titled", title="Titled", description="", messages=RICH.messages),
    PromptSpec(
        name="args",
        description="arguments of every kind",
        arguments=(
            PromptArgument("a"),
            PromptArgument("b", title="B", required=False),
            PromptArgument("c", description="", required=True, default="x", completions=("x", "y")),
        ),
        icons=(Icon("https://example.com/i.png"), Icon("data:image/png;base64,AA==", mime_type="image/png")),
        meta={"k": {"nested": [1, 2]}, "org.example/x": None},
        messages=RICH.messages,
    ),
)


HINT = CacheHint(ttl_ms=1000, scope="public")


def _wire(result: dict[str, Any] | types.ListPromptsResult, revision: str) -> dict[str, Any]:
    """As the SDK shapes a handler's result: cache hints filled in, then the revision's surface."""
    if isinstance(result, types.ListPromptsResult):
        dumped = apply_cache_hint(result, HINT).model_dump(by_alias=True, mode="json", exclude_none=True)
    else:
        dumped = {"ttlMs": HINT.ttl_ms, "cacheScope": HINT.scope, **result}
    return methods.serialize_server_result("prompts/list", revision, dumped)


@pytest.mark.parametrize("revision", KNOWN_REVISIONS)
@pytest.mark.parametrize("spec", VARIED, ids=lambda spec: spec.name)
def test_a_dict_entry_reaches_the_wire_as_the_model_does(spec: PromptSpec, revision: str) -> None:
    model = types.ListPromptsResult(prompts=[to_mcp_prompt(spec, revision)], next_cursor="c")
    expected = _wire(model, revision)
    assert _wire(
        {"prompts": [to_mcp_prompt_entry(spec, revision)], "nextCursor": "c", "resultType": "complete"}, revision
    ) == (expected)


def _pages(page_size: int, **bounds: int) -> PromptPages:
    shape = create_server(PromptRegistry())._prompt_pages._shape
    return PromptPages(Paginator(page_size=page_size), shape=shape, **bounds)


def _body(pages: PromptPages, registry: PromptRegistry, revision: str, cursor: str | None) -> bytes:
    body = prepared_json(pages.page(registry.snapshot(), revision, cursor))
    assert body is not None
    return body


def test_pages_are_reused_until_the_snapshot_changes() -> None:
    registry = sample_registry()
    pages = _pages(3)
    first = _body(pages, registry, "2025-11-25", None)
    assert _body(pages, registry, "2025-11-25", None) is first
    assert _body(pages, registry, "2026-07-28", None) != first  # one page per revision
    cursor = json.loads(first)["nextCursor"]
    second = _body(pages, registry, "2025-11-25", cursor)
    assert _body(pages, registry, "2025-11-25", cursor) is second
    registry.set_group("more.ipynb", [simple_prompt("zz", origin="more.ipynb")])
    renewed = json.loads(_body(pages, registry, "2025-11-25", None))
    assert "zz" in [entry["name"] for entry in renewed["prompts"]] or renewed["nextCursor"] != cursor
    with pytest.raises(InvalidCursorError):  # a cursor of the old snapshot, whose page was cached
        pages.page(registry.snapshot(), "2025-11-25", cursor)


def test_every_page_of_a_listing_holds_each_prompt_once() -> None:
    registry = PromptRegistry()
    registry.set_group("many.ipynb", [simple_prompt(f"p{i:03}") for i in range(23)])
    pages = _pages(5, max_pages=2)  # fewer cached pages than the listing has
    for _ in range(2):
        names: list[str] = []
        cursor = None
        while True:
            page = json.loads(_body(pages, registry, "2025-06-18", cursor))
            names += [entry["name"] for entry in page["prompts"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert names == [f"p{i:03}" for i in range(23)]


def test_pages_hold_at_most_so_many_entries() -> None:
    registry = PromptRegistry()
    registry.set_group("many.ipynb", [simple_prompt(f"p{i:03}") for i in range(40)])
    pages = _pages(10, max_page_entries=25)
    results: list[bytes] = []
    cursor = None
    while True:
        results.append(_body(pages, registry, "2025-06-18", cursor))
        cursor = json.loads(results[-1]).get("nextCursor")
        if cursor is None:
            break
    assert len(results) == 4
    # The last two pages (20 entries) are kept; a third would pass 25, so the first two were let go.
    assert _body(pages, registry, "2025-06-18", None) is not results[0]
    assert _body(pages, registry, "2025-06-18", json.loads(results[2])["nextCursor"]) is results[3]
    assert pages.built == 40  # pages made again come from the entries kept as JSON
