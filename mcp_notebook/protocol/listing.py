"""`prompts/list` pages, built once per registry snapshot and revision, and answered as they are.

A page is the same for every client of one revision until the registry
publishes a new snapshot, so it is built once and served from a small cache
after that. Entries are plain dicts in the shape `convert.to_mcp_prompt` would
dump, which skips building a pydantic model per prompt and argument; the parts
`convert` derives (an argument's default told in words and in `_meta`) come
from its own helpers, so both agree.

A page is kept in two forms. `PromptPages.page` is the handler's result,
which the SDK validates and shapes for the request's revision like any
other. `PromptPages.wire_page` is that result already shaped exactly as the
SDK would shape it (the envelope, cache hints and stamps by the SDK's own
shaping, `sdk_seam.shape_result`; the entries are already in their wire
form) and prepared (`prepared`): `PreparedListing`, a server middleware,
answers `prompts/list` with it, so a page costs no validation after it was
built, and the stdio transport writes its JSON bytes, serialized once.
A cursor is checked by the `Paginator`, unless this cache issued it for the
current snapshot (then where it points is known), so cursors stay exactly
as valid or invalid as without a cache. After a change, the entries of the
prompts it did not touch (the same objects) are taken from the last
snapshot's pages instead of being built again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import PaginatedRequestParams
from mcp_types import methods as sdk_methods

from ..models import PromptArgument, PromptSpec
from ..registry import PromptRegistry, RegistrySnapshot
from .convert import _argument_defaults_meta, _described_default, to_mcp_icon
from .errors import to_mcp_error
from .paging import Paginator
from .prepared import prepare
from .revisions import supports
from .sdk_seam import initialize_accepted

__all__ = ["LIST_PROMPTS", "PreparedListing", "PromptPages", "prompt_entry"]

LIST_PROMPTS: Final = "prompts/list"

# Pages kept per snapshot: enough for clients that page through a large listing
# together, small enough that a 100,000-prompt registry holds a fraction of it.
_MAX_PAGES = 256

Shape = Callable[[str, dict[str, Any]], dict[str, Any]]
"""(revision, handler result) -> the result as the SDK puts it on the wire at that revision."""


@dataclass(frozen=True, slots=True)
class _Fields:
    """What a revision's prompt entries carry."""

    title: bool
    icons: bool

    @staticmethod
    def of(revision: str) -> _Fields:
        return _Fields(title=supports(revision, "title"), icons=supports(revision, "icons"))


def _argument_entry(argument: PromptArgument, with_title: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": argument.name}
    if with_title and argument.title is not None:
        entry["title"] = argument.title
    description = _described_default(argument.description, argument.default)
    if description is not None:
        entry["description"] = description
    entry["required"] = argument.required
    return entry


def _entry(spec: PromptSpec, revision: str, fields: _Fields) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": spec.name}
    if fields.title and spec.title is not None:
        entry["title"] = spec.title
    if spec.description is not None:
        entry["description"] = spec.description
    if spec.arguments:
        entry["arguments"] = [_argument_entry(argument, fields.title) for argument in spec.arguments]
    if spec.icons and fields.icons:
        entry["icons"] = [
            to_mcp_icon(icon).model_dump(by_alias=True, mode="json", exclude_none=True) for icon in spec.icons
        ]
    meta = _argument_defaults_meta(spec, revision)
    if meta is not None:
        entry["_meta"] = meta
    return entry


def prompt_entry(spec: PromptSpec, revision: str) -> dict[str, Any]:
    """The `prompts/list` entry of `spec` for `revision`, as `to_mcp_prompt` dumps it (empty parts left out)."""
    return _entry(spec, revision, _Fields.of(revision))


def _null_in_meta(entry: dict[str, Any]) -> bool:
    meta = entry.get("_meta")
    return meta is not None and None in meta.values()  # wire values: only null equals None


class _Page:
    """One page: its prompts, the handler's result, and (once asked for) its prepared wire form."""

    __slots__ = ("result", "specs", "wire")

    def __init__(self, specs: tuple[PromptSpec, ...], result: dict[str, Any]) -> None:
        self.specs = specs
        self.result = result
        self.wire: dict[str, Any] | None = None


class PromptPages:
    """The pages of one registry snapshot's prompts, per revision, built at first request."""

    def __init__(self, paginator: Paginator, max_pages: int = _MAX_PAGES) -> None:
        self._paginator = paginator
        self._max_pages = max_pages
        self._snapshot: RegistrySnapshot | None = None
        self._pages: OrderedDict[tuple[str, int], _Page] = OrderedDict()
        # The last snapshot's pages, and their entries by prompt (built at the first page of a new
        # snapshot): a prompt a change did not touch is the same object, and so is its entry.
        self._stale: OrderedDict[tuple[str, int], _Page] = OrderedDict()
        self._reusable: dict[str, dict[int, tuple[PromptSpec, dict[str, Any]]]] = {}
        # Where each cursor issued for this snapshot points, and the cursor after that page.
        self._issued: dict[str | None, tuple[int, str | None]] = {}

    def _page(self, snapshot: RegistrySnapshot, revision: str, cursor: str | None) -> _Page:
        issued = self._issued.get(cursor) if snapshot is self._snapshot else None
        if issued is not None:
            # A cursor this cache handed out for this very snapshot: decoding it again would say the same.
            offset, next_cursor = issued
        else:
            offset, next_cursor = self._paginator.locate("prompts", len(snapshot.prompts), snapshot.fingerprint, cursor)
        if snapshot is not self._snapshot:
            # A new snapshot: every page may differ (their cursors do), and the old ones are never asked for
            # again; their entries are reused for the prompts that did not change.
            self._snapshot = snapshot
            self._stale, self._pages = self._pages, OrderedDict()
            self._reusable = {}
            self._issued = {}
        key = (revision, offset)
        cached = self._pages.get(key)
        if cached is not None:
            self._pages.move_to_end(key)
            return cached
        prompts = tuple(snapshot.prompts[offset : offset + self._paginator.page_size])
        result: dict[str, Any] = {"prompts": self._entries(prompts, revision)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
            end = offset + self._paginator.page_size
            after = self._paginator.cursor_after("prompts", len(snapshot.prompts), snapshot.fingerprint, end)
            self._issued[next_cursor] = (end, after)
        # As `ListPromptsResult` dumps it; the SDK leaves it out for revisions before 2026-07-28.
        result["resultType"] = "complete"
        page = self._pages[key] = _Page(prompts, result)
        if len(self._pages) > self._max_pages:
            self._pages.popitem(last=False)
        return page

    def _entries(self, prompts: tuple[PromptSpec, ...], revision: str) -> list[dict[str, Any]]:
        reusable = self._reusable.get(revision)
        if reusable is None:
            reusable = self._reusable[revision] = {
                id(spec): (spec, entry)
                for (page_revision, _), page in self._stale.items()
                if page_revision == revision
                for spec, entry in zip(page.specs, page.result["prompts"], strict=True)
            }
        fields = _Fields.of(revision)
        entries: list[dict[str, Any]] = []
        for spec in prompts:
            known = reusable.get(id(spec))
            entries.append(known[1] if known is not None and known[0] is spec else _entry(spec, revision, fields))
        return entries

    def page(self, snapshot: RegistrySnapshot, revision: str, cursor: str | None) -> dict[str, Any]:
        """The `prompts/list` result `cursor` points at; `InvalidCursorError` as `Paginator.page` raises it."""
        return self._page(snapshot, revision, cursor).result

    def wire_page(self, snapshot: RegistrySnapshot, revision: str, cursor: str | None, shape: Shape) -> dict[str, Any]:
        """`page(...)` as the SDK would put it on the wire (`shape`), prepared to be written as it is."""
        page = self._page(snapshot, revision, cursor)
        if page.wire is None:
            # The SDK shapes the envelope (hints, stamps); the entries are in their wire form already,
            # but for a null in `_meta`, which some revisions' shaping drops: the SDK shapes that entry.
            entries = [
                shape(revision, {**page.result, "prompts": [entry]})["prompts"][0] if _null_in_meta(entry) else entry
                for entry in page.result["prompts"]
            ]
            wire = shape(revision, {**page.result, "prompts": []})
            wire["prompts"] = entries
            page.wire = prepare(wire, "prompts")
        return page.wire


class PreparedListing:
    """Server middleware: answers `prompts/list` with the prepared page, past the SDK's shaping.

    Only a request the SDK itself would serve is answered here: the
    connection is past its handshake and the params are valid for the
    revision by the SDK's own checks. Anything else goes on to the SDK,
    which answers it as always.
    """

    def __init__(self, registry: PromptRegistry, pages: PromptPages, shape: Shape) -> None:
        self._registry = registry
        self._pages = pages
        self._shape = shape

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != LIST_PROMPTS or not initialize_accepted(ctx.session):
            return await call_next(ctx)
        raw = {} if ctx.params is None else ctx.params
        try:
            sdk_methods.validate_client_request(LIST_PROMPTS, ctx.protocol_version, ctx.params)
            params = PaginatedRequestParams.model_validate(raw, by_name=False)
        except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
            return await call_next(ctx)  # the SDK refuses it in its own words
        try:
            return self._pages.wire_page(self._registry.snapshot(), ctx.protocol_version, params.cursor, self._shape)
        except Exception as exc:
            raise to_mcp_error(exc, revision=ctx.protocol_version, method=LIST_PROMPTS) from exc
