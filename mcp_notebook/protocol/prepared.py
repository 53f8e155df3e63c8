"""Results serialized once and written as they are: the pages a server answers from its cache.

A `prompts/list` page is the same bytes for every client of one revision
until the prompts change, so serializing it again per request is waste. The
SDK copies a handler's result dict (shallowly) and wraps it in a
`JSONRPCResponse` before a transport sees it, so a mark on the dict itself
would be lost on the way; the values inside it travel as they are. So a
prepared result holds its list (`prompts`) as a `PreparedItems`: a list that
also knows the JSON of the whole result it belongs to.

A transport asks `prepared_json(result)`: it gets those bytes when `result`
still holds exactly the prepared values (the same objects under the same
keys, nothing added or left out) and None otherwise, and then serializes as
usual. The bytes are made at the first ask, so a result only ever written by
a transport that does not ask (HTTP, where the SDK writes) costs nothing more.

A transport that always asks (`writer_takes_prepared`, this server's own
stdio writer) can take a *hollow* result instead (`prepare_hollow`): its list
is empty and only its JSON exists, so a page costs no objects per prompt at
all. Nothing else may see one: `takes_prepared()` tells a handler whether
its connection's writer is such a transport, and that writer turns a hollow
result that was changed on the way back into the real one (`materialized`)
before serializing it as usual. `written(result)` is what the writer calls
once a prepared result is on its way to the client (a listing builds the
next page meanwhile).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic_core import to_json

__all__ = [
    "PreparedItems",
    "materialized",
    "prepare",
    "prepare_hollow",
    "prepared_json",
    "takes_prepared",
    "writer_takes_prepared",
    "written",
]

_TAKES_PREPARED: ContextVar[bool] = ContextVar("mcp_notebook_takes_prepared", default=False)


class PreparedItems(list[Any]):
    """The list of a prepared result; it knows the result's other values and, once asked, its JSON."""

    __slots__ = ("_items", "_json", "_key", "_others", "_then")

    _key: str
    _others: tuple[tuple[str, Any], ...]
    _json: bytes | None
    _items: bytes | None  # a hollow result's list, as JSON
    _then: Callable[[], object] | None


def _prepared(items: PreparedItems, result: Mapping[str, Any], key: str) -> dict[str, Any]:
    items._key = key
    items._others = tuple((name, value) for name, value in result.items() if name != key)
    return {name: items if name == key else value for name, value in result.items()}


def prepare(result: Mapping[str, Any], key: str) -> dict[str, Any]:
    """`result` (a wire dict, never changed afterwards) prepared for writing as it is; `key` names its list."""
    items = PreparedItems(result[key])
    items._json = items._items = items._then = None
    return _prepared(items, result, key)


def prepare_hollow(
    result: Mapping[str, Any], key: str, body: bytes, items_json: bytes, then: Callable[[], object] | None = None
) -> dict[str, Any]:
    """`result` with its list (`key`) only as JSON: `body` is the whole result's, `items_json` the list's.

    Only for a connection whose writer `takes_prepared()`; `then` runs once the result is written.
    """
    items = PreparedItems()
    items._json, items._items, items._then = body, items_json, then
    return _prepared(items, result, key)


def _items_of(result: Mapping[str, Any]) -> PreparedItems | None:
    found = [value for value in result.values() if type(value) is PreparedItems]
    return found[0] if len(found) == 1 else None


def prepared_json(result: Mapping[str, Any]) -> bytes | None:
    """The JSON of `result` when it is (a copy of) a prepared result, unchanged; None otherwise."""
    items = _items_of(result)
    if items is None or not _unchanged(result, items):
        return None
    body = items._json
    if body is None:
        body = items._json = to_json(dict(result))
    return body


def _unchanged(result: Mapping[str, Any], items: PreparedItems) -> bool:
    others = items._others
    if len(result) != len(others) + 1 or result.get(items._key) is not items:
        return False
    return all(result.get(name, result) is value for name, value in others)


def materialized(result: dict[str, Any]) -> dict[str, Any]:
    """`result` with any hollow list made real (a copy); `result` itself when it holds none."""
    hollow = {
        name: json.loads(value._items)
        for name, value in result.items()
        if type(value) is PreparedItems and value._items is not None
    }
    return {**result, **hollow} if hollow else result


def written(result: Mapping[str, Any]) -> None:
    """Run what a prepared `result` asked to run once written, if anything (at most once)."""
    items = _items_of(result)
    if items is not None and items._then is not None:
        then, items._then = items._then, None
        then()


def takes_prepared() -> bool:
    """Whether this connection's writer writes prepared results from their bytes, hollow ones included."""
    return _TAKES_PREPARED.get()


@contextmanager
def writer_takes_prepared() -> Iterator[None]:
    """Declare, for the tasks started meanwhile, that their connection's writer takes hollow results."""
    token = _TAKES_PREPARED.set(True)
    try:
        yield
    finally:
        _TAKES_PREPARED.reset(token)
