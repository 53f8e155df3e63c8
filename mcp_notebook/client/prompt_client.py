"""`PromptClient`: the prompts of one MCP server as our model; pages, caches, and translates errors once.

The connection itself is a `ConnectionOwner`'s (connection.py), its transport
the configuration's choice (transport_choice.py); this module only speaks
the prompt methods over it and turns what comes back into our model and our
error tree. The SDK is imported inside methods, so importing it stays cheap.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..config import ServerConfig
from ..exceptions import ServerConnectionError, ServerError
from ..models import CompletionResult, PromptSpec, RenderedPrompt
from .connection import ConnectionOwner, SessionOptions, in_connection_task
from .elicitation import InputHandler, ask_user
from .failures import connect_failure, translated_errors
from .skill_requests import SkillRequests
from .transport_choice import Refusals, ServerLog

if TYPE_CHECKING:
    import anyio
    import mcp_types
    from mcp import Client
    from mcp.client.context import ClientRequestContext

__all__ = ["PromptClient"]

logger = logging.getLogger(__name__)

# A listing that never ends must not hang the caller.
_MAX_PAGES = 1000


class PromptClient(SkillRequests):
    """The prompts of one MCP server, as our model: list, get, complete; and its skills (`SkillRequests`).

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
        self._owner: ConnectionOwner | None = None
        self._connect_lock: anyio.Lock | None = None
        self._prompts: tuple[PromptSpec, ...] | None = None
        self._generation = 0
        self._listeners: list[Callable[[], None]] = []
        self._lost_listeners: list[Callable[[], None]] = []
        self._server_log: ServerLog | None = None
        self._refusals = Refusals()  # an HTTP server's 401s and 403s, to explain the failures they cause
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
        return self._owner is not None and self._owner.connected

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
        return self._owner.client if self._owner is not None else None

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> PromptClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start (or reach) the server and negotiate the protocol; no-op when connected."""
        import anyio

        if self._connect_lock is None:
            self._connect_lock = anyio.Lock()
        async with self._connect_lock:
            if self.connected:
                return
            await self._close_owner()
            if self._server_log is None:
                self._server_log = ServerLog()
            owner = ConnectionOwner(
                self._config,
                options=self._session_options(),
                server_log=self._server_log,
                refusals=self._refusals,
                on_lost=self._on_lost,
            )
            self._owner = owner
            self._prompts = None
            self._refusals.take()  # one left from an earlier connection explains nothing of this one
            try:
                with anyio.fail_after(self._connect_timeout):
                    await owner.open()
            except TimeoutError:
                await self._close_owner()
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
            if owner.error is not None or not owner.connected:
                await self._close_owner()
                failure = connect_failure(
                    self._config, owner.error, stderr_hint=self._stderr_hint(), refusal=self._refusals.take()
                )
                await self.close()
                raise failure from owner.error

    async def close(self) -> None:
        """Close the connection; a stdio server process is stopped (stdin closed, then killed)."""
        await self._close_owner()
        if self._server_log is not None:
            self._server_log.close()
            self._server_log = None

    async def _close_owner(self) -> None:
        owner, self._owner = self._owner, None
        if owner is not None:
            await owner.close()

    def _session_options(self) -> SessionOptions:
        return SessionOptions(
            mode=self._mode,
            request_timeout=self._request_timeout,
            message_handler=self._on_message,
            elicitation_callback=self._on_elicitation if self._on_input_required is not None else None,
            # A pinned modern version makes the SDK adopt made-up, empty capabilities
            # without asking; ask the server, so its real prompts capability is known.
            on_open=self._discover if self._mode not in ("auto", "legacy") else None,
            while_open=self._listen_for_changes,
        )

    async def _discover(self, client: Client) -> None:
        from mcp_types import DiscoverResult

        with self._translated_errors("server/discover"):
            raw = await client.session.send_discover(client.protocol_version)
        client.session.adopt(DiscoverResult.model_validate(raw))

    def _stderr_hint(self) -> str:
        tail = self._server_log.tail() if self._server_log is not None else ""
        return f"\nThe server wrote on stderr:\n{tail}\n" if tail else ""

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

    def _on_lost(self) -> None:
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

        if client.protocol_version != "2026-07-28":
            return  # earlier revisions send notifications/prompts/list_changed (see _on_message)
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
        from ..protocol.convert import from_mcp_prompt

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
        from ..protocol.convert import from_mcp_get_prompt_result

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
        from ..protocol.convert import MAX_COMPLETION_VALUES, from_mcp_completion

        completion = from_mcp_completion(result.completion)
        # The spec caps a completion at 100 values; a server that sends more still gets a bounded answer.
        if len(completion.values) > MAX_COMPLETION_VALUES:
            return replace(completion, values=completion.values[:MAX_COMPLETION_VALUES])
        return completion

    def _translated_errors(self, method: str) -> contextlib.AbstractContextManager[None]:
        return translated_errors(
            self.name,
            method,
            request_timeout=self._request_timeout,
            stderr_hint=self._stderr_hint,
            on_broken=self._mark_broken,
            refusal=self._refusals.take,
            config=self._config,
        )

    def _mark_broken(self) -> None:
        if self._owner is not None:
            self._owner.report_lost()

    async def _on_elicitation(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """Ask the user (through `on_input_required`) for what the server needs."""
        handler = self._on_input_required
        assert handler is not None  # only installed together with a handler
        # Run the handler in the context of the request that caused it, so it can reach its caller. A
        # 2026-07-28 input-required round runs in that request's own task; a handshake server's
        # elicitation/create arrives on the connection's task instead, and goes to the latest request.
        run_context = contextvars.copy_context()
        if in_connection_task() and self._requests_in_flight:
            run_context = self._requests_in_flight[-1]
        return await ask_user(handler, context, params, run_context=run_context)
