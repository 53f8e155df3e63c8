"""Screening raw JSON-RPC input before the SDK reads it: every malformed message gets its proper error.

Both transports pass each incoming line or body through `screen` first.
The SDK alone would take a request whose `id` is null, a float, a bool, an
object or an array for a notification and never answer it (the client
then waits forever), accept `NaN`, and answer some malformed envelopes with
a pydantic dump. Here:

| input                                              | code   | id in the reply          |
|----------------------------------------------------|--------|--------------------------|
| not JSON (also `NaN`/`Infinity`, bad UTF-8, nesting too deep) | -32700 | unknown               |
| JSON that is not an object (a batch where none is allowed) | -32600 | unknown                |
| an `id` that is not a string or an integer         | -32600 | unknown                  |
| no `"jsonrpc": "2.0"`, a `method` that is not a string, neither a method nor a result/error | -32600 | echoed |
| `params` that are not an object                    | -32602 | echoed                   |

An unknown id is written as `null` up to 2025-06-18 (JSON-RPC 2.0's rule)
and left out from 2025-11-25 on, whose schema makes `id` optional and never
null (`unknown_id_omitted`). Messages quote client input only in short,
capped excerpts (`excerpt`), so a huge value never comes back multiplied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pydantic_core
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RequestId

__all__ = [
    "EXCERPT_CHARS",
    "Refusal",
    "ScreenedBatch",
    "UnreadableMessage",
    "error_reply",
    "excerpt",
    "is_response",
    "parse_json",
    "readable_id",
    "screen",
    "unknown_id_omitted",
]

EXCERPT_CHARS: Final = 80
"""The most characters of client input an error message quotes."""

ID_OPTIONAL_SINCE: Final = "2025-11-25"
BATCH_REVISION: Final = "2025-03-26"
"""The one revision whose receivers must accept JSON-RPC batches."""


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """`value` as text for an error message, cut to `limit` characters (with how much was left out)."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def readable_id(value: object) -> RequestId | None:
    """The request id in a decoded message, when it is one the schema allows (a string or an integer)."""
    if isinstance(value, dict):
        candidate = value.get("id")
        if isinstance(candidate, str) or (isinstance(candidate, int) and not isinstance(candidate, bool)):
            return candidate
    return None


def unknown_id_omitted(revision: str | None) -> bool:
    """Whether an error whose request id is unknown leaves `id` out (2025-11-25 on) rather than sending null."""
    return revision is not None and revision >= ID_OPTIONAL_SINCE


@dataclass(frozen=True, slots=True)
class Refusal:
    """The error a malformed message gets; `id` is None when the request's id could not be read."""

    code: int
    message: str
    id: RequestId | None = None


class UnreadableMessage(Exception):
    """A line or body that is not a JSON-RPC message; carries the refusal to send back."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@dataclass(frozen=True, slots=True)
class ScreenedBatch:
    """A JSON-RPC batch (an array): its elements, each still to be screened on its own."""

    items: tuple[Any, ...]


def error_reply(refusal: Refusal, revision: str | None) -> dict[str, Any]:
    """The JSON-RPC error object for `refusal`, with the id rule of `revision` (unknown: the 2025-03-26 one)."""
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": refusal.id}
    if refusal.id is None and unknown_id_omitted(revision):
        del reply["id"]
    reply["error"] = {"code": refusal.code, "message": refusal.message}
    return reply


def parse_json(data: bytes | str, subject: str = "message") -> Any:
    """Decode one message's JSON strictly; raises `UnreadableMessage` (-32700) for anything that is not JSON.

    Stricter than Python's `json`: `NaN`, `Infinity` and bytes that are not
    UTF-8 are refused; so are integers of more than 4,300 digits and nesting
    deeper than 200 levels. `subject` names what was read ("line", "body").
    """
    try:
        return pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError:
        raise UnreadableMessage(Refusal(PARSE_ERROR, f"Parse error: the {subject} is not valid JSON")) from None


def screen(value: Any, *, batches: bool = False) -> Refusal | ScreenedBatch | None:
    """The refusal a decoded message gets (None: pass it on), or the batch it is when `batches` are allowed."""
    if isinstance(value, list):
        if not batches:
            return Refusal(INVALID_REQUEST, "Invalid Request: JSON-RPC batches are only accepted at 2025-03-26")
        if not value:
            return Refusal(INVALID_REQUEST, "Invalid Request: an empty batch")
        return ScreenedBatch(tuple(value))
    if not isinstance(value, dict):
        return Refusal(INVALID_REQUEST, f"Invalid Request: a message is a JSON object, not {_kind(value)}")
    if is_response(value):
        return None  # a response to one of our requests is never answered, whatever its shape
    request_id = readable_id(value)
    if "id" in value and request_id is None:
        return Refusal(
            INVALID_REQUEST, f"Invalid Request: the id must be a string or an integer, not {_kind(value['id'])}"
        )
    if value.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', request_id)
    if "method" not in value:
        return Refusal(INVALID_REQUEST, "Invalid Request: neither a request, a notification nor a response", request_id)
    if not isinstance(value["method"], str):
        return Refusal(INVALID_REQUEST, "Invalid Request: the method must be a string", request_id)
    if "params" in value and not isinstance(value["params"], dict):
        return Refusal(
            INVALID_PARAMS, f"Invalid params: params must be an object, not {_kind(value['params'])}", request_id
        )
    return None


def is_response(value: object) -> bool:
    """Whether a decoded message is shaped as a response (no method; a result or an error)."""
    return isinstance(value, dict) and "method" not in value and ("result" in value or "error" in value)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a non-integer number" if isinstance(value, float) else "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
