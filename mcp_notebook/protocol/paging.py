"""Paginated lists with opaque cursors that stay valid while the listed set is unchanged.

A cursor names a position in one listing (`prompts` or `resources`) of one
exact set of items: it carries the kind, the set's fingerprint and the
offset, sealed with a MAC. A cursor whose set has changed since it was
issued, that was edited, that belongs to another listing, or that is not a
cursor at all raises `InvalidCursorError` (JSON-RPC -32602 "Invalid
cursor"); the client then starts over.

Cursors are derived from the content alone: the MAC key is a fixed constant
unless one is given, so every process serving the same folder (workers,
replicas behind a load balancer, the same server after a restart) issues
and accepts the same cursors, with no secret to share. The MAC is a seal
against damage and edits, not a secret: a client that computed a cursor
itself would only name a position in a listing it may page through in full
anyway, and the fingerprint check still refuses it once the set changes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..exceptions import InvalidCursorError
from ..registry import digest_of

__all__ = ["DEFAULT_PAGE_SIZE", "CursorCodec", "Page", "Paginator", "fingerprint_of"]

DEFAULT_PAGE_SIZE = 500
"""Items per listing page. A library of a few hundred prompts is one request; 100,000 are 200."""

_VERSION = "2"  # 1 was sealed with a random key per process
_CONTENT_KEY = hashlib.sha256(b"mcp-notebook listing cursor").digest()
_MAC_BYTES = 16
# A real cursor is well under 200 characters; anything far longer is garbage we need not decode.
_MAX_CURSOR_LENGTH = 512

T = TypeVar("T")


def fingerprint_of(items: Iterable[object]) -> str:
    """A short digest of a sequence of value objects (their `repr`), for listings without one."""
    return digest_of(items).hex()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    """Seals and opens cursors; by default the same in every process (module docstring), or with `key`."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else _CONTENT_KEY

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_MAC_BYTES]

    def encode(self, kind: str, fingerprint: str, offset: int) -> str:
        """The cursor for `offset` in the `kind` listing of the set with `fingerprint`."""
        payload = f"{_VERSION}:{kind}:{fingerprint}:{offset}".encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def decode(self, kind: str, cursor: str, fingerprint: str) -> int:
        """The offset `cursor` points at; `InvalidCursorError` unless it is intact and current."""
        if len(cursor) > _MAX_CURSOR_LENGTH or cursor.count(".") != 1:
            raise InvalidCursorError(cursor[:_MAX_CURSOR_LENGTH])
        encoded_payload, encoded_mac = cursor.split(".")
        try:
            payload = _unb64(encoded_payload)
            mac = _unb64(encoded_mac)
        except (binascii.Error, ValueError):
            raise InvalidCursorError(cursor) from None
        # Constant-time: a timing side channel must not help forge a MAC.
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise InvalidCursorError(cursor)
        try:
            version, cursor_kind, cursor_fingerprint, offset_text = payload.decode("ascii").split(":")
            offset = int(offset_text)
        except ValueError:
            raise InvalidCursorError(cursor) from None
        if version != _VERSION or cursor_kind != kind or cursor_fingerprint != fingerprint or offset < 0:
            raise InvalidCursorError(cursor)
        return offset


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page of a listing; `next_cursor` is None on the last page."""

    items: tuple[T, ...]
    next_cursor: str | None


class Paginator:
    """Cuts listings into pages of `page_size` items."""

    def __init__(self, page_size: int = DEFAULT_PAGE_SIZE, codec: CursorCodec | None = None) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {page_size}")
        self.page_size = page_size
        self.codec = codec if codec is not None else CursorCodec()

    def locate(self, kind: str, size: int, fingerprint: str, cursor: str | None) -> tuple[int, str | None]:
        """Where the page `cursor` points at starts in a listing of `size` items, and the next page's cursor."""
        offset = 0 if cursor is None else self.codec.decode(kind, cursor, fingerprint)
        if offset > size:
            raise InvalidCursorError(cursor or "")
        return offset, self.cursor_after(kind, size, fingerprint, offset)

    def cursor_after(self, kind: str, size: int, fingerprint: str, offset: int) -> str | None:
        """The cursor of the page after the one at `offset` in a listing of `size` items; None after the last."""
        end = offset + self.page_size
        return self.codec.encode(kind, fingerprint, end) if end < size else None

    def page(self, kind: str, items: Sequence[T], fingerprint: str, cursor: str | None) -> Page[T]:
        """The page of `items` that `cursor` points at (the first page when it is None)."""
        offset, next_cursor = self.locate(kind, len(items), fingerprint, cursor)
        return Page(items=tuple(items[offset : offset + self.page_size]), next_cursor=next_cursor)
