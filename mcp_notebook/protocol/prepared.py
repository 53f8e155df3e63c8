"""Results serialized once and written as they are: the one interface between the protocol and its transports.

A `prompts/list` page is the same bytes for every client of one revision
until the prompts change, so serializing it again per request is waste. A
handler's result reaches a transport through the SDK, which copies the
result dict (shallowly) and wraps it in a `JSONRPCResponse`; keys and values
travel as they are. So a prepared result carries its JSON in itself, under
one key no client ever sees (`PREPARED`), as a `Prepared`.

The interface, used the same way by every transport that writes bytes (the
stdio framing, the Streamable HTTP transport's JSON and SSE responses):

* a transport says, once, that every result of a server goes through it:
  `server.prepared_results.encode_in_transport()` (`PreparedResults`);
* before serializing a message itself, it asks `encode_message(message)`:
  the message's whole JSON when it is a prepared result that reached it
  unchanged (the same values under the same keys, nothing added or left
  out), else None;
* then it serializes `plain_message(message)`: the message without the
  carrier, its list made real if it was only JSON (below);
* once a result is on its way to the client it calls `result_written(result)`
  (a listing builds the next page meanwhile).

A prepared result is *hollow* (`prepare_hollow`): its list is empty and
exists only as JSON, so a page costs no objects per prompt at all. A server
whose results are not taken (an in-memory client, the SDK's own HTTP
transport) is never handed a carrier: it is answered `plain_result(...)`,
serialized by whoever writes it.
A carrier that reaches a serializer that did not ask fails loudly (pydantic
cannot serialize a `Prepared`) rather than writing an empty list.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

import mcp_types as types

__all__ = [
    "PREPARED",
    "Prepared",
    "PreparedResults",
    "encode_message",
    "plain_message",
    "plain_result",
    "prepare_hollow",
    "prepared_json",
    "result_written",
]

PREPARED: Final = "\x00mcp-notebook-prepared"
"""The key a prepared result's JSON travels under, from its handler to its transport; never written."""


class Prepared:
    """A result's JSON, made once: the values it was made of (by identity) and, for a hollow one, its list."""

    __slots__ = ("after_written", "body", "items", "others")

    def __init__(
        self,
        others: tuple[tuple[str, Any], ...],
        body: bytes,
        items: tuple[str, bytes],
        after_written: Callable[[], object] | None = None,
    ) -> None:
        self.others = others  # every (key, value) of the result, as prepared
        self.body = body  # the whole result's JSON
        self.items = items  # the result's list: its key and its JSON
        self.after_written = after_written  # what to run once the result is written


class PreparedResults:
    """Whether a server's results reach the wire through this module (`encode_in_transport`), so they may
    carry their JSON."""

    __slots__ = ("_taken",)

    def __init__(self) -> None:
        self._taken = False

    def encode_in_transport(self) -> None:
        """Say, as a transport, that every result of this server is written through `encode_message` and
        `plain_message` from now on."""
        self._taken = True

    @property
    def in_transport(self) -> bool:
        """Whether a transport said `encode_in_transport()`."""
        return self._taken


def prepare_hollow(
    result: Mapping[str, Any],
    key: str,
    body: bytes,
    items_json: bytes,
    after_written: Callable[[], object] | None = None,
) -> dict[str, Any]:
    """`result` with its list (`key`, empty here) only as JSON: `body` is the whole result's, `items_json` the list's.

    Only for a server whose results are taken (`PreparedResults`); `after_written` runs once the result is written.
    """
    return {**result, PREPARED: Prepared(tuple(result.items()), body, (key, items_json), after_written)}


def _carrier(result: Mapping[str, Any]) -> Prepared | None:
    carrier = result.get(PREPARED)
    return carrier if type(carrier) is Prepared else None


def prepared_json(result: Mapping[str, Any]) -> bytes | None:
    """The JSON of `result` when it is (a copy of) a prepared result, unchanged; None otherwise."""
    carrier = _carrier(result)
    if carrier is None or not _unchanged(result, carrier):
        return None
    return carrier.body


def _unchanged(result: Mapping[str, Any], carrier: Prepared) -> bool:
    others = carrier.others
    if len(result) != len(others) + 1:
        return False
    return all(result.get(name, result) is value for name, value in others)


def plain_result(result: dict[str, Any]) -> dict[str, Any]:
    """`result` without its carrier, a hollow list made real (a copy); `result` itself when it carries none."""
    carrier = _carrier(result)
    if carrier is None:
        return result
    plain = {name: value for name, value in result.items() if name != PREPARED}
    key, items = carrier.items
    hollow = dict(carrier.others)[key]
    for name, value in plain.items():
        if value is hollow:  # the hollow list, wherever it went on the way
            plain[name] = json.loads(items)
    return plain


def encode_message(message: types.JSONRPCMessage) -> bytes | None:
    """The whole JSON of `message` when it answers with a prepared result that reached the transport unchanged."""
    if not isinstance(message, types.JSONRPCResponse):
        return None
    body = prepared_json(message.result)
    if body is None:
        return None
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(message.id).encode(), body)


def plain_message(message: types.JSONRPCMessage) -> types.JSONRPCMessage:
    """`message` as any serializer may write it: a prepared result's carrier taken out (`plain_result`)."""
    if isinstance(message, types.JSONRPCResponse) and PREPARED in message.result:
        return message.model_copy(update={"result": plain_result(message.result)})
    return message


def result_written(result: Mapping[str, Any]) -> None:
    """Run what a prepared `result` asked to run once written, if anything (at most once)."""
    carrier = _carrier(result)
    if carrier is not None and carrier.after_written is not None:
        run, carrier.after_written = carrier.after_written, None
        run()
