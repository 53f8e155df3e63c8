"""Results serialized once and written as they are: the pages a server answers from its cache.

A `prompts/list` page is the same bytes for every client of one revision
until the prompts change, so serializing it again per request is waste. The
SDK copies a handler's result dict (shallowly) and wraps it in a
`JSONRPCResponse` before a transport sees it, so a mark on the dict itself
would be lost on the way; the values inside it travel as they are. So a
prepared result holds its list (`prompts`) as a `PreparedItems`: a real list
(whatever does not know about it serializes it as any list) that also knows
the JSON of the whole result it belongs to.

A transport asks `prepared_json(result)`: it gets those bytes when `result`
still holds exactly the prepared values (the same objects under the same
keys, nothing added or left out) and None otherwise, and then serializes as
usual. The bytes are made at the first ask, so a result only ever written by
a transport that does not ask (HTTP, where the SDK writes) costs nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import to_json

__all__ = ["PreparedItems", "prepare", "prepared_json"]


class PreparedItems(list[Any]):
    """The list of a prepared result; it knows the result's other values and, once asked, its JSON."""

    __slots__ = ("_json", "_key", "_others")

    _key: str
    _others: tuple[tuple[str, Any], ...]
    _json: bytes | None


def prepare(result: Mapping[str, Any], key: str) -> dict[str, Any]:
    """`result` (a wire dict, never changed afterwards) prepared for writing as it is; `key` names its list."""
    items = PreparedItems(result[key])
    items._key = key
    items._others = tuple((name, value) for name, value in result.items() if name != key)
    items._json = None
    return {name: items if name == key else value for name, value in result.items()}


def prepared_json(result: Mapping[str, Any]) -> bytes | None:
    """The JSON of `result` when it is (a copy of) a prepared result, unchanged; None otherwise."""
    found = [value for value in result.values() if type(value) is PreparedItems]
    if len(found) != 1:
        return None
    items: PreparedItems = found[0]
    others = items._others
    if len(result) != len(others) + 1 or result.get(items._key) is not found[0]:
        return None
    if any(result.get(name, result) is not value for name, value in others):
        return None
    body = items._json
    if body is None:
        body = items._json = to_json(dict(result))
    return body
