"""The MCP server: the registry's prompts (and a folder's resources) over any transport, in every revision.

Built on the SDK's low-level `Server`, with each handler registered
explicitly by `create_server`. The same server answers handshake-era
clients (2024-11-05 … 2025-11-25, through `initialize`) and stateless
2026-07-28 clients; every answer is shaped for the revision of the request
that asked (`convert`), lists are paginated with opaque cursors (`paging`),
and our errors become JSON-RPC errors in one place (`errors`). A `prompts/get`
that leaves out arguments the notebook lets the server ask for is answered
by asking the user (`asking`): with an `InputRequiredResult` at 2026-07-28,
with the server's own `elicitation/create` request on handshake sessions.

Two hooks let a host take over part of the work without knowing the SDK:
`render` renders the prompts it owns (answering None leaves a prompt to the
usual template rendering), and `complete` suggests values for the arguments
it knows more about (None leaves an argument to its static completions). Both
work on the model (`PromptSpec` in, `RenderedPrompt`/`CompletionResult` out)
and run after the prompt is found and its missing arguments were asked for.

Each request reads one registry snapshot, so a notebook that is being
reloaded is served from the last good set until the new one is published.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, cast

import anyio.to_thread
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

from .. import __version__
from ..exceptions import UnknownPromptError
from ..models import (
    CompletionResult,
    Deferred,
    EmbeddedResource,
    PromptArgument,
    PromptSpec,
    RenderedPrompt,
    ResourceInfo,
)
from ..naming import suggest_names
from ..registry import PromptRegistry, RegistrySnapshot
from ..rendering import FileReader, complete_argument, render_prompt
from ..resources import ResourceListing, ResourceProvider
from .asking import ANSWERS_KEY, arguments_to_ask, can_ask, to_answers, to_elicitation_request, to_input_required_result
from .changes import ChangeFeed, ConnectionTracker
from .convert import (
    to_mcp_completion,
    to_mcp_get_prompt_result,
    to_mcp_resource,
    to_mcp_resource_contents,
)
from .errors import ErrorShaper, guarded
from .listing import LIST_PROMPTS, PreparedListing, PromptPages
from .paging import DEFAULT_PAGE_SIZE, Paginator, fingerprint_of
from .prepared import PreparedResults
from .revisions import is_modern, supports
from .sdk_seam import add_middleware, shape_result

__all__ = ["CachePolicy", "HandshakeTrimmer", "PromptServer", "create_server"]

Context = ServerRequestContext[ChangeFeed, Any]

log = logging.getLogger(__name__)

_RenderHook = Callable[[PromptSpec, Mapping[str, str]], Awaitable[RenderedPrompt | None]]
"""Renders (prompt, arguments) when the host owns that prompt; None: render its templates as usual."""

_CompleteHook = Callable[[PromptSpec, str, str, Mapping[str, str]], Awaitable[CompletionResult | None]]
"""Suggests values for (prompt, argument, typed value, other arguments); None: its static completions."""


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """Cache hints for 2026-07-28 lists and reads (`ttlMs`, `cacheScope`).

    "public": the answer holds no per-user data, so any cache may share it
    (true for prompts served from files). Clients that listen for changes
    drop cached pages on `list_changed` anyway.
    """

    ttl_ms: int = 60_000
    scope: Literal["public", "private"] = "public"

    def hints(self) -> dict[Any, CacheHint]:
        hint = CacheHint(ttl_ms=self.ttl_ms, scope=self.scope)
        return {
            method: hint
            for method in (
                "server/discover",
                "prompts/list",
                "resources/list",
                "resources/templates/list",
                "resources/read",
            )
        }


class HandshakeTrimmer:
    """Server middleware: leaves out of an `initialize` result what the negotiated revision predates.

    The SDK builds one capability set for every revision; 2024-11-05 has no
    `completions` capability (the method itself exists, and stays served).
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "initialize" or not isinstance(result, dict):
            return result
        capabilities = result.get("capabilities")
        revision = str(result.get("protocolVersion", ""))
        if isinstance(capabilities, dict) and not supports(revision, "completions_capability"):
            result = {**result, "capabilities": {k: v for k, v in capabilities.items() if k != "completions"}}
        return result


def _feed_of(server: Server[ChangeFeed]) -> AbstractAsyncContextManager[ChangeFeed]:
    if not isinstance(server, PromptServer):
        raise TypeError("the change feed lifespan belongs to PromptServer")
    return ChangeFeed(server.registry, resources=server.resource_provider is not None).running()


class PromptServer(Server[ChangeFeed]):
    """A low-level MCP `Server` that serves a `PromptRegistry`; build it with `create_server`."""

    def __init__(
        self,
        registry: PromptRegistry,
        *,
        resources: ResourceProvider | None = None,
        read_file: FileReader | None = None,
        page_size: int = DEFAULT_PAGE_SIZE,
        name: str = "mcp-notebook",
        instructions: str | None = None,
        cache: CachePolicy | None = None,
        max_argument_bytes: int = 1_000_000,
        render: _RenderHook | None = None,
        complete: _CompleteHook | None = None,
    ) -> None:
        self.registry = registry
        self.resource_provider = resources
        self.read_file = read_file
        self.paginator = Paginator(page_size)
        self.max_argument_bytes = max_argument_bytes
        self._render_hook = render
        self._complete_hook = complete
        resource_handlers: dict[str, Any] = {}
        if resources is not None:
            resource_handlers = {
                "on_list_resources": guarded("resources/list", self._list_resources),
                "on_read_resource": guarded("resources/read", self._read_resource),
                # Clients of a server with resources may ask for templates; we publish none.
                "on_list_resource_templates": guarded("resources/templates/list", self._list_resource_templates),
            }
        super().__init__(
            name,
            version=__version__,
            instructions=instructions,
            cache_hints=(cache or CachePolicy()).hints(),
            lifespan=_feed_of,
            # The SDK takes a wire dict from any handler, though its signature names the model.
            on_list_prompts=cast(Any, guarded("prompts/list", self._list_prompts)),
            on_get_prompt=guarded("prompts/get", self._get_prompt),
            on_completion=guarded("completion/complete", self._complete),
            on_subscriptions_listen=guarded("subscriptions/listen", self._listen),
            **resource_handlers,
        )
        # Whether the results are written through `prepared` (the transport says): then pages carry their JSON.
        self.prepared_results = PreparedResults()
        self._prompt_pages = PromptPages(self.paginator, shape=partial(shape_result, self, LIST_PROMPTS))
        add_middleware(
            self,
            [
                ErrorShaper(self),
                ConnectionTracker(),
                HandshakeTrimmer(),
                PreparedListing(registry, self._prompt_pages, self.prepared_results),
            ],
        )

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """Handshake-era options; by default they advertise `listChanged`, which the SDK leaves false.

        The HTTP session manager calls this without arguments, so the default
        is what every handshake client sees.
        """
        if notification_options is None:
            notification_options = NotificationOptions(
                prompts_changed=True, resources_changed=self.resource_provider is not None
            )
        return super().create_initialization_options(notification_options, experimental_capabilities, extensions)

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        """The SDK's capabilities, without `resources.subscribe`: changes are announced as list changes only.

        At 2026-07-28 the SDK advertises resource subscriptions whenever
        `subscriptions/listen` is served, but this server never sends
        `notifications/resources/updated` for one URI: a saved notebook
        announces `resources/list_changed` (and the prompts' list change).
        """
        capabilities = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        if capabilities.resources is not None and capabilities.resources.subscribe:
            resources = capabilities.resources.model_copy(update={"subscribe": False})
            capabilities = capabilities.model_copy(update={"resources": resources})
        return capabilities

    # --- prompts ------------------------------------------------------------------------------------------------

    def _find(self, snapshot: RegistrySnapshot, name: str) -> PromptSpec:
        spec = snapshot.get(name)
        if spec is None:
            raise UnknownPromptError(name, suggest_names(name, snapshot.by_name))
        return spec

    async def _list_prompts(self, ctx: Context, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        # Pages are built once per snapshot and revision (`listing`); the SDK shapes the dict for the wire.
        # `PreparedListing` answers the requests the SDK would serve before they get here; this serves the rest.
        cursor = params.cursor if params is not None else None
        return self._prompt_pages.page(self.registry.snapshot(), ctx.protocol_version, cursor)

    async def _render(self, spec: PromptSpec, arguments: Mapping[str, str]) -> RenderedPrompt:
        if self._render_hook is not None:
            rendered = await self._render_hook(spec, arguments)
            if rendered is not None:
                return rendered
        render = partial(
            render_prompt, spec, arguments, read_file=self.read_file, max_argument_bytes=self.max_argument_bytes
        )
        messages = spec.messages
        if isinstance(messages, Deferred) and not messages.made:
            # The first use of a prompt restored from the index reads its body (the index, or the notebook).
            return await anyio.to_thread.run_sync(render)
        if any(template.path is not None for template in messages):
            return await anyio.to_thread.run_sync(render)  # reads files: keep the loop free
        return render()

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        spec = self._find(self.registry.snapshot(), params.name)
        arguments = dict(params.arguments or {})
        questions = arguments_to_ask(spec, arguments)
        if questions and can_ask(ctx.session.client_capabilities, ctx.protocol_version):
            if is_modern(ctx.protocol_version):
                response = (params.input_responses or {}).get(ANSWERS_KEY)
                answers = to_answers(spec, questions, response) if isinstance(response, types.ElicitResult) else {}
                if len(answers) < len(questions):
                    # Not (fully) answered yet: ask again rather than fail, as the multi-round-trip flow asks.
                    return to_input_required_result(questions)
                arguments.update(answers)
            elif ctx.session.can_send_request:
                arguments.update(await self._ask(ctx, spec, questions))
        rendered = await self._render(spec, arguments)
        return to_mcp_get_prompt_result(rendered, ctx.protocol_version)

    async def _ask(self, ctx: Context, spec: PromptSpec, questions: Sequence[PromptArgument]) -> dict[str, str]:
        """Ask a handshake-era client's user for `questions` with our own `elicitation/create` request."""
        request = to_elicitation_request(questions, ctx.protocol_version)
        try:
            # Not `elicit_form`: it always says `mode`, a field 2025-06-18 does not have.
            related = ServerMessageMetadata(related_request_id=ctx.request_id)
            response = await ctx.session.send_request(request, types.ElicitResult, metadata=related)
        except MCPError as error:
            # The client could not ask after all: the request fails as it would have without asking.
            log.info("elicitation for prompt %r failed (%s); answering with the missing arguments", spec.name, error)
            return {}
        return to_answers(spec, questions, response)

    async def _complete(self, ctx: Context, params: types.CompleteRequestParams) -> types.CompleteResult:
        if not isinstance(params.ref, types.PromptReference):
            # No resource templates are published, so no resource argument has values to offer.
            return types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))
        spec = self._find(self.registry.snapshot(), params.ref.name)
        context = params.context.arguments if params.context is not None else None
        name, value = params.argument.name, params.argument.value
        result: CompletionResult | None = None
        if self._complete_hook is not None:
            result = await self._complete_hook(spec, name, value, dict(context or {}))
        if result is None:
            result = complete_argument(spec, name, value, context)
        return types.CompleteResult(completion=to_mcp_completion(result))

    async def _listen(
        self, ctx: Context, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await ctx.lifespan_context.listen(ctx, params)

    # --- resources ----------------------------------------------------------------------------------------------

    def _provider(self) -> ResourceProvider:
        if self.resource_provider is None:  # the handlers are only registered with a provider
            raise RuntimeError("no resource provider")
        return self.resource_provider

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        # The provider may look at files (sizes of embedded ones): keep the loop free.
        infos: Sequence[ResourceInfo] = await anyio.to_thread.run_sync(self._provider().list_resources)
        # A listing the provider fingerprinted once per change is paged as it is (prompts/list pages a snapshot).
        fingerprint = infos.fingerprint if isinstance(infos, ResourceListing) else fingerprint_of(infos := tuple(infos))
        cursor = params.cursor if params is not None else None
        page = self.paginator.page("resources", infos, fingerprint, cursor)
        return types.ListResourcesResult(
            resources=[to_mcp_resource(info, ctx.protocol_version) for info in page.items],
            next_cursor=page.next_cursor,
        )

    async def _list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        cursor = params.cursor if params is not None else None
        none: tuple[ResourceInfo, ...] = ()
        page = self.paginator.page("resource-templates", none, fingerprint_of(none), cursor)
        return types.ListResourceTemplatesResult(resource_templates=[], next_cursor=page.next_cursor)

    async def _read_resource(self, ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        contents: Sequence[EmbeddedResource] = await anyio.to_thread.run_sync(
            self._provider().read_resource, params.uri
        )
        return types.ReadResourceResult(
            contents=[to_mcp_resource_contents(item, ctx.protocol_version) for item in contents]
        )


def create_server(
    registry: PromptRegistry,
    *,
    resources: ResourceProvider | None = None,
    read_file: FileReader | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    name: str = "mcp-notebook",
    instructions: str | None = None,
    cache: CachePolicy | None = None,
    max_argument_bytes: int = 1_000_000,
    render: _RenderHook | None = None,
    complete: _CompleteHook | None = None,
) -> PromptServer:
    """An MCP server for `registry`'s prompts, ready for any transport.

    `resources` adds `resources/list` and `resources/read`; `read_file` lets
    prompts embed files (it must refuse paths outside the served root);
    `page_size` is the number of items per list page; `cache` sets the
    2026-07-28 cache hints; an argument value over `max_argument_bytes`
    (UTF-8) is refused with -32602.

    `render(spec, arguments)` renders the prompts the caller owns (e.g. a
    kernel running a magic) and answers None for the others, which are
    rendered from their templates; `complete(spec, argument, value, context)`
    suggests values where the caller knows better than the static
    completions (e.g. a kernel's variable names) and answers None elsewhere.
    Both get the prompt already found; errors they raise reach the client as
    ours always do (`MCPNotebookError`s as JSON-RPC errors).
    """
    return PromptServer(
        registry,
        resources=resources,
        read_file=read_file,
        page_size=page_size,
        name=name,
        instructions=instructions,
        cache=cache,
        max_argument_bytes=max_argument_bytes,
        render=render,
        complete=complete,
    )
