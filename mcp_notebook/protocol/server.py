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
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, cast

import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

from ..models import PromptArgument, PromptSpec
from ..registry import PromptRegistry
from ..rendering import FileReader
from ..resources import ResourceProvider
from ..version import __version__
from .answers import Answers, CompleteHook, RenderHook
from .asking import to_answers, to_elicitation_request
from .changes import ChangeFeed, ConnectionTracker
from .errors import ErrorShaper, guarded
from .listing import LIST_PROMPTS, PreparedListing, PromptPages
from .paging import DEFAULT_PAGE_SIZE, Paginator
from .prepared import PreparedResults, plain_result
from .revisions import supports
from .sdk_seam import add_middleware, shape_result
from .skills import (
    DIRECTORY_READ,
    SKILLS_EXTENSION,
    SKILLS_GET,
    SKILLS_LIST,
    GetSkillParams,
    ReadBytes,
    ReadDirectoryParams,
    SkillAnswers,
)

__all__ = ["CachePolicy", "HandshakeTrimmer", "PromptServer", "create_server"]

Context = ServerRequestContext[ChangeFeed, Any]

log = logging.getLogger(__name__)


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
    """Server middleware: an `initialize` result as the negotiated revision has it.

    The SDK builds one capability set for every revision; 2024-11-05 has no
    `completions` capability (the method itself exists, and stays served).
    The SDK's shaping drops `extensions` from handshake results (its schema
    has them from 2026-07-28), but extensions are declared in the
    `initialize` result (SEP-2133, and the Skills extension says so): the
    server's `extensions` are put back.
    """

    def __init__(self, extensions: Mapping[str, Any] | None = None) -> None:
        self.extensions = extensions if extensions is not None else {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "initialize" or not isinstance(result, dict):
            return result
        capabilities = result.get("capabilities")
        revision = str(result.get("protocolVersion", ""))
        if isinstance(capabilities, dict) and not supports(revision, "completions_capability"):
            capabilities = {k: v for k, v in capabilities.items() if k != "completions"}
            result = {**result, "capabilities": capabilities}
        if isinstance(capabilities, dict) and self.extensions:
            result = {**result, "capabilities": {**capabilities, "extensions": dict(self.extensions)}}
        return result


def _feed_of(server: Server[ChangeFeed]) -> AbstractAsyncContextManager[ChangeFeed]:
    if not isinstance(server, PromptServer):
        raise TypeError("the change feed lifespan belongs to PromptServer")
    return ChangeFeed(server.registry, resources=server.resource_provider is not None).running()


class PromptServer(Server[ChangeFeed]):
    """A low-level MCP `Server` serving `registry`'s prompts, ready for any transport (also `create_server`).

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
        render: RenderHook | None = None,
        complete: CompleteHook | None = None,
        skills: ReadBytes | None = None,
    ) -> None:
        self.registry = registry
        self.resource_provider = resources
        self.paginator = Paginator(page_size)
        policy = cache or CachePolicy()
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
            cache_hints=policy.hints(),
            lifespan=_feed_of,
            # The SDK takes a wire dict from any handler, though its signature names the model.
            on_list_prompts=cast(Any, guarded("prompts/list", self._list_prompts)),
            on_get_prompt=guarded("prompts/get", self._get_prompt),
            on_completion=guarded("completion/complete", self._complete),
            on_subscriptions_listen=guarded("subscriptions/listen", self._listen),
            on_ping=self._ping,
            **resource_handlers,
        )
        self.add_request_handler("server/discover", types.RequestParams, guarded("server/discover", self._discover))
        # Whether the results are written through `prepared` (the transport says): then pages carry their JSON.
        self.prepared_results = PreparedResults()
        self._prompt_pages = PromptPages(self.paginator, shape=partial(shape_result, self, LIST_PROMPTS))
        # Skills (the Skills extension) are served beside the folder's resources, which they are part of.
        skill_answers = None
        if skills is not None and resources is not None:
            hints = {"ttlMs": policy.ttl_ms, "cacheScope": policy.scope}
            skill_answers = SkillAnswers(
                registry,
                self.paginator,
                skills,
                hints=lambda: hints,
                shape=partial(shape_result, self, SKILLS_LIST),
            )
            self.extensions[SKILLS_EXTENSION] = {"directoryRead": True}
            self.add_request_handler(SKILLS_LIST, types.PaginatedRequestParams, guarded(SKILLS_LIST, self._list_skills))
            self.add_request_handler(SKILLS_GET, GetSkillParams, guarded(SKILLS_GET, self._skills))
            self.add_request_handler(DIRECTORY_READ, ReadDirectoryParams, guarded(DIRECTORY_READ, self._skills))
        # Every method's answer, which these handlers and the HTTP transport's stateless requests reach alike.
        self.answers = Answers(
            registry,
            self._prompt_pages,
            self.paginator,
            shape=partial(shape_result, self),
            server_info=self.server_info_stamp,
            capabilities=lambda revision: self.get_capabilities(protocol_version=revision),
            instructions=instructions,
            resources=resources,
            read_file=read_file,
            max_argument_bytes=max_argument_bytes,
            render=render,
            complete=complete,
            skills=skill_answers,
        )
        add_middleware(
            self,
            [
                ErrorShaper(self),
                ConnectionTracker(),
                HandshakeTrimmer(self.extensions),
                PreparedListing(self.answers, self.prepared_results),
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

    # --- the handlers: each reads its request's revision (and session) and asks `answers` ---------------------

    async def _list_prompts(self, ctx: Context, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        # `PreparedListing` answers the requests the SDK would serve before they get here; this serves the rest.
        return plain_result(
            self.answers.list_prompts(ctx.protocol_version, params.cursor if params is not None else None)
        )

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        ask = partial(self._ask, ctx) if ctx.session.can_send_request else None
        return await self.answers.get_prompt(ctx.protocol_version, params, ctx.session.client_capabilities, ask)

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
        return await self.answers.complete(params)

    async def _listen(
        self, ctx: Context, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await self.answers.listen(ctx.lifespan_context, ctx, params)

    async def _discover(self, ctx: Context, params: types.RequestParams) -> types.DiscoverResult:
        return self.answers.discover(ctx.protocol_version)

    async def _ping(self, ctx: Context, params: types.RequestParams | None) -> types.EmptyResult:
        return self.answers.ping()

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return await self.answers.list_resources(ctx.protocol_version, params.cursor if params is not None else None)

    async def _list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return self.answers.list_resource_templates(params.cursor if params is not None else None)

    async def _read_resource(self, ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return await self.answers.read_resource(ctx.protocol_version, params.uri)

    async def _list_skills(self, ctx: Context, params: types.PaginatedRequestParams) -> dict[str, Any]:
        # `PreparedListing` answers the requests the SDK would serve before they get here; this serves the rest.
        return plain_result(self.answers.list_skills(ctx.protocol_version, params.cursor))

    async def _skills(self, ctx: Context, params: types.RequestParams) -> dict[str, Any]:
        return self.answers.answer_skills(ctx.method, params, ctx.protocol_version)


create_server = PromptServer
"""An MCP server for a registry's prompts, ready for any transport (`PromptServer`, whose docstring says how)."""
