"""`prompts/list` answered from prepared pages: the very JSON the SDK path gives, in every revision, page by page.

Each test serves the same registry twice: as `create_server` builds it (pages
answered by `PreparedListing`; for a server whose results are taken, as the
stdio and HTTP transports take them, written from their cached bytes by the
stdio framing) and with that middleware taken out, so every page goes through the
SDK's own validation and shaping. The lines the stdio transport would write
must parse to the same objects, for every revision and every cursor.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.message import SessionMessage
from protocol_samples import RICH, simple_prompt
from pydantic_core import PydanticSerializationError, to_json
from test_listing_cache import VARIED
from wire_harness import ALL_REVISIONS, MODERN, modern_meta

from mcp_notebook.models import PromptArgument, PromptSpec
from mcp_notebook.protocol.listing import PreparedListing, PromptPages
from mcp_notebook.protocol.paging import Paginator
from mcp_notebook.protocol.prepared import (
    PREPARED,
    Prepared,
    PreparedResults,
    plain_message,
    plain_result,
    prepare_hollow,
    prepared_json,
    result_written,
)
from mcp_notebook.protocol.server import CachePolicy, PromptServer, create_server
from mcp_notebook.registry import PromptRegistry
from mcp_notebook.transports.framing import LineCodec

DEADLINE = 10.0
PAGE_SIZE = 3


def _registry() -> PromptRegistry:
    registry = PromptRegistry()
    registry.set_group("varied.ipynb", list(VARIED))
    registry.set_group("many.ipynb", [simple_prompt(f"p{i:02}") for i in range(8)])
    registry.set_group(
        "unicode.ipynb",
        [
            PromptSpec(
                name="ünï",
                title='Quotes " and \\ and \u2028 and emoji \U0001f600',
                description="tab\tnewline\ncontrol\x01",
                arguments=(PromptArgument("x", default=" spaced "), PromptArgument("y", default="a\nb")),
                messages=RICH.messages,
                origin="unicode.ipynb",
            )
        ],
    )
    return registry


def _sdk_path(server: PromptServer) -> PromptServer:
    """`server` with the prepared pages taken out: every `prompts/list` goes through the SDK."""
    server.middleware = [m for m in server.middleware if not isinstance(m, PreparedListing)]
    return server


class Wire:
    """One connection; every message read is encoded as the stdio framing writes it, then parsed."""

    def __init__(self, server: PromptServer, revision: str) -> None:
        self.server, self.revision = server, revision
        self.rules = LineCodec()
        self.prepared_lines = 0  # lines written from a prepared result's bytes
        self._ids = itertools.count(1)

    async def send(self, message: dict[str, Any]) -> None:
        await self._to_server.send(SessionMessage(types.jsonrpc_message_adapter.validate_python(message)))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        request_id = next(self._ids)
        if self.revision == MODERN:
            params = {**(params or {}), "_meta": modern_meta()}
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            with anyio.fail_after(DEADLINE):
                item = await self._from_server.receive()
            if isinstance(item.message, types.JSONRPCResponse) and prepared_json(item.message.result) is not None:
                self.prepared_lines += 1
            line = self.rules.encode(item.message)
            assert line is not None and line.endswith(b"\n") and line.count(b"\n") == 1
            if isinstance(item.message, types.JSONRPCResponse):
                result_written(item.message.result)  # as the stdio writer does once a line is out
            reply: dict[str, Any] = json.loads(line)
            if reply.get("id") == request_id:
                return reply

    async def initialize(self) -> None:
        params = {"protocolVersion": self.revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        await self.request("initialize", params)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def pages(self) -> list[dict[str, Any]]:
        replies: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            reply = await self.request("prompts/list", {"cursor": cursor} if cursor is not None else {})
            replies.append(reply)
            cursor = reply["result"].get("nextCursor")
            if cursor is None:
                return replies


@asynccontextmanager
async def connected(
    server: PromptServer, revision: str, *, initialize: bool = True, taken: bool = False
) -> AsyncIterator[Wire]:
    """A connection to `server`; with `taken`, its results are taken (`PreparedResults`), as our transports do."""
    if taken:
        server.prepared_results.encode_in_transport()
    wire = Wire(server, revision)
    wire._to_server, server_read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    server_write, wire._from_server = anyio.create_memory_object_stream[SessionMessage](16)
    async with wire._to_server, server_read, server_write, wire._from_server, anyio.create_task_group() as group:
        group.start_soon(server.run, server_read, server_write, server.create_initialization_options())
        if initialize and revision != MODERN:
            await wire.initialize()
        yield wire
        group.cancel_scope.cancel()


@pytest.mark.parametrize("taken", [False, True], ids=["results not taken", "results taken"])
@pytest.mark.parametrize("revision", ALL_REVISIONS)
async def test_every_page_is_the_json_the_sdk_path_writes(revision: str, taken: bool) -> None:
    registry = _registry()
    prepared = create_server(registry, page_size=PAGE_SIZE, cache=CachePolicy(ttl_ms=1234, scope="private"))
    plain = _sdk_path(create_server(registry, page_size=PAGE_SIZE, cache=CachePolicy(ttl_ms=1234, scope="private")))
    async with connected(prepared, revision, taken=taken) as fast, connected(plain, revision) as slow:
        for _ in range(2):  # built, then from the cache
            fast_pages, slow_pages = await fast.pages(), await slow.pages()
            assert fast_pages == slow_pages
        assert len(fast_pages) == -(-len(registry.snapshot().prompts) // PAGE_SIZE) > 3
        # Taken: every page was written from its bytes; else each was serialized by the writer, as the SDK's are.
        assert fast.prepared_lines == (2 * len(fast_pages) if taken else 0)
        assert slow.prepared_lines == 0
        if revision == MODERN:
            assert fast_pages[0]["result"]["ttlMs"] == 1234 and "serverInfo" in json.dumps(fast_pages[0])
        # A cursor of one path is a cursor of the other: same listing, same positions.
        cursor = fast_pages[1]["result"]["nextCursor"]
        assert await fast.request("prompts/list", {"cursor": cursor}) == await slow.request(
            "prompts/list", {"cursor": cursor}
        )


BAD_PARAMS: list[Any] = [
    {"cursor": 5},
    {"cursor": ["a"]},
    {"cursor": "not-a-cursor"},
    {"cursor": ""},
    {"cursor": "x" * 600},
    {"cursor": "a.b"},
    {"_meta": "not an object"},
    {"_meta": {"progressToken": {"no": "objects"}}},
]


@pytest.mark.parametrize(
    ("revision", "params"),
    [
        (revision, params)
        for revision in ("2024-11-05", "2025-11-25", MODERN)
        for params in BAD_PARAMS
        if not (revision == MODERN and "_meta" in params)  # a modern request's `_meta` is its envelope
    ],
    ids=repr,
)
async def test_refused_params_get_the_sdk_paths_answer(revision: str, params: Any) -> None:
    registry = _registry()
    prepared = create_server(registry, page_size=PAGE_SIZE)
    plain = _sdk_path(create_server(registry, page_size=PAGE_SIZE))
    async with connected(prepared, revision) as fast, connected(plain, revision) as slow:
        fast_reply, slow_reply = await fast.request("prompts/list", params), await slow.request("prompts/list", params)
    assert fast_reply == slow_reply
    assert "error" in fast_reply or params == {"_meta": {"progressToken": {"no": "objects"}}}


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-11-25"])
async def test_before_initialize_the_answer_is_the_sdk_paths(revision: str) -> None:
    registry = _registry()
    prepared, plain = create_server(registry), _sdk_path(create_server(registry))
    async with (
        connected(prepared, revision, initialize=False) as fast,
        connected(plain, revision, initialize=False) as slow,
    ):
        fast_reply, slow_reply = await fast.request("prompts/list"), await slow.request("prompts/list")
    assert fast_reply == slow_reply and fast_reply["error"]["code"] == types.INVALID_REQUEST
    assert fast.prepared_lines == 0


async def test_a_change_is_listed_at_once_and_old_cursors_are_refused() -> None:
    registry = _registry()
    server = create_server(registry, page_size=PAGE_SIZE)
    async with connected(server, "2025-11-25") as wire:
        before = await wire.pages()
        registry.set_group("many.ipynb", [simple_prompt(f"p{i:02}") for i in range(9)])
        after = await wire.pages()
        names = [entry["name"] for page in after for entry in page["result"]["prompts"]]
        assert "p08" in names and len(names) == sum(len(page["result"]["prompts"]) for page in before) + 1
        stale = await wire.request("prompts/list", {"cursor": before[0]["result"]["nextCursor"]})
        assert stale["error"]["code"] == types.INVALID_PARAMS


def _prepare(result: dict[str, Any]) -> dict[str, Any]:
    """`result` prepared as a page is: hollow, its list only as JSON."""
    return prepare_hollow({**result, "prompts": []}, "prompts", to_json(result), to_json(result["prompts"]))


def test_prepared_json_is_the_json_of_the_result_while_it_is_unchanged() -> None:
    result = _prepare({"prompts": [{"name": "a"}], "nextCursor": "c", "_meta": {"k": 1}})
    assert isinstance(result[PREPARED], Prepared) and result["prompts"] == []
    copy = dict(result)  # as the SDK copies a handler's result
    body = prepared_json(copy)
    assert body is not None and json.loads(body) == {"prompts": [{"name": "a"}], "nextCursor": "c", "_meta": {"k": 1}}
    assert prepared_json(result) is body  # serialized once


def _changed(result: dict[str, Any], how: str) -> dict[str, Any]:
    copy = dict(result)
    if how == "added":
        copy["extra"] = 1
    elif how == "removed":
        del copy["nextCursor"]
    elif how == "replaced":
        copy["nextCursor"] = "other"
    elif how == "equal but not the same":
        copy["_meta"] = dict(copy["_meta"])
    elif how == "list copied":
        copy["prompts"] = list(copy["prompts"])
    elif how == "list moved":
        copy["other"] = copy.pop("prompts")
    return copy


@pytest.mark.parametrize("how", ["added", "removed", "replaced", "equal but not the same", "list copied", "list moved"])
def test_a_result_changed_after_it_was_prepared_is_serialized_as_usual(how: str) -> None:
    result = _prepare({"prompts": [{"name": "a"}], "nextCursor": "c", "_meta": {"k": 1}})
    assert prepared_json(_changed(result, how)) is None


def test_a_carrier_never_reaches_the_wire_unasked() -> None:
    result = _prepare({"prompts": [{"name": "a"}], "nextCursor": "c"})
    response = types.JSONRPCResponse(jsonrpc="2.0", id=1, result=result)
    with pytest.raises(PydanticSerializationError):  # a serializer that did not ask fails; it writes nothing wrong
        response.model_dump_json(by_alias=True)
    assert json.loads(plain_message(response).model_dump_json(by_alias=True)) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"prompts": [{"name": "a"}], "nextCursor": "c"},
    }


def _pages(**bounds: int) -> PromptPages:
    """Pages shaped as a server's are (its cache hints and identity)."""
    shape = create_server(PromptRegistry())._prompt_pages._shape
    return PromptPages(Paginator(page_size=PAGE_SIZE), shape=shape, **bounds)


def _walk(pages: PromptPages, registry: PromptRegistry, revision: str) -> list[dict[str, Any]]:
    results, cursor = [], None
    while True:
        result = plain_result(pages.page(registry.snapshot(), revision, cursor))
        results.append(result)
        cursor = result.get("nextCursor")
        if cursor is None:
            return results


@pytest.mark.parametrize("revision", ALL_REVISIONS)
def test_after_a_change_only_the_changed_prompts_are_built_again(revision: str) -> None:
    registry = _registry()
    pages = _pages()
    _walk(pages, registry, revision)
    assert pages.built == len(registry.snapshot().prompts)
    _walk(pages, registry, revision)
    assert pages.built == len(registry.snapshot().prompts)  # the same snapshot: nothing built again
    registry.set_group("many.ipynb", [simple_prompt(f"p{i:02}") for i in range(9)])  # new objects, one more
    registry.set_group("varied.ipynb", list(VARIED))  # the same objects again
    built = pages.built
    after = _walk(pages, registry, revision)
    assert after == _walk(_pages(), registry, revision)  # as if built anew
    assert pages.built - built == 9  # only the new objects, though every page shifted


@pytest.mark.parametrize("revision", ["2025-06-18", MODERN])
def test_entries_are_kept_for_the_revisions_asked_for_lately(revision: str) -> None:
    registry = _registry()
    size = len(registry.snapshot().prompts)
    pages = _pages(max_pages=1, max_forms=2)  # pages rebuilt from entries
    for other in ("2024-11-05", "2025-03-26"):
        _walk(pages, registry, other)
    _walk(pages, registry, revision)  # a third revision: the least recently asked one is forgotten
    assert pages.built == 3 * size
    _walk(pages, registry, "2025-03-26")
    assert pages.built == 3 * size
    _walk(pages, registry, "2024-11-05")
    assert pages.built == 4 * size


@pytest.mark.parametrize("taken", [False, True], ids=["results not taken", "results taken"])
async def test_a_batch_of_listings_is_answered_as_the_sdk_path_answers_it(taken: bool) -> None:
    registry = _registry()
    prepared, plain = (
        create_server(registry, page_size=PAGE_SIZE),
        _sdk_path(create_server(registry, page_size=PAGE_SIZE)),
    )
    lines = []
    for server, taken_here in ((prepared, taken), (plain, False)):
        async with connected(server, "2025-03-26", taken=taken_here) as wire:
            first = await wire.request("prompts/list", {})
            batch = [
                {"jsonrpc": "2.0", "id": 100, "method": "prompts/list", "params": {}},
                {
                    "jsonrpc": "2.0",
                    "id": 101,
                    "method": "prompts/list",
                    "params": {"cursor": first["result"]["nextCursor"]},
                },
            ]
            wire.rules.revision = "2025-03-26"  # as the writer learns it from the `initialize` reply on stdio
            for item in wire.rules.read(json.dumps(batch).encode()):
                assert isinstance(item, SessionMessage)
                await wire._to_server.send(item)
            line = None
            while line is None:
                with anyio.fail_after(DEADLINE):
                    reply = await wire._from_server.receive()
                line = wire.rules.encode(reply.message)
            lines.append(json.loads(line))
    assert lines[0] == lines[1] and [answer["id"] for answer in lines[0]] == [100, 101]
    assert len(lines[0][0]["result"]["prompts"]) == PAGE_SIZE


def test_a_hollow_result_holds_its_list_only_as_json() -> None:
    items = b'[{"name":"a"}]'
    result = prepare_hollow(
        {"prompts": [], "nextCursor": "c"}, "prompts", b'{"prompts":%s,"nextCursor":"c"}' % items, items
    )
    assert result["prompts"] == [] and isinstance(result[PREPARED], Prepared)
    assert json.loads(prepared_json(dict(result)) or b"null") == {"prompts": [{"name": "a"}], "nextCursor": "c"}
    assert plain_result(dict(result)) == {"prompts": [{"name": "a"}], "nextCursor": "c"}
    unprepared = {"prompts": [1]}
    assert plain_result(unprepared) is unprepared


@pytest.mark.parametrize("how", ["added", "removed", "replaced", "list moved"])
def test_a_hollow_result_changed_on_the_way_is_written_with_its_prompts(how: str) -> None:
    items = b'[{"name":"a"}]'
    body = b'{"prompts":%s,"nextCursor":"c","_meta":{"k":1}}' % items
    result = prepare_hollow({"prompts": [], "nextCursor": "c", "_meta": {"k": 1}}, "prompts", body, items)
    changed = _changed(result, how)
    line = LineCodec().encode(types.JSONRPCResponse(jsonrpc="2.0", id=7, result=changed))
    assert line is not None
    sent = json.loads(line)["result"]
    listed = next(value for value in sent.values() if isinstance(value, list))
    assert listed == [{"name": "a"}]  # never the empty list the hollow result holds


def test_what_a_prepared_result_asks_to_run_runs_once_after_it_is_written() -> None:
    runs: list[int] = []
    result = prepare_hollow({"prompts": []}, "prompts", b'{"prompts":[]}', b"[]", after_written=lambda: runs.append(1))
    result_written(dict(result))
    result_written(result)
    result_written({"prompts": []})
    assert runs == [1]


async def test_only_a_server_whose_results_are_taken_answers_with_prepared_pages() -> None:
    results = PreparedResults()
    assert not results.in_transport
    results.encode_in_transport()
    assert results.in_transport
    registry = _registry()
    for taken in (False, True):
        server = create_server(registry, page_size=PAGE_SIZE)
        assert not server.prepared_results.in_transport  # until a transport takes them
        async with connected(server, "2025-11-25", taken=taken) as wire:
            await wire.pages()
            assert wire.prepared_lines == (-(-len(registry.snapshot().prompts) // PAGE_SIZE) if taken else 0)


async def test_the_next_page_is_built_once_a_page_is_written() -> None:
    registry = _registry()
    server = create_server(registry, page_size=PAGE_SIZE)
    pages = server._prompt_pages
    async with connected(server, "2025-11-25", taken=True) as wire:
        first = await wire.request("prompts/list", {})
        assert pages.built == 2 * PAGE_SIZE  # the first page, and the next one built ahead
        await wire.request("prompts/list", {"cursor": first["result"]["nextCursor"]})
        assert pages.built == 3 * PAGE_SIZE


def test_a_page_whose_envelope_cannot_be_cut_around_its_list_is_served_whole() -> None:
    from mcp_notebook.protocol import listing

    registry = _registry()

    def shape(revision: str, result: dict[str, Any]) -> dict[str, Any]:
        return {**result, "_meta": {"echo": listing._PLACE}}  # the placeholder, where only the list should be

    pages = PromptPages(Paginator(page_size=PAGE_SIZE), shape=shape)
    result = pages.page(registry.snapshot(), "2025-11-25", None)
    assert plain_result(result)["_meta"] == {"echo": listing._PLACE}
    written_json = json.loads(prepared_json(dict(result)) or b"null")
    assert [entry["name"] for entry in written_json["prompts"]] == [
        spec.name for spec in registry.snapshot().prompts[:PAGE_SIZE]
    ]
    assert written_json["_meta"] == {"echo": listing._PLACE}


def _hollow_walk(pages: PromptPages, registry: PromptRegistry, revision: str) -> list[bytes]:
    bodies, cursor = [], None
    while True:
        result = pages.page(registry.snapshot(), revision, cursor)
        body = prepared_json(dict(result))
        assert body is not None
        bodies.append(body)
        cursor = json.loads(body).get("nextCursor")
        if cursor is None:
            return bodies


@pytest.mark.parametrize("revision", ["2025-11-25", MODERN])
def test_a_page_served_again_is_written_from_its_json_until_the_prompts_change(revision: str) -> None:
    registry = _registry()
    pages = create_server(registry, page_size=PAGE_SIZE)._prompt_pages
    first = _hollow_walk(pages, registry, revision)
    again = _hollow_walk(pages, registry, revision)
    assert all(a is b for a, b in zip(again, first, strict=True))  # the very bytes: nothing joined again
    registry.set_group("many.ipynb", [simple_prompt(f"q{i:02}") for i in range(8)])
    changed = _hollow_walk(pages, registry, revision)
    names = [entry["name"] for body in changed for entry in json.loads(body)["prompts"]]
    assert names == [spec.name for spec in registry.snapshot().prompts]
    assert "q00" in names and "p00" not in names


def test_the_json_of_pages_served_is_kept_for_so_many_entries() -> None:
    registry = _registry()
    server = create_server(registry, page_size=PAGE_SIZE)
    shape = server._prompt_pages._shape
    pages = PromptPages(Paginator(page_size=PAGE_SIZE), shape=shape, max_page_entries=PAGE_SIZE)
    bodies = _hollow_walk(pages, registry, "2025-11-25")
    assert len(bodies) > 1
    assert len(pages._bodies) == 1  # one page's worth of entries
    assert _hollow_walk(pages, registry, "2025-11-25") == bodies  # rebuilt as it was
