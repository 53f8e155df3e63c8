"""HTTP resource limits: every connection, request and session is bounded in time and number.

Without limits one local process can hold the server: connections that never
send a request, headers or a body sent at one byte a second, a
`Content-Length` with no body behind it, or simply more open connections than
the process has file descriptors (then `accept` fails for everyone and even
reading a saved notebook fails). So:

* **headers** must arrive within `header_timeout` of the connection opening
  or of the previous response (408, then the connection is closed);
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
timeout, the connection cap and the absolute-form rule; every response it
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

__all__ = ["NOSNIFF", "GuardedHttpToolsProtocol", "HttpLimits", "connection_cap"]

NOSNIFF: Final = (b"x-content-type-options", b"nosniff")
_TIMEOUT_RESPONSE: Final = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"x-content-type-options: nosniff\r\n"
    b"content-length: 35\r\nconnection: close\r\n\r\nthe request did not arrive in time\n"
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


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, plus the header timeout and the connection cap (module docstring)."""

    limits: HttpLimits | None = None  # set per process by the server; None reads the environment

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limits = type(self).limits or getattr(self.config, "mcp_limits", None)
        if limits is None:
            limits = type(self).limits = HttpLimits.from_env()
        self._limits: HttpLimits = limits
        book = getattr(self.server_state, "mcp_connection_book", None)
        if book is None:
            book = _ConnectionBook(connection_cap(limits))
            self.server_state.mcp_connection_book = book  # type: ignore[attr-defined]
        self._book: _ConnectionBook = book
        # One timer per connection keeps both of its deadlines: the next request's headers are due by
        # `_header_deadline` (None while a request is being answered; then a 408), and a connection idle since
        # its last response is closed at `_idle_deadline` (None once a byte arrives: uvicorn's keep-alive
        # timeout). The deadlines move with every request; the timer is set once and moved only when it fires
        # (`_on_timer`) or, rarely, when a deadline comes before it. Setting and cancelling a timer per request,
        # as uvicorn does for its keep-alive timeout, costs about 1.4 us a request here, per timer.
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0
        self._header_deadline: float | None = None
        self._idle_deadline: float | None = None
        self._closed = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_timer(self.loop.time())
        self._book.opened(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_deadline = self._idle_deadline = None
        if self._timer is not None:
            self._timer.cancel()  # nothing of a closed connection stays on the loop
            self._timer = None
        if not self._closed:
            self._closed = True
            self._book.closed(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._idle_deadline = None  # not idle any more
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._headers_arrived()
        super().on_headers_complete()

    def _headers_arrived(self) -> None:
        """A request's headers are all here: no header timeout now, the connection is busy, `Host` is settled."""
        self._header_deadline = None  # the timer, if set, finds no deadline due when it fires
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
        # uvicorn's own answer to bytes that are not HTTP, with the header every answer carries.
        body = msg.encode("ascii", "replace")
        self.transport.write(
            b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + b"x-content-type-options: nosniff\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\nconnection: close\r\n\r\n"
            + body
        )
        self.transport.close()

    def on_response_complete(self) -> None:
        now = self.loop.time()
        if self.pipeline or self.transport.is_closing():
            super().on_response_complete()  # the next request, pipelined, starts; or the connection is closing
        else:
            # uvicorn's own steps for a connection with nothing pipelined, but for the keep-alive timer it sets
            # there: the idle deadline stands for it (uvicorn_seam checks that its steps are still these).
            self.server_state.total_requests += 1
            self.flow.resume_reading()
            self._idle_deadline = now + self.timeout_keep_alive
        if not self.transport.is_closing():
            self._book.idle_again(self)
            self._arm_header_timer(now)

    def close_connection(self) -> None:
        """Close at once (pushed out at the cap): the peer sees the connection end."""
        self._book.busy(self)
        if not self.transport.is_closing():
            self.transport.close()

    def _arm_header_timer(self, now: float) -> None:
        """The next request's headers are due within the header timeout from `now`."""
        self._header_deadline = now + self._limits.header_timeout
        self._set_timer()

    def _set_timer(self) -> None:
        """The timer set for the earliest deadline, unless it is set for that or sooner already."""
        header, idle = self._header_deadline, self._idle_deadline
        due = idle if header is None else header if idle is None else min(header, idle)
        if due is None or (self._timer is not None and self._timer_at <= due):
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due
        self._timer = self.loop.call_at(due, self._on_timer, due)

    def _on_timer(self, set_for: float) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        idle, header = self._idle_deadline, self._header_deadline
        if idle is not None and idle <= set_for:
            self._idle_deadline = self._header_deadline = None
            self.timeout_keep_alive_handler()  # uvicorn's: the connection is closed
        elif header is not None and header <= set_for:
            self._header_deadline = None
            self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()
        else:
            self._set_timer()  # a deadline moved since the timer was set: it waits for that one
