"""`prompts/list` pages as wire dicts, built once per registry snapshot and revision and reused.

A page is the same for every client of one revision until the registry
publishes a new snapshot, so it is built once and served from a small cache
after that. Entries are plain dicts in the shape `convert.to_mcp_prompt` would
dump (the SDK validates and shapes every result for the request's revision
anyway), which skips building a pydantic model per prompt and argument, the
largest share of a listing's cost; the parts `convert` derives (an argument's
default told in words and in `_meta`) come from its own helpers, so both
agree. Cursors are decoded on every request by
the `Paginator`, so they stay exactly as valid or invalid as without a cache.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ..models import PromptArgument, PromptSpec
from ..registry import RegistrySnapshot
from .convert import _argument_defaults_meta, _described_default, to_mcp_icon
from .paging import Paginator
from .revisions import supports

__all__ = ["PromptPages", "prompt_entry"]

# Pages kept per snapshot: enough for clients that page through a large listing
# together, small enough that a 100,000-prompt registry holds a fraction of it.
_MAX_PAGES = 256


def _argument_entry(argument: PromptArgument, with_title: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": argument.name}
    if with_title and argument.title is not None:
        entry["title"] = argument.title
    description = _described_default(argument.description, argument.default)
    if description is not None:
        entry["description"] = description
    entry["required"] = argument.required
    return entry


def prompt_entry(spec: PromptSpec, revision: str) -> dict[str, Any]:
    """The `prompts/list` entry of `spec` for `revision`, as `to_mcp_prompt` dumps it (empty parts left out)."""
    with_title = supports(revision, "title")
    entry: dict[str, Any] = {"name": spec.name}
    if with_title and spec.title is not None:
        entry["title"] = spec.title
    if spec.description is not None:
        entry["description"] = spec.description
    if spec.arguments:
        entry["arguments"] = [_argument_entry(argument, with_title) for argument in spec.arguments]
    if spec.icons and supports(revision, "icons"):
        entry["icons"] = [
            to_mcp_icon(icon).model_dump(by_alias=True, mode="json", exclude_none=True) for icon in spec.icons
        ]
    meta = _argument_defaults_meta(spec, revision)
    if meta is not None:
        entry["_meta"] = meta
    return entry


class PromptPages:
    """The pages of one registry snapshot's prompts, per revision, built at first request."""

    def __init__(self, paginator: Paginator, max_pages: int = _MAX_PAGES) -> None:
        self._paginator = paginator
        self._max_pages = max_pages
        self._snapshot: RegistrySnapshot | None = None
        self._pages: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()

    def page(self, snapshot: RegistrySnapshot, revision: str, cursor: str | None) -> dict[str, Any]:
        """The `prompts/list` result `cursor` points at; `InvalidCursorError` as `Paginator.page` raises it."""
        offset, next_cursor = self._paginator.locate("prompts", len(snapshot.prompts), snapshot.fingerprint, cursor)
        if snapshot is not self._snapshot:
            # A new snapshot: every page may differ, and the old ones are never asked for again.
            self._snapshot = snapshot
            self._pages.clear()
        key = (revision, offset)
        cached = self._pages.get(key)
        if cached is not None:
            self._pages.move_to_end(key)
            return cached
        prompts = snapshot.prompts[offset : offset + self._paginator.page_size]
        result: dict[str, Any] = {"prompts": [prompt_entry(spec, revision) for spec in prompts]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        # As `ListPromptsResult` dumps it; the SDK leaves it out for revisions before 2026-07-28.
        result["resultType"] = "complete"
        self._pages[key] = result
        if len(self._pages) > self._max_pages:
            self._pages.popitem(last=False)
        return result
