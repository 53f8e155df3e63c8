"""HTTP resource limits: every connection, request and session is bounded in time and number.

Without limits one local process can hold the server: connections that never
send a request, headers or a body sent at one byte a second, a
`Content-Length` with no body behind it, or simply more open connections than
the process has file descriptors (then `accept` fails for everyone and even
reading a saved notebook fails). So:

* **headers** must arrive within `header_timeout` of the connection opening
  or of the previous response (408, then the connection is closed), and
  take at most `MAX_HEAD_BYTES` together with the request line (431, then the
  connection is closed: nothing of a larger head is kept);
* **a body** must arrive within `body_timeout` of its headers (408, checked by
  the access gate, so it also holds under other ASGI servers); a declared
  `Content-Length` over the body limit is refused at once (413);
* **an idle keep-alive connection** is closed after `keep_alive_timeout`;
* **connections** are capped below the descriptor limit, leaving room for
  files and the folder watch; at the cap a new connection pushes out the one
  that has been idle longest (no request in flight), so a flood of idle
  connections cannot lock real clients out; only when every connection is
  busy is the newcomer closed;
* **handshake sessions** expire after `session_idle_timeout` without a request
  (an open GET stream counts as one); one peer (client address) holds at most
  `max_sessions_per_peer` of them and the server `max_sessions`, and a new
  session makes room only by ending one that has been idle for
  `session_evict_after` or longer, so no client can end another's session
  that is in use (`sessions.py`);
* **an absolute-form request target** (`POST http://name/mcp`) stands for its
  `Host` (RFC 9112 3.2.2), so its authority is checked as `Host` is.

`GuardedHttpToolsProtocol` is uvicorn's httptools protocol with the header
timeout and size, the connection cap and the absolute-form rule; every response it
writes itself says `X-Content-Type-Options: nosniff`, as the gate's do; `HttpLimits.from_env()` reads the
`MCP_NOTEBOOK_*` variables documented in docs/deployment.md.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

import httptools

from ..settings import LIMITS, check_values, from_env, to_env
from .uvicorn_seam import HttpToolsProtocol

__all__ = ["MAX_HEAD_BYTES", "NOSNIFF", "GuardedHttpToolsProtocol", "HttpLimits", "connection_cap"]

NOSNIFF: Final = (b"x-content-type-options", b"nosniff")
_TIMEOUT_RESPONSE: Final = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"x-content-type-options: nosniff\r\n"
    b"content-length: 35\r\nconnection: close\r\n\r\nthe request did not arrive in time\n"
)
MAX_HEAD_BYTES: Final = 64 * 1024
"""The most a request's line and headers may take together; more is refused with 431."""
_HEAD_TOO_LARGE: Final = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"x-content-type-options: nosniff\r\n"
    b"content-length: 52\r\nconnection: close\r\n\r\nthe request's headers are over 65536 bytes together\n"
)


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """How long and how many; the defaults suit a team server (docs/deployment.md)."""

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keep_alive_timeout: int = 5
    max_connections: int | None = None  # None: derived from the descriptor limit
    session_idle_timeout: float = 300.0
    max_sessions: int = 1000
    max_sessions_per_peer: int | None = None  # None: half of max_sessions (at least 1)
    session_evict_after: float = 60.0
    drain_timeout: float = 10.0

    def __post_init__(self) -> None:
        check_values({field.name: getattr(self, field.name) for field in fields(self)})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HttpLimits:
        """Limits from `MCP_NOTEBOOK_HEADER_TIMEOUT`, `..._MAX_SESSIONS` and so on; unset ones keep the default."""
        return cls(**from_env(LIMITS, environ))

    @property
    def sessions_per_peer(self) -> int:
        """How many handshake sessions one client address may hold."""
        if self.max_sessions_per_peer is not None:
            return min(self.max_sessions_per_peer, self.max_sessions)
        return max(1, self.max_sessions // 2)

    def to_env(self) -> dict[str, str]:
        """The variables `from_env` reads back into these limits."""
        return to_env({name: getattr(self, name) for name in LIMITS})


def _descriptor_limit() -> int:
    try:
        import resource
    except ImportError:  # no descriptor limit to respect (Windows)
        return 4096
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 65536 if soft == resource.RLIM_INFINITY or soft <= 0 else soft


def connection_cap(limits: HttpLimits) -> int:
    """Open connections allowed: `max_connections`, and never so many that files cannot be opened."""
    soft = _descriptor_limit()
    # Room for notebooks being read, the watch, logs and the SDK's own descriptors.
    headroom = max(64, soft // 8)
    derived = max(8, soft - headroom)
    return derived if limits.max_connections is None else min(limits.max_connections, derived)


class _ConnectionBook:
    """The connections of one server, the idle ones in the order they became idle."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open = 0
        self.idle: OrderedDict[GuardedHttpToolsProtocol, None] = OrderedDict()

    def opened(self, connection: GuardedHttpToolsProtocol) -> None:
        self.open += 1
        self.idle[connection] = None
        if self.open <= self.cap:
            return
        oldest = next((c for c in self.idle if c is not connection), None)
        (oldest or connection).close_connection()

    def busy(self, connection: GuardedHttpToolsProtocol) -> None:
        self.idle.pop(connection, None)

    def idle_again(self, connection: GuardedHttpToolsProtocol) -> None:
        self.idle.pop(connection, None)
        self.idle[connection] = None

    def closed(self, connection: GuardedHttpToolsProtocol) -> None:
        self.open -= 1
        self.idle.pop(connection, None)


class _HeadTooLarge(Exception):
    """Raised in the parser's callback to stop it at a head over `MAX_HEAD_BYTES`."""


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, plus the header timeout and size, and the connection cap (module docstring)."""

    limits: HttpLimits | None = None  # set by `bounded_by`; None reads the environment

    @classmethod
    def bounded_by(cls, limits: HttpLimits) -> type[GuardedHttpToolsProtocol]:
        """This protocol with `limits` (uvicorn builds one protocol object per connection from a class)."""
        return type(cls.__name__, (cls,), {"limits": limits})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limits = type(self).limits
        if limits is None:
            limits = type(self).limits = HttpLimits.from_env()
        self._limits: HttpLimits = limits
        book = getattr(self.server_state, "mcp_connection_book", None)
        if book is None:
            book = _ConnectionBook(connection_cap(limits))
            self.server_state.mcp_connection_book = book  # type: ignore[attr-defined]
        self._book: _ConnectionBook = book
        self._header_timer: asyncio.TimerHandle | None = None
        # Bytes received since a request began, until its headers are complete (None: no head being read).
        self._head_bytes: int | None = None
        self._chunk_bytes = 0  # the size of the chunk being parsed
        self._too_large = False
        self._closed = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer()
        self._book.opened(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()  # nothing of a closed connection stays on the loop
        if not self._closed:
            self._closed = True
            self._book.closed(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._chunk_bytes = len(data)
        if self._head_bytes is not None:  # a request's head is being read: it may grow only so far
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._head_too_large()
                return
        super().data_received(data)

    def on_message_begin(self) -> None:
        self._head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        # The chunk a request began in is not counted as it arrives: a head within it is measured now.
        if (self._head_bytes or 0) + self._chunk_bytes > MAX_HEAD_BYTES and self._head_size() > MAX_HEAD_BYTES:
            self._too_large = True
            raise _HeadTooLarge  # the parser stops; uvicorn answers through `send_400_response`
        self._headers_arrived()
        super().on_headers_complete()

    def _head_size(self) -> int:
        return len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def _head_too_large(self) -> None:
        self._head_bytes = None
        self._disarm_header_timer()
        self._refuse(_HEAD_TOO_LARGE)

    def _headers_arrived(self) -> None:
        """A request's headers are all here: no header timeout now, the connection is busy, `Host` is settled."""
        self._disarm_header_timer()
        self._head_bytes = None
        self._book.busy(self)
        self._authority_as_host()

    def _authority_as_host(self) -> None:
        """An absolute-form target names the host itself: it replaces `Host`, so the gate checks it (RFC 9112 3.2.2)."""
        url = self.url
        if url.startswith(b"/") or url == b"*":
            return
        try:
            parsed = httptools.parse_url(url)
        except httptools.HttpParserInvalidURLError:
            return  # left to the parser's own answer
        if parsed.host is None:
            return
        authority = parsed.host if parsed.port is None else parsed.host + b":" + str(parsed.port).encode()
        if b":" in parsed.host:  # an IPv6 literal comes back without its brackets
            authority = b"[" + parsed.host + b"]" + (b":" + str(parsed.port).encode() if parsed.port else b"")
        self.headers[:] = [(name, value) for name, value in self.headers if name != b"host"]
        self.headers.append((b"host", authority))

    def send_400_response(self, msg: str) -> None:
        if self._too_large:
            self._head_too_large()
            return
        # uvicorn's own answer to bytes that are not HTTP, with the header every answer carries.
        body = msg.encode("ascii", "replace")
        self._refuse(
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + b"x-content-type-options: nosniff\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\nconnection: close\r\n\r\n"
            + body
        )

    def _refuse(self, response: bytes) -> None:
        self.transport.write(response)
        self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._book.idle_again(self)
            self._arm_header_timer()

    def close_connection(self) -> None:
        """Close at once (pushed out at the cap): the peer sees the connection end."""
        self._book.busy(self)
        if not self.transport.is_closing():
            self.transport.close()

    def _arm_header_timer(self) -> None:
        """The next request's headers are due within the header timeout from now."""
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self._limits.header_timeout, self._headers_late)

    def _disarm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self._refuse(_TIMEOUT_RESPONSE)
