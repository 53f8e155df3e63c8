"""The access gate: every HTTP request to `/mcp` passes it, on every host that serves over HTTP.

`AccessGate` is the ASGI application in front of the SDK's Streamable HTTP
app; it checks, in this order:

1. `Host` must name this server (`hosts.py`: the bound address or, on a
   wildcard bind, the machine's names and addresses, with the port; plus the
   `--allowed-host` names), so a DNS-rebinding page cannot reach the server
   through its own hostname → 421, on every bind; more than one `Host` → 400
   (why this and not the SDK's own check: `hosts.py`);
2. `Origin`, when sent (each one, if repeated), must be a loopback origin
   (any port) or an allowed host → 403;
3. the path must be `/mcp` (or `GET /ready`, the readiness probe: 200 once
   the prompts are indexed, 503 before, when `/mcp` answers 503 too) → 404;
4. with a token, `Authorization: Bearer <token>` must match (compared in
   constant time) → 401 with `WWW-Authenticate: Bearer` and a body saying
   what to send;
5. the body of any request, whatever its method, over 4 MiB (declared or
   sent) → 413; not all there within the body timeout → 408 (`limits.py`);
   it is read here, so whatever is behind the gate (the SDK, the relay to
   a sibling worker) gets at most 4 MiB that have arrived in time;
6. a POST body must be one well-formed JSON-RPC message → 400 with its
   JSON-RPC error (`-32700` for text that is not JSON), in either era,
   whatever the other headers say. `http_bodies` also checks the
   2026-07-28 version header against the body and serves 2025-03-26 batches.

A screened stateless 2026-07-28 request of a method the server's `Answers`
answers is answered then and there (`answering.py`); everything else goes on
to the SDK's app, its body replayed.

Error bodies are JSON-RPC error objects (steps 1-4: id null; after that the
request's id whenever it can be read, `protocol.screening`, also in the
SDK's own refusals such as "Missing session ID"). Every response says
`X-Content-Type-Options: nosniff`. Handshake clients
(no `MCP-Protocol-Version: 2026-07-28` header) get sessions
(`Mcp-Session-Id`); 2026-07-28 clients are served statelessly.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Container, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..protocol.screening import readable_id
from .answering import StatelessRequests
from .hosts import LOOPBACK_NAMES, HostAllowList
from .http_bodies import VERSION_HEADER, AcceptedBody, RefusedBody, check_message, screen_post, serve_batch
from .limits import NOSNIFF, HttpLimits

__all__ = ["KEPT_HEADER_BYTES", "KEPT_HEADER_SETS", "MAX_BODY_BYTES", "MCP_PATH", "READY_PATH", "AccessGate"]

log = logging.getLogger(__name__)

MCP_PATH: Final = "/mcp"
READY_PATH: Final = "/ready"
MAX_BODY_BYTES: Final = 4 * 1024 * 1024
_Body = tuple[bytes, list[Message]]
_HeaderKey = tuple[Any, tuple[tuple[bytes, bytes], ...]]
KEPT_HEADER_SETS: Final = 256
"""How many header sets' verdicts are kept (then the oldest goes), each of at most `KEPT_HEADER_BYTES`."""
KEPT_HEADER_BYTES: Final = 4096


# A slow body is cut off. An oversized one is not: the server discards the rest, so the client
# can read the 413, and the header timeout closes the connection if the rest never comes.
_CLOSE: Final = ((b"connection", b"close"),)


def _error_body(message: str, code: int = -32600, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()


def _nosniff(send: Send) -> Send:
    """`send`, saying `X-Content-Type-Options: nosniff` on every response: no body is ever taken for another type."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != NOSNIFF[0]]
            message = {**message, "headers": [*headers, NOSNIFF]}
        await send(message)

    return sending


def _echoing_id(send: Send, request: bytes) -> Send:
    """`send`, putting the id of `request` into an error answer that says `"id": null` (the SDK's own refusals).

    The request was screened (one JSON-RPC message); it is read again only when such an answer comes.
    """
    held: Message | None = None
    chunks = bytearray()

    async def sending(message: Message) -> None:
        nonlocal held
        if message["type"] == "http.response.start" and message.get("status", 200) >= 400:
            held = message
            return
        if held is None or message["type"] != "http.response.body":
            await send(message)
            return
        chunks.extend(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = _with_id(bytes(chunks), request)
        headers = [(k, v) for k, v in held.get("headers", []) if k.lower() != b"content-length"]
        await send({**held, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        held = None
        await send({"type": "http.response.body", "body": body})

    return sending


def _with_id(body: bytes, request: bytes) -> bytes:
    try:
        reply = json.loads(body)
    except ValueError:
        return body
    if not (isinstance(reply, dict) and "error" in reply and reply.get("id") is None):
        return body
    request_id = readable_id(json.loads(request))
    return body if request_id is None else json.dumps({**reply, "id": request_id}).encode()


async def _respond(send: Send, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _PassedHeaders:
    """What is kept of a header set that passed every check: what screening and answering read of it."""

    __slots__ = ("routing", "version")

    def __init__(self, version: str | None, routing: dict[str, str] | None) -> None:
        self.version = version  # the (first) `MCP-Protocol-Version`
        self.routing = routing  # the headers as the SDK's envelope ladder reads them, if `answering` serves them


def _header_key(scope: Scope) -> tuple[_HeaderKey, bytes]:
    """(the request's headers but `Content-Length`, with the address it came to; the `Content-Length` sent).

    A client sends the same headers with every request but for the body's length, which no check reads, so
    the verdict on them (`Host`, `Origin`, the token, what screening and answering read) is kept by this key.
    """
    kept = []
    declared = b""
    for pair in scope["headers"]:
        if pair[0] == b"content-length":
            declared = declared or pair[1]
        else:
            kept.append(pair)
    return (scope.get("server"), tuple(kept)), declared


def _wrong_path(scope: Scope) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
    path = scope["path"]
    if path != MCP_PATH and not (path == READY_PATH and scope["method"] in ("GET", "HEAD")):
        return 404, _error_body(f"Not found: the MCP endpoint is {MCP_PATH}"), []
    return None


class _BodyClock:
    """The body timeout of every request whose body is being read on one event loop, on one timer.

    A timer set and cancelled per request (`asyncio.timeout`) costs about 6 us a request on uvloop; here a
    request is an entry in a dict, in the order of its deadline (they all wait as long), and one timer, set
    for the first deadline, cancels the task of every request whose body is late. An idle server has no timer.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self.loop = loop
        self.timeout = timeout
        self._reading: dict[asyncio.Task[Any], float] = {}
        self._late: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> asyncio.Task[Any]:
        """The current task begins reading a body, due within the timeout from now."""
        task = asyncio.current_task(self.loop)
        assert task is not None  # an ASGI request runs in a task
        self._reading[task] = self.loop.time() + self.timeout
        if self._timer is None:
            self._timer = self.loop.call_later(self.timeout, self._sweep)
        return task

    def stop(self, task: asyncio.Task[Any]) -> None:
        self._reading.pop(task, None)

    def was_late(self, task: asyncio.Task[Any]) -> bool:
        """Whether `task` was cancelled here, for a late body (then the cancellation is taken back)."""
        if task not in self._late:
            return False
        self._late.discard(task)
        task.uncancel()
        return True

    def _sweep(self) -> None:
        self._timer = None
        now = self.loop.time()
        while self._reading:
            task = next(iter(self._reading))
            deadline = self._reading[task]
            if deadline > now:
                self._timer = self.loop.call_at(deadline, self._sweep)
                return
            del self._reading[task]
            self._late.add(task)
            task.cancel()


class AccessGate:
    """ASGI middleware that keeps the MCP endpoint local, authenticated and fed with JSON (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Container[str] | None,
        token: str | None = None,
        on_ready: Callable[[], None] | None = None,
        token_hint: str | None = None,
        limits: HttpLimits | None = None,
        ready: threading.Event | None = None,
        answering: StatelessRequests | None = None,
    ) -> None:
        self.app = app
        self.answering = answering  # answers the stateless requests of the server's methods (`answering`)
        self.allowed_hosts = allowed_hosts
        self.token = token
        # Where the token comes from, in the 401's words: the CLI and the kernel say how they were given it.
        self.token_hint = token_hint or "the token this server was started with"
        self.on_ready = on_ready
        self.limits = limits or HttpLimits()
        self.ready = ready  # None: ready from the start
        if isinstance(allowed_hosts, HostAllowList):
            extra_origins = set(allowed_hosts.names)
        else:
            extra_origins = {host.rsplit(":", 1)[0].strip("[]") for host in allowed_hosts or ()}  # type: ignore[attr-defined]
        self.origin_hosts = LOOPBACK_NAMES | extra_origins
        # Set when the bound port is known only per request (under another ASGI server): the
        # allow list is then built for the port the request arrived on.
        self.hosts_for_port: Callable[[int], HostAllowList] | None = None
        self._hosts_by_port: dict[int, HostAllowList] = {}
        self._ready_seen = False
        self._clock: _BodyClock | None = None  # the body timeout of the requests of the running loop
        # The verdict on header sets that passed every check, as many as `KEPT_HEADER_SETS` of at most
        # `KEPT_HEADER_BYTES` (`_header_key`); a set that failed is judged afresh each time.
        self._passed: dict[_HeaderKey, _PassedHeaders] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, self._watch_startup(send))
            return
        if scope["type"] != "http":
            return  # no websockets here
        key, declared = _header_key(scope)
        passed = self._passed.get(key)
        if passed is None:
            headers = Headers(scope=scope)
            rejection = self._reject(scope, headers)
            if rejection is None:
                passed = self._judge(headers)
                if scope["path"] == MCP_PATH:  # every check ran (the token is checked only there): keep it
                    self._keep(key, passed)
        else:
            rejection = _wrong_path(scope)
        if rejection is not None:
            status, body, extra = rejection
            log.warning("%s", self._refusal_line(scope, Headers(scope=scope), status))
            await _respond(_nosniff(send), status, body, extra)
            return
        assert passed is not None
        if scope["path"] == READY_PATH or not self._is_ready():
            await self._answer_readiness(scope, _nosniff(send))
            return
        await self._read_body_then_forward(scope, passed, declared, receive, send)

    def _is_ready(self) -> bool:
        """Whether the prompts are indexed; once they are, without asking the event again."""
        if self._ready_seen:
            return True
        self._ready_seen = self.ready is None or self.ready.is_set()
        return self._ready_seen

    def _judge(self, headers: Headers) -> _PassedHeaders:
        """What the rest of a request's way reads of headers that passed the checks."""
        routing = self.answering.routing(headers) if self.answering is not None else None
        return _PassedHeaders(headers.get(VERSION_HEADER), routing)

    def _keep(self, key: _HeaderKey, passed: _PassedHeaders) -> None:
        if sum(len(name) + len(value) for name, value in key[1]) > KEPT_HEADER_BYTES:
            return
        if len(self._passed) >= KEPT_HEADER_SETS:
            del self._passed[next(iter(self._passed))]
        self._passed[key] = passed

    def _refusal_line(self, scope: Scope, headers: Headers, status: int) -> str:
        """The log line of a refused request: which client (User-Agent, address), and for a 401 what fixes it."""
        peer = scope.get("client")
        where = f"{peer[0]}:{peer[1]}" if peer else "an unknown address"
        agent = headers.get("user-agent")
        client = f"{agent!r} at {where}" if agent else where
        line = f"refused {scope['method']} {scope['path']} from {client}: HTTP {status}"
        if status == 401:
            wrong = bool(headers.get("authorization"))
            line += (
                f" ({'wrong' if wrong else 'no'} token); the client must send 'Authorization: Bearer <token>' "
                f"with {self.token_hint}"
            )
        return line

    def _watch_startup(self, send: Send) -> Send:
        async def watched(message: Message) -> None:
            await send(message)
            if message["type"] == "lifespan.startup.complete" and self.on_ready is not None:
                self.on_ready()

        return watched

    def _reject(self, scope: Scope, headers: Headers) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
        hosts = headers.getlist("host")
        if len(hosts) > 1:  # RFC 9112 3.2; a proxy reading another one than we do could route it elsewhere
            return 400, _error_body("Bad request: more than one Host header"), []
        host = (hosts[0] if hosts else "").lower()
        allowed = self.allowed_hosts if self.allowed_hosts is not None else self._allowed_for(scope)
        if allowed is not None and host not in allowed:
            return 421, _error_body(f"Refused: Host {host!r} is not this server (DNS rebinding protection)"), []
        for origin in headers.getlist("origin"):  # every one, should a request carry more than one
            if not self._origin_allowed(origin):
                return 403, _error_body(f"Refused: requests from the web origin {origin!r} are not allowed"), []
        wrong_path = _wrong_path(scope)
        if wrong_path is not None:
            return wrong_path
        if self.token is not None and scope["path"] == MCP_PATH:
            return self._check_token(headers)
        return None

    def _allowed_for(self, scope: Scope) -> HostAllowList | None:
        if self.hosts_for_port is None:
            return None
        port = int((scope.get("server") or ("", 0))[1] or 0)
        if port not in self._hosts_by_port:
            self._hosts_by_port[port] = allowed = self.hosts_for_port(port)
            self.origin_hosts = self.origin_hosts | allowed.names
        return self._hosts_by_port[port]

    def _origin_allowed(self, origin: str) -> bool:
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.origin_hosts

    def _check_token(self, headers: Headers) -> tuple[int, bytes, list[tuple[bytes, bytes]]] | None:
        assert self.token is not None
        scheme, _, presented = (headers.get("authorization") or "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode(), self.token.encode()):
            return None
        challenge = 'Bearer realm="mcp-notebook"'
        if presented:
            challenge += ', error="invalid_token", error_description="the bearer token does not match"'
        problem = "The bearer token sent does not match this server's" if presented else "No bearer token was sent"
        message = f"{problem}: send the header 'Authorization: Bearer <token>' with {self.token_hint}"
        data = {"reason": "wrong token" if presented else "missing token"}
        return 401, _error_body(message, data=data), [(b"www-authenticate", challenge.encode())]

    def late_body(self) -> bytes:
        """The body of the 408 to a request whose body did not all arrive within the body timeout."""
        return _error_body(f"Request timeout: the body did not arrive within {self.limits.body_timeout:g} s")

    async def _answer_readiness(self, scope: Scope, send: Send) -> None:
        """The load balancer's probe (and `/mcp` while indexing): 200 once the prompts are indexed, else 503."""
        ready = self.ready is None or self.ready.is_set()
        if scope["path"] == READY_PATH:
            body = json.dumps({"ready": ready}).encode()
        else:
            body = _error_body("Starting: the prompts are being indexed; retry shortly", code=-32603)
        await _respond(send, 200 if ready else 503, body, [] if ready else [(b"retry-after", b"1")])

    async def _read_body_in_time(self, receive: Receive, send: Send) -> tuple[bool, _Body | None]:
        """(whether the body took longer than the body timeout, what `_read_body` read)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # under another event loop (trio): anyio's timeout
            with anyio.move_on_after(self.limits.body_timeout) as scope:
                return False, await self._read_body(receive, send)
            return scope.cancelled_caught, None
        clock = self._clock
        if clock is None or clock.loop is not loop:
            clock = self._clock = _BodyClock(loop, self.limits.body_timeout)
        task = clock.start()
        try:
            return False, await self._read_body(receive, send)
        except asyncio.CancelledError:
            if not clock.was_late(task):
                raise
            return True, None
        finally:
            clock.stop(task)

    async def _read_body(self, receive: Receive, send: Send) -> _Body | None:
        """The request body and what came after it (a disconnect); None when it was too big (answered 413)."""
        message = await receive()
        if message["type"] == "http.request" and not message.get("more_body", False):  # all in one piece
            body = message.get("body", b"")
            if len(body) <= MAX_BODY_BYTES:
                return body, []
            await _respond(send, 413, _error_body(f"Request body over {MAX_BODY_BYTES} bytes"))
            return None
        parts = bytearray()
        trailing: list[Message] = []
        while True:
            if message["type"] != "http.request":
                trailing.append(message)  # the client went away; let the app see it
                break
            parts.extend(message.get("body", b""))
            if len(parts) > MAX_BODY_BYTES:
                await _respond(send, 413, _error_body(f"Request body over {MAX_BODY_BYTES} bytes"))
                return None
            if not message.get("more_body", False):
                break
            message = await receive()
        return bytes(parts), trailing

    async def _read_body_then_forward(
        self, scope: Scope, passed: _PassedHeaders, declared: bytes, receive: Receive, send: Send
    ) -> None:
        """Read the body within its limits, screen it, answer it if it is a stateless request of the server's
        methods, else forward it to the SDK's transport. `declared`: the `Content-Length` sent."""
        plain_send, send = send, _nosniff(send)
        if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            await _respond(send, 413, _error_body(f"Request body over {MAX_BODY_BYTES} bytes"))
            return
        late, read = await self._read_body_in_time(receive, send)
        if late:
            await _respond(send, 408, self.late_body(), _CLOSE)
            return
        if read is None:
            return  # too big: refused
        body, trailing = read
        if not trailing and scope["method"] == "POST":
            verdict = screen_post(body, passed.version)  # malformed bodies, batches
            if not isinstance(verdict, AcceptedBody):
                if isinstance(verdict, RefusedBody):
                    await _respond(send, verdict.status, verdict.body)
                else:
                    await serve_batch(self.app, scope, verdict, send)
                return
            answering = self.answering
            if (
                answering is not None
                and passed.routing is not None
                and (revision := answering.takes(verdict.value, passed.routing)) is not None
            ):
                await answering.serve(verdict.value, revision, plain_send)
                return
            refused = check_message(verdict.value, passed.version)  # the header checks, what the SDK would misread
            if refused is not None:
                await _respond(send, refused.status, refused.body)
                return
            send = _echoing_id(send, body)
        replay: deque[Message] = deque([{"type": "http.request", "body": body, "more_body": False}, *trailing])

        async def replayed() -> Message:
            return replay.popleft() if replay else await receive()

        await self.app(scope, replayed, send)
