"""An async MCP client that speaks our prompt model, for servers of every revision.

`PromptClient` wraps the SDK's `Client` for one configured server: it connects
lazily (stdio subprocess or Streamable HTTP), negotiates the protocol era
(2024-11-05 handshake up to stateless 2026-07-28), follows `prompts/list`
pagination to the end, caches the listing until the server says
`notifications/prompts/list_changed`, and answers 2026-07-28 input-required
results through a callback. Every request has a deadline; errors come out as
`ServerError` / `ServerConnectionError`. When the connection ends on its own
(a stdio server exits, its output closes), `connected` turns False at once and
the connection-lost listeners are told, without waiting for a request to fail.

The SDK is imported inside methods, so importing this module stays cheap
(the IPython extension and the LSP bridge start without paying for it).
The client runs on the asyncio backend: its connection lives in a task of its
own so that any task on the loop may use and close it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from . import __version__
from .config import ServerConfig
from .exceptions import ServerConnectionError, ServerError
from .models import CompletionResult, PromptSpec, RenderedPrompt

if TYPE_CHECKING:
    import anyio
    import mcp_types
    from mcp import Client
    from mcp.client.context import ClientRequestContext

__all__ = ["InputHandler", "InputRequest", "PromptClient", "import_sdk"]

logger = logging.getLogger(__name__)

# A listing that never ends must not hang the caller.
_MAX_PAGES = 1000
# How long a graceful close may take before the connection is torn down.
_CLOSE_GRACE = 10.0
_STDERR_TAIL = 2000


_sdk_import_lock = threading.Lock()
_in_connection_task: contextvars.ContextVar[bool] = contextvars.ContextVar("in_connection_task", default=False)


def import_sdk() -> None:
    """Import the parts of the MCP SDK this client uses: once, and one thread at a time.

    The SDK's client and server packages import each other, so importing them
    from two threads at once can leave a module half initialised. Every
    import of the SDK made for the client (a background warm-up, a first
    connection) goes through here.
    """
    with _sdk_import_lock:
        import mcp.client.client
        import mcp.client.sse
        import mcp.client.stdio
        import mcp.client.streamable_http  # noqa: F401


@dataclass(frozen=True, slots=True)
class InputRequest:
    """A server asks the user for input before it can answer (elicitation).

    `requested_schema` is a flat JSON Schema object (`properties`, `required`);
    answer with a mapping of property name to value, or `None` to decline.
    URL-mode requests carry `url` and an empty schema: answer `{}` once the
    user has visited it, `None` to decline.
    """

    message: str
    requested_schema: Mapping[str, Any]
    key: str
    url: str | None = None


InputHandler = Callable[[InputRequest], Awaitable[Mapping[str, Any] | None]]


@dataclass(eq=False)
class _Connection:
    """One live connection: owned by a task that opens and closes the SDK client."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    client: Client | None = None
    error: BaseException | None = None
    task: asyncio.Task[None] | None = None
    # Cancels a connect in progress (an anyio scope, so the SDK's shielded process shutdown still runs).
    scope: anyio.CancelScope | None = None


class PromptClient:
    """The prompts of one MCP server, as our model: list, get, complete.

    Use `async with PromptClient(config) as client:` or call `connect()` /
    `close()`; any method connects first when needed (and reconnects after the
    server went away).
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        mode: str = "auto",
        request_timeout: float = 30.0,
        connect_timeout: float = 30.0,
        on_input_required: InputHandler | None = None,
    ) -> None:
        self._config = config
        self._mode = mode
        self._request_timeout = request_timeout
        self._connect_timeout = connect_timeout
        self._on_input_required = on_input_required
        self._connection: _Connection | None = None
        self._connect_lock: asyncio.Lock | None = None
        self._prompts: tuple[PromptSpec, ...] | None = None
        self._generation = 0
        self._listeners: list[Callable[[], None]] = []
        self._lost_listeners: list[Callable[[], None]] = []
        self._server_log: _ServerLog | None = None
        # Contexts of the prompts/get requests in flight, for server-sent elicitations (see _on_elicitation).
        self._requests_in_flight: list[contextvars.Context] = []

    # -- state -------------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._config.name

    @property
    def config(self) -> ServerConfig:
        return self._config

    @property
    def connected(self) -> bool:
        connection = self._connection
        return connection is not None and connection.client is not None and not connection.stop.is_set()

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol revision, e.g. `"2025-06-18"`; None before connecting."""
        client = self._live_client()
        return client.protocol_version if client is not None else None

    @property
    def server_title(self) -> str | None:
        """The server's own title (or name), when it said one."""
        client = self._live_client()
        info = client.server_info if client is not None else None
        return (info.title or info.name) if info is not None else None

    @property
    def instructions(self) -> str | None:
        client = self._live_client()
        return client.instructions if client is not None else None

    def _live_client(self) -> Client | None:
        return self._connection.client if self._connection is not None and self.connected else None

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> PromptClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start (or reach) the server and negotiate the protocol; no-op when connected."""
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        async with self._connect_lock:
            if self.connected:
                return
            await self._close_connection()
            connection = _Connection()
            self._connection = connection
            self._prompts = None
            # A fresh context: the connection outlives the request that opened it.
            connection.task = asyncio.get_running_loop().create_task(
                self._own(connection), name=f"mcp-connection-{self.name}", context=contextvars.Context()
            )
            try:
                async with asyncio.timeout(self._connect_timeout):
                    await connection.ready.wait()
            except TimeoutError:
                await self._close_connection()
                failure = ServerConnectionError(
                    self.name,
                    f"no answer within {self._connect_timeout:g} s while connecting to {self._config.describe()}."
                    f"{self._stderr_hint()} Check that the server starts on its own, or raise connect_timeout.",
                )
                await self.close()
                raise failure from None
            except BaseException:
                await self.close()
                raise
            if connection.error is not None or not self.connected:
                await self._close_connection()
                failure = self._connect_failure(connection.error)
                await self.close()
                raise failure from connection.error

    async def close(self) -> None:
        """Close the connection; a stdio server process is stopped (stdin closed, then killed)."""
        await self._close_connection()
        if self._server_log is not None:
            self._server_log.close()
            self._server_log = None

    async def _close_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None or connection.task is None:
            return
        connection.stop.set()
        if connection.client is None and connection.scope is not None:
            connection.scope.cancel()  # still connecting: nothing waits on `stop` yet
        # Shielded: a cancelled caller must still not leave the server process behind.
        waiter = asyncio.ensure_future(connection.done.wait())
        try:
            await asyncio.wait_for(asyncio.shield(waiter), _CLOSE_GRACE)
        except TimeoutError:
            connection.task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(connection.task), _CLOSE_GRACE)
        finally:
            waiter.cancel()

    async def _own(self, connection: _Connection) -> None:
        """The connection's task: open the SDK client, keep it until asked to stop, close it here."""
        _in_connection_task.set(True)
        import_sdk()
        import anyio

        try:
            with anyio.CancelScope() as scope:
                connection.scope = scope
                if connection.stop.is_set():
                    return
                await self._open_and_hold(connection)
        except Exception as error:
            connection.error = error
            self._on_connection_lost(connection)  # a connection in use failed: it is lost
        finally:
            connection.client = None
            connection.stop.set()
            connection.ready.set()
            connection.done.set()

    async def _open_and_hold(self, connection: _Connection) -> None:
        import anyio
        from mcp import Client
        from mcp_types import Implementation

        async with contextlib.AsyncExitStack() as stack:
            transport = await self._open_transport(stack)
            client = Client(
                _watched(transport, on_end=lambda: self._on_connection_lost(connection)),
                mode=self._mode,
                read_timeout_seconds=self._request_timeout,
                message_handler=self._on_message,
                elicitation_callback=self._on_elicitation if self._on_input_required is not None else None,
                client_info=Implementation(name="mcp-notebook", version=__version__),
                cache=None,  # we cache the whole listing ourselves, evicted by list_changed
            )
            await stack.enter_async_context(client)
            if self._mode not in ("auto", "legacy"):
                # A pinned modern version makes the SDK adopt made-up, empty capabilities
                # without asking; ask the server, so its real prompts capability is known.
                await self._discover(client)
            async with anyio.create_task_group() as tasks:
                if client.protocol_version == "2026-07-28":
                    tasks.start_soon(self._listen_for_changes, client)
                connection.client = client
                connection.ready.set()
                await connection.stop.wait()
                tasks.cancel_scope.cancel()

    async def _discover(self, client: Client) -> None:
        from mcp_types import DiscoverResult

        with self._translated_errors("server/discover"):
            raw = await client.session.send_discover(client.protocol_version)
        client.session.adopt(DiscoverResult.model_validate(raw))

    async def _open_transport(self, stack: contextlib.AsyncExitStack) -> Any:
        config = self._config
        if config.url is not None:
            headers = dict(config.headers or {})
            if config.sse:
                from mcp.client.sse import sse_client

                return sse_client(config.url, headers=headers or None)
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=headers or None))
            return streamable_http_client(config.url, http_client=http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        if config.command is None:
            raise ValueError("a stdio server needs a command")
        if self._server_log is None:
            self._server_log = _ServerLog()
        params = StdioServerParameters(
            command=_resolve_command(config.command),
            args=list(config.args),
            env=dict(config.env or {}) or None,
            cwd=config.cwd,
        )
        return stdio_client(params, errlog=self._server_log.file)

    def _stderr_hint(self) -> str:
        tail = self._server_log.tail() if self._server_log is not None else ""
        return f"\nThe server wrote on stderr:\n{tail}\n" if tail else ""

    def _connect_failure(self, error: BaseException | None) -> ServerConnectionError:
        from mcp import MCPError

        if error is None:
            return ServerConnectionError(
                self.name, f"the connection closed while it was being opened.{self._stderr_hint()}"
            )
        cause = _root_cause(error)
        config = self._config
        where = f" (from {config.source})" if config.source else ""
        if isinstance(cause, FileNotFoundError) and config.command is not None:
            message = f"cannot start {config.command!r}: command not found. Install it, or fix 'command'{where}."
        elif isinstance(cause, PermissionError) and config.command is not None:
            message = f"cannot start {config.command!r}: permission denied{where}."
        elif isinstance(cause, MCPError):
            message = f"the server refused to connect: {cause.message} (code {cause.code}).{self._stderr_hint()}"
        elif config.url is not None:
            message = f"cannot reach {config.url}: {cause}. Is the server running, and are the URL and headers right?"
        else:
            message = (
                f"the server {config.describe()!r} stopped before answering: {cause or type(cause).__name__}."
                f"{self._stderr_hint()}"
            )
        return ServerConnectionError(self.name, message)

    # -- change notifications ----------------------------------------------------------------------

    def add_list_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` (on the event loop) whenever the server's prompt list changes.

        Returns a function that removes the listener.
        """
        self._listeners.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return remove

    def add_connection_lost_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` (on the event loop) when an open connection ends without `close()`.

        That is the server going away: a stdio server exiting, a transport
        failing, a request finding the connection closed. `connected` is already
        False when it is called; the next request reconnects. Returns a function
        that removes the listener.
        """
        self._lost_listeners.append(callback)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._lost_listeners.remove(callback)

        return remove

    def _on_connection_lost(self, connection: _Connection) -> None:
        """`connection` ended by itself: stop using it, and tell the listeners unless it never opened."""
        if connection.stop.is_set():
            return  # closed on purpose, or already reported
        connection.stop.set()
        if connection.ready.is_set():
            # Soon, not here: this runs inside whichever task noticed (the SDK's reader, a request).
            # A connection that never opened needs no listener: its connect() fails instead.
            asyncio.get_running_loop().call_soon(self._notify_connection_lost)

    def _notify_connection_lost(self) -> None:
        for callback in list(self._lost_listeners):
            try:
                callback()
            except Exception:
                logger.exception("connection-lost listener of %s failed", self.name)

    def _on_list_changed(self) -> None:
        self._generation += 1
        self._prompts = None
        for callback in list(self._listeners):
            try:
                callback()
            except Exception:
                logger.exception("list_changed listener of %s failed", self.name)

    async def _on_message(self, message: Any) -> None:
        import mcp_types

        if isinstance(message, mcp_types.PromptListChangedNotification):
            self._on_list_changed()
        elif isinstance(message, Exception):
            logger.warning("MCP server %s: transport error: %s", self.name, message)

    async def _listen_for_changes(self, client: Client) -> None:
        """2026-07-28 servers announce changes only on a `subscriptions/listen` stream."""
        from mcp import MCPError
        from mcp.client.subscriptions import PromptsListChanged, SubscriptionLost

        try:
            async with client.listen(prompts_list_changed=True) as subscription:
                async for event in subscription:
                    if isinstance(event, PromptsListChanged):
                        self._on_list_changed()
        except (MCPError, SubscriptionLost, TimeoutError) as error:
            # The listing is still fetched on demand; only change tracking is lost.
            logger.info("MCP server %s offers no prompt change stream: %s", self.name, error)

    # -- requests ----------------------------------------------------------------------------------

    async def _client(self) -> Client:
        await self.connect()
        client = self._live_client()
        if client is None:
            raise ServerConnectionError(self.name, "the connection closed; try again to reconnect.")
        return client

    async def list_prompts(self, *, refresh: bool = False) -> tuple[PromptSpec, ...]:
        """Every prompt the server offers (all pages), cached until it announces a change."""
        if self._prompts is not None and not refresh and self.connected:
            return self._prompts
        from .protocol.convert import from_mcp_prompt

        client = await self._client()
        capabilities = client.server_capabilities
        if capabilities.prompts is None:
            return ()
        generation = self._generation
        prompts: list[PromptSpec] = []
        cursor: str | None = None
        seen: set[str] = set()
        with self._translated_errors("prompts/list"):
            for _ in range(_MAX_PAGES):
                page = await client.list_prompts(cursor=cursor)
                prompts.extend(from_mcp_prompt(p, origin=self.name) for p in page.prompts)
                cursor = page.next_cursor
                # A present cursor (even "") means more pages; a repeated one would loop forever.
                if cursor is None:
                    break
                if cursor in seen:
                    raise ServerError(f"{self.name}: prompts/list returned the cursor {cursor!r} twice")
                seen.add(cursor)
            else:
                raise ServerError(f"{self.name}: prompts/list did not end after {_MAX_PAGES} pages")
        listing = tuple(prompts)
        if generation == self._generation:
            # Only a listing that no change notification overtook is worth keeping.
            self._prompts = listing
        return listing

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        """Render one prompt on the server; input-required rounds go to `on_input_required`."""
        client = await self._client()
        request_context = contextvars.copy_context()
        self._requests_in_flight.append(request_context)
        try:
            with self._translated_errors("prompts/get"):
                result = await client.get_prompt(name, dict(arguments or {}))
        finally:
            self._requests_in_flight.remove(request_context)
        from .protocol.convert import from_mcp_get_prompt_result

        return from_mcp_get_prompt_result(result, name=name)

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        """Values the server suggests for `argument` of `prompt`, given what was typed so far."""
        from mcp import MCPError
        from mcp_types import METHOD_NOT_FOUND, PromptReference

        client = await self._client()
        try:
            with self._translated_errors("completion/complete"):
                result = await client.complete(
                    PromptReference(type="ref/prompt", name=prompt),
                    {"name": argument, "value": value},
                    context_arguments=dict(context) if context else None,
                )
        except ServerError as error:
            if isinstance(error.__cause__, MCPError) and error.code == METHOD_NOT_FOUND:
                return CompletionResult(values=())  # completion is optional for servers
            raise
        from .protocol.convert import MAX_COMPLETION_VALUES, from_mcp_completion

        completion = from_mcp_completion(result.completion)
        # The spec caps a completion at 100 values; a server that sends more still gets a bounded answer.
        if len(completion.values) > MAX_COMPLETION_VALUES:
            return replace(completion, values=completion.values[:MAX_COMPLETION_VALUES])
        return completion

    @contextlib.contextmanager
    def _translated_errors(self, method: str) -> Iterator[None]:
        """Turn SDK and transport errors into our error tree, once, at this edge."""
        from mcp import MCPError
        from mcp.client import InputRequiredRoundsExceededError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
        from pydantic import ValidationError

        try:
            yield
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                self._mark_broken()
                raise ServerConnectionError(
                    self.name, f"the connection closed during {method}.{self._stderr_hint()} Try again to reconnect."
                ) from error
            if error.code == REQUEST_TIMEOUT and "timed out" in error.message:
                raise ServerConnectionError(
                    self.name,
                    f"no answer to {method} within {self._request_timeout:g} s. The server may be busy or stuck: "
                    "try again, raise the timeout, or disconnect and reconnect it.",
                ) from error
            raise ServerError(f"{self.name}: {error.message}", error.code, error.data) from error
        except ValidationError as error:
            raise ServerError(f"{self.name}: invalid answer to {method}: {error}") from error
        except InputRequiredRoundsExceededError as error:
            raise ServerError(f"{self.name}: {method} kept asking for input: {error}") from error
        except (OSError, EOFError) as error:
            self._mark_broken()
            raise ServerConnectionError(self.name, f"the connection failed during {method}: {error}") from error

    def _mark_broken(self) -> None:
        if self._connection is not None:
            self._on_connection_lost(self._connection)

    async def _on_elicitation(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """Ask the user (through `on_input_required`) for what the server needs."""
        from mcp_types import ElicitRequestURLParams, ElicitResult

        handler = self._on_input_required
        assert handler is not None  # only installed together with a handler
        if isinstance(params, ElicitRequestURLParams):
            request = InputRequest(params.message, {}, str(context.request_id), url=params.url)
        else:
            request = InputRequest(params.message, dict(params.requested_schema), str(context.request_id))
        # Run the handler in the context of the request that caused it, so it can reach its caller. A
        # 2026-07-28 input-required round runs in that request's own task; a handshake server's
        # elicitation/create arrives on the connection's task instead, and goes to the latest request.
        run_context = contextvars.copy_context()
        if _in_connection_task.get() and self._requests_in_flight:
            run_context = self._requests_in_flight[-1]
        task = asyncio.get_running_loop().create_task(_call_handler(handler, request), context=run_context)
        try:
            answer = await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if answer is None:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=None if request.url else dict(answer))


@contextlib.asynccontextmanager
async def _watched(transport: Any, *, on_end: Callable[[], None]) -> AsyncIterator[tuple[Any, Any]]:
    """`transport` (an SDK transport) whose read stream calls `on_end` when it ends."""
    async with transport as (read_stream, write_stream):
        yield _EndWatchingReadStream(read_stream, on_end), write_stream


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

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndWatchingReadStream:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        result: bool | None = await self._stream.__aexit__(*exc_info)
        return result


class _ServerLog:
    """Where a stdio server's stderr goes: a temporary file whose tail explains failures.

    Server logs would clutter a notebook; kept aside, they still explain a
    server that fails to start or dies.
    """

    def __init__(self) -> None:
        descriptor, self.path = tempfile.mkstemp(prefix="mcp-notebook-", suffix=".log")
        self.file = cast(TextIO, os.fdopen(descriptor, "a", encoding="utf-8", errors="replace"))

    def tail(self, limit: int = _STDERR_TAIL) -> str:
        try:
            with open(self.path, "rb") as log:
                log.seek(max(0, os.fstat(log.fileno()).st_size - limit))
                return log.read().decode("utf-8", errors="replace").strip()
        except OSError:
            return ""

    def close(self) -> None:
        self.file.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)


async def _call_handler(handler: InputHandler, request: InputRequest) -> Mapping[str, Any] | None:
    return await handler(request)


def _root_cause(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (task groups wrap what really failed)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _resolve_command(command: str) -> str:
    """`command` as found on PATH, else in this Python environment's scripts folder.

    A kernel or a script often runs from a virtual environment that is not on
    PATH: `mcp-notebook serve …` should still find the `mcp-notebook` installed
    beside the interpreter.
    """
    if os.sep in command or shutil.which(command) is not None:
        return command
    beside = Path(sys.executable).parent / command
    return str(beside) if shutil.which(str(beside)) is not None else command
