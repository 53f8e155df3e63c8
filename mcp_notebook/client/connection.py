"""The task that owns one connection to an MCP server: it opens the SDK client, holds it, and closes it.

A connection outlives the request that opened it, and any task on the loop
may use or close it; but anyio's cancel scopes (the SDK's task groups) must be
left by the task that entered them. So one task of the connection's own
enters them all and leaves them when asked to stop (`ConnectionOwner.close`),
or when the connection ends by itself: the server closes its output, a stdio
server exits. That end is noticed on the transport's read stream, without
waiting for a request to fail, and reported through `on_lost`.

Only the standard library is imported here up front; anyio and the SDK when
a connection opens, so importing the client stays cheap.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config import ServerConfig
from ..interrupts import interrupts_pass
from ..version import __version__
from .transport_choice import Refusals, ServerLog, open_transport

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskGroup
    from mcp import Client
    from mcp.client.session import ElicitationFnT, MessageHandlerFnT

__all__ = ["CLOSE_GRACE", "ConnectionOwner", "SessionOptions", "import_sdk", "in_connection_task"]

logger = logging.getLogger(__name__)

CLOSE_GRACE = 10.0
"""Seconds a graceful close may take before the connection is torn down."""

_sdk_import_lock = threading.Lock()
# Set once `import_sdk` (or `import_stdio_transport`) has run: later calls need not take the lock.
_sdk_imported = False
_stdio_imported = False
_tasks: set[Any] = set()  # the loop holds tasks weakly: connection tasks are held here until they end
_in_connection_task: contextvars.ContextVar[bool] = contextvars.ContextVar("in_connection_task", default=False)


def import_sdk(*, stdio_first: Callable[[], None] | None = None) -> None:
    """Import the parts of the MCP SDK this client uses: once, and one thread at a time.

    The SDK's client and server packages import each other, so importing them
    from two threads at once can leave a module half initialised. Every
    import of the SDK made for the client (a background warm-up, a first
    connection) goes through here.

    With `stdio_first` (a process whose first SDK import this is, such as the
    editor bridge), the SDK's package `__init__`s are deferred, the stdio
    transport is imported alone, `stdio_first()` is called (servers may start
    now: see `import_stdio_transport`), and then the rest is imported.
    """
    global _sdk_imported
    if _sdk_imported:
        return
    if stdio_first is not None:
        from ..lazy_packages import CLIENT_PACKAGE_INITS, SDK_PACKAGE_INITS, defer_package_init

        defer_package_init(*SDK_PACKAGE_INITS, *CLIENT_PACKAGE_INITS)
        import_stdio_transport()
        stdio_first()
    with _sdk_import_lock:
        import mcp.client.client
        import mcp.client.sse
        import mcp.client.stdio
        import mcp.client.streamable_http  # noqa: F401
        from mcp import Client  # noqa: F401  # runs a deferred `mcp` __init__ here, not on first use

        _sdk_imported = True


def import_stdio_transport() -> None:
    """Import what starting a stdio server takes (through `import_sdk`'s lock), not the client itself.

    Where the SDK's package `__init__`s are deferred (`lazy_packages`), this
    is a third of the SDK: the server process can be started with it while
    the rest imports in another thread, so the two starts overlap.
    """
    global _stdio_imported
    if _stdio_imported or _sdk_imported:
        return  # without the lock: it may be held for the rest of the SDK's import meanwhile
    with _sdk_import_lock:
        import mcp.client.stdio  # noqa: F401

        _stdio_imported = True


def in_connection_task() -> bool:
    """Whether the caller runs in a connection's own task (or one it started: the SDK's reader)."""
    return _in_connection_task.get()


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """How the SDK client of a connection is set up, and what runs in the connection's task."""

    mode: str = "auto"
    request_timeout: float = 30.0
    message_handler: MessageHandlerFnT | None = None
    elicitation_callback: ElicitationFnT | None = None
    # Awaited once the client is open, before the connection counts as open (its errors fail the open).
    on_open: Callable[[Client], Awaitable[None]] | None = None
    # Run beside the open connection, in its task, until the connection closes.
    while_open: Callable[[Client], Coroutine[Any, Any, None]] | None = None


class ConnectionOwner:
    """One connection to the server `config` names, opened, held and closed by a task of its own.

    `open()` starts that task and waits until the connection is open (or has
    failed: `error`); `close()` asks it to stop and waits until the server is
    gone. `on_lost` is called, soon and on the loop, when an open connection
    ends without `close()`. A closed owner is not reopened: make a new one.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        options: SessionOptions | None = None,
        server_log: ServerLog | None = None,
        refusals: Refusals | None = None,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        import anyio

        self._config = config
        self._options = options or SessionOptions()
        self._server_log = server_log
        self._refusals = refusals
        self._on_lost = on_lost
        self._stop = anyio.Event()
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._client: Client | None = None
        self._started = False
        # The owner task's scope: cancels a connect in progress (the SDK's shielded process shutdown still runs).
        self._scope: anyio.CancelScope | None = None
        self._notices: TaskGroup | None = None
        self.error: BaseException | None = None
        """What ended the connection, when it failed (to open, or while open)."""

    @property
    def client(self) -> Client | None:
        """The SDK client while the connection is open."""
        return self._client if self.connected else None

    @property
    def connected(self) -> bool:
        return self._client is not None and not self._stop.is_set()

    async def open(self) -> None:
        """Start the connection's task; return once it is open or has failed to open (then `error` says why).

        Give it a deadline (`anyio.fail_after`): a caller that stops waiting
        leaves the connection opening, to be `close()`d.
        """
        if not self._started:
            self._started = True
            _start_task(self._own, name=f"mcp-connection-{self._config.name}")
        await self._ready.wait()

    async def close(self) -> None:
        """Stop the connection and wait until it is closed (a stdio server: stdin closed, then killed)."""
        import anyio

        self._stop.set()
        if not self._started:
            return
        if self._client is None and self._scope is not None:
            self._scope.cancel()  # still connecting: nothing waits on `stop` yet
        # Shielded: a caller cancelled (by anyio) still waits until the server process is gone.
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(CLOSE_GRACE):
                await self._done.wait()
                return
            if self._scope is not None:
                self._scope.cancel()
            with anyio.move_on_after(CLOSE_GRACE):
                await self._done.wait()

    def report_lost(self) -> None:
        """The connection ended by itself: stop using it, and tell `on_lost` unless it never opened."""
        if self._stop.is_set():
            return  # closed on purpose, or already reported
        self._stop.set()
        # Soon, not here: this runs inside whichever task noticed (the SDK's reader, a request).
        # A connection that never opened needs no report: its open() fails instead.
        if self._ready.is_set() and self._on_lost is not None and self._notices is not None:
            self._notices.start_soon(self._tell_lost)

    async def _tell_lost(self) -> None:
        if self._on_lost is None:
            return
        try:
            self._on_lost()
        except Exception:
            logger.exception("the connection-lost callback of %s failed", self._config.name)

    async def _own(self) -> None:
        """The connection's task: open the SDK client, keep it until asked to stop, close it here."""
        _in_connection_task.set(True)
        # A stdio server is started before the client part of the SDK is imported (`_open_and_hold`).
        if self._config.url is None:
            import_stdio_transport()
        else:
            import_sdk()
        import anyio

        try:
            # Outside the scope that close() cancels: a loss report made before the end is still delivered.
            async with anyio.create_task_group() as notices:
                self._notices = notices
                try:
                    with anyio.CancelScope() as scope:
                        self._scope = scope
                        if not self._stop.is_set():
                            await self._open_and_hold()
                except Exception as error:
                    self.error = error
                    self.report_lost()  # a connection in use failed: it is lost
                finally:
                    self._client = None
                    self._stop.set()
                    self._ready.set()
        finally:
            self._done.set()

    async def _open_and_hold(self) -> None:
        import anyio

        options = self._options
        async with contextlib.AsyncExitStack() as stack:
            transport = await open_transport(self._config, stack, server_log=self._server_log, refusals=self._refusals)
            # Entered before the client is made: a stdio server starts now, while the rest of the SDK
            # imports (in a worker thread, so the loop goes on), instead of after it.
            streams = await stack.enter_async_context(_watched(transport, on_end=self.report_lost))
            if not _sdk_imported:
                from ..worker_threads import run_off_loop

                await run_off_loop(import_sdk)
            from mcp import Client
            from mcp.client import advertise
            from mcp_types import Implementation

            from ..models import SKILLS_EXTENSION

            client = Client(
                _opened(streams),
                mode=options.mode,
                read_timeout_seconds=options.request_timeout,
                message_handler=options.message_handler,
                elicitation_callback=options.elicitation_callback,
                client_info=Implementation(name="mcp-notebook", version=__version__),
                cache=None,  # the prompt client caches the whole listing itself, evicted by list_changed
                # The client reads skills (client/skills.py): servers may offer them only to clients that say so.
                extensions=[advertise(SKILLS_EXTENSION)],
            )
            await stack.enter_async_context(client)
            if options.on_open is not None:
                await options.on_open(client)
            async with anyio.create_task_group() as tasks:
                if options.while_open is not None:
                    tasks.start_soon(options.while_open, client)
                self._client = client
                self._ready.set()
                await self._stop.wait()
                tasks.cancel_scope.cancel()


def _start_task(run: Callable[[], Coroutine[Any, Any, None]], *, name: str) -> None:
    """Run `run()` in a task of its own on the running event loop, in a fresh context.

    anyio starts a task only in a task group, which the task that entered it
    must also leave; a connection opened by one request and closed by another
    needs a task that outlives both. The client runs on the asyncio backend
    (the runtime's thread, the editor bridge, tests), whose loop has that
    call. The loop keeps the task alive until it ends.
    """
    import asyncio

    # A fresh context: the connection outlives the request that opened it.
    task = asyncio.get_running_loop().create_task(interrupts_pass(run)(), name=name, context=contextvars.Context())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)


@contextlib.asynccontextmanager
async def _watched(transport: Any, *, on_end: Callable[[], None]) -> AsyncIterator[tuple[Any, Any]]:
    """`transport` (an SDK transport) whose read stream calls `on_end` when it ends."""
    async with transport as (read_stream, write_stream):
        yield _EndWatchingReadStream(read_stream, on_end), write_stream


@contextlib.asynccontextmanager
async def _opened(streams: tuple[Any, Any]) -> AsyncIterator[tuple[Any, Any]]:
    """A transport over streams already open: whoever opened them closes them."""
    yield streams


class _EndWatchingReadStream:
    """A transport's read stream that reports its end: the server closed its output, or the transport closed it.

    The SDK's session just stops reading then; requests only fail once sent. Watching
    the stream is how a dead stdio server is noticed between requests.
    """

    def __init__(self, stream: Any, on_end: Callable[[], None]) -> None:
        self._stream = stream
        self._on_end = on_end

    def __getattr__(self, name: str) -> Any:
        # The SDK reads optional attributes (`last_context`) off the stream it was given.
        return getattr(self._stream, name)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    def __aiter__(self) -> _EndWatchingReadStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self._stream.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._on_end()
            raise

    # Leaving the stream does not close it: the transport that opened it closes it, once it has stopped
    # forwarding the server's messages. The SDK's session leaves it when it stops reading, while an HTTP
    # transport may still forward one more message from its event stream; on a closed stream that message
    # failed, and the SDK logged "Error parsing SSE message" with a BrokenResourceError.
    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> _EndWatchingReadStream:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        return None
