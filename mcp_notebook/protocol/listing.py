"""List pages (`prompts/list`, `skills/list`), built once per registry snapshot and revision, and answered as they are.

A page is the same for every client of one revision until the registry
publishes a new snapshot, so nothing of it is built twice. `ListPages` is
the one way both lists are paged, cached and written; what differs is how an
item's entry is made (`PromptPages` here, `skills.SkillPages` for skills).
Each prompt's entry is made by `convert.to_mcp_prompt_entry` (a plain dict,
no pydantic model per prompt and argument), serialized once (`entries_json`:
what the prompts of one notebook share, once for them all), and kept as JSON
bytes: a few hundred bytes a prompt and no objects for the garbage
collector, so a listing of any size is kept whole until the list changes.
After a change, the entries of the items it did not touch (the same objects)
are kept instead of being built again.

A page has one form, whoever asks (`ListPages.page`): the result as the
SDK would put it on the wire (its envelope, cache hints and stamps shaped by
the SDK's own shaping, `sdk_seam.shape_result`), *hollow* (`prepared`): the
list exists only as JSON, joined inside the envelope's, so the whole page is
bytes made once. A transport that writes results through `prepared` (stdio,
and `Answers.answer` for stateless HTTP) writes those bytes as they are; for
one that serializes results itself, the middleware hands over the plain
result (`prepared.plain_result`: the list parsed from its JSON). Once such a
page is written, the next one is built while the client reads.

A cursor is checked by the `Paginator`, unless this cache issued it for the
current snapshot (then where it points is known), so cursors stay exactly
as valid or invalid as without a cache.
"""

from __future__ import annotations

import gc
import json
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, Generic, Protocol, TypeVar

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import PaginatedRequestParams
from mcp_types import methods as sdk_methods
from pydantic_core import to_json

from ..models import PromptSpec
from ..registry import RegistrySnapshot
from .convert import EntryFields, to_mcp_prompt_entry
from .errors import to_mcp_error
from .paging import Paginator
from .prepared import PreparedResults, plain_result, prepare_hollow
from .sdk_seam import initialize_accepted

__all__ = ["LIST_PROMPTS", "ListPages", "PreparedListing", "PromptPages", "entries_json"]

LIST_PROMPTS: Final = "prompts/list"

# The JSON of the pages served lately: enough for clients that page through a large listing together, a
# fraction of a 100,000-prompt one.
_MAX_PAGES = 256
_MAX_PAGE_ENTRIES = 12_800

Shape = Callable[[str, dict[str, Any]], dict[str, Any]]
"""(revision, handler result) -> the result as the SDK puts it on the wire at that revision."""


def _null_in_meta(entry: dict[str, Any]) -> bool:
    meta = entry.get("_meta")
    return meta is not None and None in meta.values()  # wire values: only null equals None


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile: entries are acyclic, and a collection would only visit them.

    Building a large listing makes hundreds of thousands of small dicts and
    lists; with collection on, most of that time goes to collections that
    find nothing (they are freed by reference counting, or kept as bytes).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_PLACE: Final = "\x00mcp-notebook-list\x00"
"""Stands in for the list while an envelope is serialized; its JSON (`\\u0000...`) is split out after."""


@dataclass(frozen=True, slots=True)
class _Envelope:
    """A page's result without its items: the wire dict (list empty, under `key`), and its JSON around the list
    (None when it cannot be cut there: then the page's JSON is made whole)."""

    wire: dict[str, Any]
    key: str
    before: bytes | None
    after: bytes | None

    def around(self, items: bytes) -> bytes:
        if self.before is None or self.after is None:
            return to_json({**self.wire, self.key: json.loads(items)})
        return self.before + items + self.after


_HEAD: Final = ("name", "title", "description")
"""The fields of an entry that are each prompt's own; `to_mcp_prompt_entry` puts them first."""


def entries_json(prompts: Sequence[PromptSpec], revision: str, shape: Shape | None = None) -> list[bytes]:
    """The JSON of each prompt's `prompts/list` entry at `revision`: `to_json(to_mcp_prompt_entry(...))`, byte for byte.

    Prompts of one notebook share their arguments, icons and `_meta` (the same
    objects), so the JSON after an entry's name, title and description is
    made once for each such trio of objects and joined to each prompt's own
    fields. An entry with a null in `_meta`, which some revisions' shaping
    drops, is shaped by the SDK (`shape`) and made whole.
    """
    fields = EntryFields.of(revision)
    # (id(arguments), id(icons), id(meta)) -> the JSON after the head, or None (this trio is made whole each time);
    # the trio is kept beside it, so that no id among them can be another object's meanwhile.
    tails: dict[tuple[int, int, int], tuple[bytes | None, object]] = {}
    built: list[bytes] = []
    with _collector_paused():
        for spec in prompts:
            shared = (spec.arguments, spec.icons, spec.meta)
            key = (id(shared[0]), id(shared[1]), id(shared[2]))
            known = tails.get(key)
            if known is not None and known[0] is not None:
                head: dict[str, Any] = {"name": spec.name}
                if fields.title and spec.title is not None:
                    head["title"] = spec.title
                if spec.description is not None:
                    head["description"] = spec.description
                built.append(to_json(head)[:-1] + known[0])
                continue
            entry = to_mcp_prompt_entry(spec, revision, fields)
            if _null_in_meta(entry):
                if shape is not None:
                    entry = shape(revision, {"prompts": [entry], "resultType": "complete"})["prompts"][0]
                tails[key] = (None, shared)
                built.append(to_json(entry))
                continue
            whole = to_json(entry)
            head_json = to_json({name: entry[name] for name in _HEAD if name in entry})
            tail = whole[len(head_json) - 1 :] if whole.startswith(head_json[:-1]) else None
            tails[key] = (tail, shared)
            built.append(whole)
    return built


Item = TypeVar("Item")


class ListPages(Generic[Item]):
    """The pages of one list of a registry snapshot (`kind`: its key and its cursors' kind), per revision,
    built at first request.

    Each item's entry is serialized once per form (`entry_form`: per revision,
    unless a list's entries are the same in several) and kept as bytes (no
    objects for the collector to visit, a few hundred bytes an item), so every
    page of a listing of any size is kept until the list changes; a page is
    those bytes joined inside its envelope, kept for the last pages asked for,
    at most `max_pages` holding `max_page_entries` items. After a change, the
    entries of the items it did not touch (the same objects) are kept instead
    of being built again. A page written by a transport that takes prepared
    results (`prepared`) also builds the next one once it is written, while
    the client reads it.

    A list says which items it pages (`items_of`), how their entries are
    serialized (`entries`) and in which revisions they differ (`entry_form`),
    and its result around an empty list (`result`).
    """

    kind: str = ""

    def __init__(
        self,
        paginator: Paginator,
        *,
        shape: Shape,
        max_pages: int = _MAX_PAGES,
        max_page_entries: int = _MAX_PAGE_ENTRIES,
        max_forms: int = 2,
    ) -> None:
        self._paginator = paginator
        self._shape = shape
        self._max_pages = max_pages
        self._max_page_entries = max_page_entries
        self._max_forms = max_forms  # of entry kept (the revisions asked for lately, for prompts)
        self._snapshot: RegistrySnapshot | None = None
        # Per form of entry (`entry_form`: a revision, for prompts), the JSON of each item's entry by `id(item)`:
        # this snapshot's, and the last one's (whose items `_kept_alive` holds, so no id among them can be another
        # object's).
        self._entries: OrderedDict[str, dict[int, bytes]] = OrderedDict()
        self._stale: dict[str, dict[int, bytes]] = {}
        self._kept_alive: Sequence[Item] = ()
        self._envelopes: dict[tuple[str, int], _Envelope] = {}
        # The JSON of the last pages served (their list, the whole page, how many items it holds).
        self._bodies: OrderedDict[tuple[str, int], tuple[bytes, bytes, int]] = OrderedDict()
        self._body_entries = 0
        # Where each cursor issued for this snapshot points, and the cursor after that page.
        self._issued: dict[str | None, tuple[int, str | None]] = {}
        self.built = 0  # entries serialized so far (what a change costs shows here)

    # --- what each list says ----------------------------------------------------------------------------------

    def items_of(self, snapshot: RegistrySnapshot) -> Sequence[Item]:
        raise NotImplementedError

    def entries(self, items: Sequence[Item], revision: str) -> list[bytes]:
        """The JSON of each item's entry at `revision`."""
        raise NotImplementedError

    def entry_form(self, revision: str) -> str:
        """Which form the entries take at `revision`: revisions of one form share each entry's JSON, made once."""
        return revision

    def result(self, revision: str, next_cursor: str | None) -> dict[str, Any]:
        """A page's result with its list empty, before the SDK's shaping."""
        result: dict[str, Any] = {self.kind: []}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # --- the pages --------------------------------------------------------------------------------------------

    def _locate(self, snapshot: RegistrySnapshot, cursor: str | None) -> tuple[int, str | None]:
        issued = self._issued.get(cursor) if snapshot is self._snapshot else None
        count = len(self.items_of(snapshot))
        if issued is not None:
            # A cursor this cache handed out for this very snapshot: decoding it again would say the same.
            location = issued
        else:
            location = self._paginator.locate(self.kind, count, snapshot.fingerprint, cursor)
        if snapshot is not self._snapshot:
            # A new snapshot: every page may differ (their cursors do), and the old ones are never asked for
            # again; the entries of the items that did not change are kept.
            if self._snapshot is not None:
                self._stale, self._kept_alive = dict(self._entries), self.items_of(self._snapshot)
            self._snapshot = snapshot
            self._entries = OrderedDict((form, {}) for form in self._stale)
            self._envelopes, self._issued = {}, {}
            self._bodies, self._body_entries = OrderedDict(), 0
        offset, next_cursor = location
        if next_cursor is not None and next_cursor not in self._issued:
            end = offset + self._paginator.page_size
            after = self._paginator.cursor_after(self.kind, count, snapshot.fingerprint, end)
            self._issued[next_cursor] = (end, after)
        return location

    def _entries_of(self, form: str) -> dict[int, bytes]:
        entries = self._entries.get(form)
        if entries is None:
            entries = self._entries[form] = {}
            while len(self._entries) > self._max_forms:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(form)
        return entries

    def _items(self, page: Sequence[Item], revision: str) -> list[bytes]:
        """The JSON of each item's entry, built for those not kept yet."""
        form = self.entry_form(revision)
        entries = self._entries_of(form)
        stale = self._stale.get(form, {})
        items: list[bytes] = []
        missing: list[int] = []
        for item in page:
            key = id(item)
            made = entries.get(key)
            if made is None:
                made = stale.get(key)
                if made is None:
                    missing.append(len(items))
                else:
                    entries[key] = made
            items.append(made or b"")
        if missing:
            built = self.entries([page[index] for index in missing], revision)
            for index, made in zip(missing, built, strict=True):
                items[index] = entries[id(page[index])] = made
            self.built += len(missing)
        return items

    def _envelope(self, revision: str, offset: int, next_cursor: str | None) -> _Envelope:
        key = (revision, offset)
        envelope = self._envelopes.get(key)
        if envelope is None:
            wire = self._shape(revision, self.result(revision, next_cursor))
            place = to_json(_PLACE)
            before, found, after = to_json({**wire, self.kind: _PLACE}).partition(place)
            if not found or place in before or place in after or self.kind not in wire:
                envelope = _Envelope(wire, self.kind, None, None)
            else:
                envelope = _Envelope(wire, self.kind, before, after)
            self._envelopes[key] = envelope
        return envelope

    def page(self, snapshot: RegistrySnapshot, revision: str, cursor: str | None) -> dict[str, Any]:
        """The result `cursor` points at, hollow (module docstring); `InvalidCursorError` as `Paginator.page`
        raises it."""
        offset, next_cursor = self._locate(snapshot, cursor)
        envelope = self._envelope(revision, offset, next_cursor)
        end = offset + self._paginator.page_size
        key = (revision, offset)
        cached = self._bodies.get(key)
        if cached is not None:
            self._bodies.move_to_end(key)
            items, body, _ = cached
        else:
            page = self.items_of(snapshot)[offset:end]
            items = b"[" + b",".join(self._items(page, revision)) + b"]"
            body = envelope.around(items)
            self._bodies[key] = (items, body, len(page))
            self._body_entries += len(page)
            while len(self._bodies) > 1 and (
                len(self._bodies) > self._max_pages or self._body_entries > self._max_page_entries
            ):
                self._body_entries -= self._bodies.popitem(last=False)[1][2]

        def build_next() -> None:
            if next_cursor is not None and snapshot is self._snapshot:
                self._items(self.items_of(snapshot)[end : end + self._paginator.page_size], revision)

        # The next page's entries are built once, after this page is first written; they stay for the snapshot.
        return prepare_hollow(
            envelope.wire, self.kind, body, items, after_written=build_next if cached is None else None
        )


class PromptPages(ListPages[PromptSpec]):
    """The `prompts/list` pages of a registry's snapshots (`ListPages`); entries by `entries_json`."""

    kind = "prompts"

    def items_of(self, snapshot: RegistrySnapshot) -> Sequence[PromptSpec]:
        return snapshot.prompts

    def entries(self, items: Sequence[PromptSpec], revision: str) -> list[bytes]:
        return entries_json(items, revision, self._shape)

    def result(self, revision: str, next_cursor: str | None) -> dict[str, Any]:
        # As `ListPromptsResult` dumps it; the SDK leaves it out for revisions before 2026-07-28.
        return {**super().result(revision, next_cursor), "resultType": "complete"}


class PageMaker(Protocol):
    """What `PreparedListing` asks for a page (`answers.Answers`): which lists it pages, and a page of one."""

    @property
    def paged_lists(self) -> frozenset[str]: ...

    def list_page(self, method: str, revision: str, cursor: str | None) -> dict[str, Any]: ...


class PreparedListing:
    """Server middleware: answers the paged lists (`prompts/list`, `skills/list` where skills are served) with
    the prepared page, past the SDK's shaping.

    Only a request the SDK itself would serve is answered here: the
    connection is past its handshake and the params are valid for the
    revision by the SDK's own checks (for `skills/list`, which the SDK does
    not know, the params its handler is registered with). Anything else goes
    on to the SDK, which answers it as always.
    """

    def __init__(self, answers: PageMaker, results: PreparedResults) -> None:
        self._answers = answers
        self._results = results

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if method not in self._answers.paged_lists or not initialize_accepted(ctx.session):
            return await call_next(ctx)
        raw = {} if ctx.params is None else ctx.params
        try:
            if method in sdk_methods.SPEC_CLIENT_METHODS:
                sdk_methods.validate_client_request(method, ctx.protocol_version, ctx.params)
            params = PaginatedRequestParams.model_validate(raw, by_name=False)
        except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
            return await call_next(ctx)  # the SDK refuses it in its own words
        try:
            page = self._answers.list_page(method, ctx.protocol_version, params.cursor)
            return page if self._results.in_transport else plain_result(page)
        except Exception as exc:
            raise to_mcp_error(exc, revision=ctx.protocol_version, method=method) from exc
