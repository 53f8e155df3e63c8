"""The one implementation of every method this server answers, from the registry's snapshot, for every revision.

`Answers` holds what answering needs (the registry, the resource provider,
the paginator and the prompt pages, the host's render and complete hooks)
and answers each method once:

* `prompts/list` (a page built once per snapshot and revision, `listing`),
  `prompts/get` (asking for missing arguments, `asking`; rendering off the
  loop when it reads files), `completion/complete`, `resources/list`,
  `resources/templates/list` and `resources/read`, each for the revision of
  the request (`convert`); `server/discover` (2026-07-28), `ping` (handshake
  revisions) and `subscriptions/listen` (2026-07-28: the kinds of change this
  server announces, streamed by the running `changes.ChangeFeed`);
* `answer(method, params, revision, capabilities)`: a whole stateless
  2026-07-28 request (no session, nothing to send but the reply), its params
  checked against the revision's schema as the SDK checks them, and the
  result's JSON as it goes on the wire; errors are raised as the JSON-RPC
  errors the client gets (`errors`).

Every road reaches it: the SDK's handlers of `PromptServer` (handshake
sessions, stdio, the in-memory client) call the methods, and the HTTP
transport hands each stateless request it serves to `answer`
(`transports/answering.py`); a `subscriptions/listen` stream is the one
stateless request the SDK's transport carries (it is a stream), to the
handler that calls `listen`. What is serialized once (a page's JSON)
stays inside: `answer` returns bytes, the handlers return results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND, SERVER_INFO_META_KEY
from mcp_types import methods as sdk_methods
from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from ..exceptions import UnknownPromptError
from ..models import (
    CompletionResult,
    Deferred,
    EmbeddedResource,
    PromptArgument,
    PromptSpec,
    RenderedPrompt,
    ResourceInfo,
    TextContent,
)
from ..naming import suggest_names
from ..registry import PromptRegistry, RegistrySnapshot
from ..rendering import FileReader, complete_argument, render_prompt
from ..resources import ResourceListing, ResourceProvider
from ..worker_threads import run_off_loop
from .asking import ANSWERS_KEY, arguments_to_ask, can_ask, to_answers, to_input_required_result
from .convert import to_mcp_completion, to_mcp_get_prompt_result, to_mcp_resource, to_mcp_resource_contents
from .errors import capped, invalid_params, to_mcp_error
from .listing import LIST_PROMPTS, PromptPages
from .paging import Paginator, fingerprint_of
from .prepared import plain_result, prepared_json
from .revisions import MODERN_REVISIONS, is_modern
from .skills import (
    DIRECTORY_READ,
    SKILL_METHODS,
    SKILLS_GET,
    SKILLS_LIST,
    GetSkillParams,
    ReadDirectoryParams,
    SkillAnswers,
)

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from .changes import ChangeFeed

__all__ = ["STATELESS_METHODS", "Answers", "Ask", "CompleteHook", "RenderHook", "WireShape"]

RenderHook = Callable[[PromptSpec, Mapping[str, str]], Awaitable[RenderedPrompt | None]]
"""Renders (prompt, arguments) when the host owns that prompt; None: render its templates as usual."""

CompleteHook = Callable[[PromptSpec, str, str, Mapping[str, str]], Awaitable[CompletionResult | None]]
"""Suggests values for (prompt, argument, typed value, other arguments); None: its static completions."""

Capabilities = Callable[[str], types.ServerCapabilities]
"""The server's capabilities at a revision (`PromptServer.get_capabilities`)."""

WireShape = Callable[[str, str, Any], dict[str, Any]]
"""(method, revision, handler result) -> the result as the SDK puts it on the wire (`sdk_seam.shape_result`)."""

Ask = Callable[[PromptSpec, Sequence[PromptArgument]], Awaitable[dict[str, str]]]
"""Asks a handshake-era client's user for the missing arguments (its own `elicitation/create`)."""

_PARAMS: Final[dict[str, type[BaseModel]]] = {
    LIST_PROMPTS: types.PaginatedRequestParams,
    "prompts/get": types.GetPromptRequestParams,
    "completion/complete": types.CompleteRequestParams,
    "resources/list": types.PaginatedRequestParams,
    "resources/templates/list": types.PaginatedRequestParams,
    "resources/read": types.ReadResourceRequestParams,
    "server/discover": types.RequestParams,
}
STATELESS_METHODS: Final = frozenset(_PARAMS)
# The methods whose params, made of these members only, are read from the request as they are.
_PLAIN: Final = {
    LIST_PROMPTS: frozenset({"cursor", "_meta"}),
    "prompts/get": frozenset({"name", "arguments", "_meta"}),
}


class _Plain(NamedTuple):
    """The params of a stateless `prompts/get` or `prompts/list` with nothing to parse (`_PLAIN`); a named tuple,
    made per request (a frozen dataclass costs several times more to make)."""

    name: str
    arguments: Mapping[str, str] | None
    cursor: str | None
    input_responses: None = None


_COMPLETE: Final = b'"resultType":"complete"}'
"""The methods `Answers.answer` answers as whole stateless requests (with resources, all of them)."""


class Answers:
    """Every method's answer, for one registry (module docstring); `PromptServer` builds it."""

    def __init__(
        self,
        registry: PromptRegistry,
        pages: PromptPages,
        paginator: Paginator,
        *,
        shape: WireShape,
        server_info: Mapping[str, Any],
        capabilities: Capabilities,
        instructions: str | None = None,
        resources: ResourceProvider | None = None,
        read_file: FileReader | None = None,
        max_argument_bytes: int = 1_000_000,
        render: RenderHook | None = None,
        complete: CompleteHook | None = None,
        skills: SkillAnswers | None = None,
    ) -> None:
        self.registry = registry
        self.skills = skills
        self.pages = pages
        self.paginator = paginator
        self.resources = resources
        self.read_file = read_file
        self.max_argument_bytes = max_argument_bytes
        self._shape = shape
        self._stamp = server_info  # the server's `serverInfo`, as the SDK stamps a 2026-07-28 result; only serialized
        self._stamp_json = to_json({SERVER_INFO_META_KEY: server_info})
        self._complete_tail = b',"resultType":"complete","_meta":' + self._stamp_json + b"}"  # of every `_text_only`
        self._capabilities = capabilities
        self._instructions = instructions
        self._render_hook = render
        self._complete_hook = complete
        self.methods = (
            STATELESS_METHODS
            if resources is not None
            else frozenset(_PARAMS)
            - {
                "resources/list",
                "resources/templates/list",
                "resources/read",
            }
        ) | (SKILL_METHODS if skills is not None else frozenset())
        # The lists answered from prepared pages (`listing.ListPages`), whoever asks.
        self.paged_lists = frozenset({LIST_PROMPTS} | ({SKILLS_LIST} if skills is not None else set()))

    # --- prompts ----------------------------------------------------------------------------------------------

    def find(self, snapshot: RegistrySnapshot, name: str) -> PromptSpec:
        spec = snapshot.get(name)
        if spec is None:
            raise UnknownPromptError(name, suggest_names(name, snapshot.by_name))
        return spec

    def list_prompts(self, revision: str, cursor: str | None) -> dict[str, Any]:
        """The page `cursor` points at, as the SDK would put it on the wire, its list only as JSON
        (`listing.PromptPages.page`; `prepared.plain_result` makes it a plain result)."""
        return self.pages.page(self.registry.snapshot(), revision, cursor)

    def list_page(self, method: str, revision: str, cursor: str | None) -> dict[str, Any]:
        """The page of the list `method` (one of `paged_lists`) that `cursor` points at, hollow as `list_prompts`
        makes it."""
        if method == SKILLS_LIST:
            return self.list_skills(revision, cursor)
        return self.list_prompts(revision, cursor)

    async def get_prompt(
        self,
        revision: str,
        params: types.GetPromptRequestParams | _Plain,
        capabilities: types.ClientCapabilities | Mapping[str, Any] | None,
        ask: Ask | None = None,
    ) -> types.GetPromptResult | types.InputRequiredResult:
        """The prompt rendered with the arguments given, and those asked for where the client can be asked.

        `capabilities` are the client's: the session's, or a 2026-07-28 envelope's as sent (read only when
        there is something to ask)."""
        rendered = await self.rendered_prompt(revision, params, capabilities, ask)
        if isinstance(rendered, RenderedPrompt):
            return to_mcp_get_prompt_result(rendered, revision)
        return rendered

    async def rendered_prompt(
        self,
        revision: str,
        params: types.GetPromptRequestParams | _Plain,
        capabilities: types.ClientCapabilities | Mapping[str, Any] | None,
        ask: Ask | None = None,
    ) -> RenderedPrompt | types.InputRequiredResult:
        """The one implementation of `prompts/get`: the prompt rendered (or the questions to ask first), before the
        wire's models; `get_prompt` makes them for the SDK's handlers, `answer` writes its JSON."""
        spec = self.find(self.registry.snapshot(), params.name)
        arguments = dict(params.arguments or {})
        questions = arguments_to_ask(spec, arguments)
        if questions and can_ask(_capabilities(capabilities), revision):
            if is_modern(revision):
                response = (params.input_responses or {}).get(ANSWERS_KEY)
                answers = to_answers(spec, questions, response) if isinstance(response, types.ElicitResult) else {}
                if len(answers) < len(questions):
                    # Not (fully) answered yet: ask again rather than fail, as the multi-round-trip flow asks.
                    return to_input_required_result(questions)
                arguments.update(answers)
            elif ask is not None:
                arguments.update(await ask(spec, questions))
        return await self._render(spec, arguments)

    async def _render(self, spec: PromptSpec, arguments: Mapping[str, str]) -> RenderedPrompt:
        if self._render_hook is not None:
            rendered = await self._render_hook(spec, arguments)
            if rendered is not None:
                return rendered
        messages = spec.messages
        # The first use of a prompt restored from the index reads its body (the index, or the notebook), and a
        # prompt embedding files reads them: off the loop. Anything else renders here and now.
        off_loop = isinstance(messages, Deferred) and not messages.made
        if not off_loop:
            for template in messages:
                if template.path is not None:
                    off_loop = True
                    break
        if off_loop:
            render = partial(
                render_prompt, spec, arguments, read_file=self.read_file, max_argument_bytes=self.max_argument_bytes
            )
            return await run_off_loop(render)
        return render_prompt(spec, arguments, read_file=self.read_file, max_argument_bytes=self.max_argument_bytes)

    async def complete(self, params: types.CompleteRequestParams) -> types.CompleteResult:
        if not isinstance(params.ref, types.PromptReference):
            # No resource templates are published, so no resource argument has values to offer.
            return types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))
        spec = self.find(self.registry.snapshot(), params.ref.name)
        context = params.context.arguments if params.context is not None else None
        name, value = params.argument.name, params.argument.value
        result: CompletionResult | None = None
        if self._complete_hook is not None:
            result = await self._complete_hook(spec, name, value, dict(context or {}))
        if result is None:
            result = complete_argument(spec, name, value, context)
        return types.CompleteResult(completion=to_mcp_completion(result))

    # --- the server itself ------------------------------------------------------------------------------------

    def discover(self, revision: str) -> types.DiscoverResult:
        """What a 2026-07-28 client learns before anything else: the revisions, capabilities and instructions."""
        return types.DiscoverResult(
            supported_versions=list(MODERN_REVISIONS),
            capabilities=self._capabilities(revision),
            instructions=self._instructions,
        )

    def ping(self) -> types.EmptyResult:
        return types.EmptyResult()

    async def listen(
        self, feed: ChangeFeed, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Serve one 2026-07-28 `subscriptions/listen` stream on `feed`, for the kinds of change announced.

        The acknowledgement lists only those: prompt list changes, resource
        list changes when resources are served; never tool list changes
        (there are no tools) or single-resource updates (none are sent).
        """
        asked = params.notifications
        honoured = types.SubscriptionFilter(
            prompts_list_changed=True if asked.prompts_list_changed else None,
            resources_list_changed=True if asked.resources_list_changed and self.resources is not None else None,
        )
        return await feed.listen_handler(ctx, params.model_copy(update={"notifications": honoured}))

    # --- resources --------------------------------------------------------------------------------------------

    def _provider(self) -> ResourceProvider:
        if self.resources is None:  # only asked for when the server has a provider
            raise RuntimeError("no resource provider")
        return self.resources

    async def list_resources(self, revision: str, cursor: str | None) -> types.ListResourcesResult:
        # The provider may look at files (sizes of embedded ones): keep the loop free.
        infos = await run_off_loop(self._provider().list_resources)
        # A listing the provider fingerprinted once per change is paged as it is (prompts/list pages a snapshot).
        fingerprint = infos.fingerprint if isinstance(infos, ResourceListing) else fingerprint_of(infos := tuple(infos))
        if self.skills is not None:  # the skills' files follow the folder's own resources
            snapshot = self.registry.snapshot()
            if snapshot.skills:
                infos = (*infos, *self.skills.resource_infos(snapshot))
                fingerprint = f"{fingerprint}+{snapshot.fingerprint}"
        page = self.paginator.page("resources", infos, fingerprint, cursor)
        return types.ListResourcesResult(
            resources=[to_mcp_resource(info, revision) for info in page.items], next_cursor=page.next_cursor
        )

    def list_resource_templates(self, cursor: str | None) -> types.ListResourceTemplatesResult:
        none: tuple[ResourceInfo, ...] = ()
        page = self.paginator.page("resource-templates", none, fingerprint_of(none), cursor)
        return types.ListResourceTemplatesResult(resource_templates=[], next_cursor=page.next_cursor)

    async def read_resource(self, revision: str, uri: str) -> types.ReadResourceResult:
        read = (
            self.skills.read if self.skills is not None and self.skills.serves(uri) else self._provider().read_resource
        )
        contents: Sequence[EmbeddedResource] = await run_off_loop(read, uri)
        return types.ReadResourceResult(contents=[to_mcp_resource_contents(item, revision) for item in contents])

    # --- a whole stateless request ----------------------------------------------------------------------------

    async def answer(
        self, method: str, params: Mapping[str, Any] | None, revision: str, capabilities: Any = None
    ) -> bytes:
        """The result JSON of the stateless request (`method`, `params`) at `revision`.

        `capabilities` are the client's, from the request's envelope. Raises
        the `MCPError` the client gets: params the revision's schema refuses,
        an unknown prompt, anything our errors say (`errors.to_mcp_error`).
        """
        try:
            if method in self.paged_lists:  # a prepared page, shaped already
                if method == SKILLS_LIST:  # an extension's method: its params as its handler takes them
                    cursor = self._skill_params(method, params).cursor
                else:
                    cursor = self._checked(method, params, revision).cursor
                page = self.list_page(method, revision, cursor)
                return prepared_json(page) or to_json(plain_result(page))
            if method in SKILL_METHODS and self.skills is not None:
                return to_json(self._shape(method, revision, self.answer_skills(method, params, revision)))
            typed = self._checked(method, params, revision)
            if method == "prompts/get":
                rendered = await self.rendered_prompt(revision, typed, capabilities)
                if not isinstance(rendered, RenderedPrompt):
                    return to_json(self._shape(method, revision, rendered))
                return self._text_only(rendered) or self._stamped(to_mcp_get_prompt_result(rendered, revision))
            if method == "completion/complete":
                return self._stamped(await self.complete(typed))
            result: BaseModel
            if method == "resources/list":
                result = await self.list_resources(revision, typed.cursor)
            elif method == "server/discover":
                result = self.discover(revision)
            elif method == "resources/templates/list":
                result = self.list_resource_templates(typed.cursor)
            else:
                result = await self.read_resource(revision, typed.uri)
            return to_json(self._shape(method, revision, result))
        except MCPError as error:
            raise capped(error) from error.__cause__
        except Exception as exc:
            raise capped(to_mcp_error(exc, revision=revision, method=method)) from exc

    def list_skills(self, revision: str, cursor: str | None) -> dict[str, Any]:
        """The `skills/list` page `cursor` points at, hollow as `list_prompts` makes it (`skills.SkillPages`)."""
        if self.skills is None:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", SKILLS_LIST)
        return self.skills.list_skills(revision, cursor)

    @staticmethod
    def _skill_params(method: str, params: Mapping[str, Any] | BaseModel | None) -> Any:
        """A skills method's params as its model parses them (as they are when parsed already); -32602 else."""
        models: dict[str, type[BaseModel]] = {SKILLS_LIST: types.PaginatedRequestParams, SKILLS_GET: GetSkillParams}
        model = models.get(method, ReadDirectoryParams)
        try:
            return params if isinstance(params, BaseModel) else model.model_validate(params or {}, by_name=False)
        except ValidationError as problem:
            raise invalid_params(method, problem) from None

    def answer_skills(self, method: str, params: Mapping[str, Any] | BaseModel | None, revision: str) -> dict[str, Any]:
        """`skills/get`'s or `resources/directory/read`'s result (`skills.py`), before the SDK's shaping; params as
        sent or as parsed. (`skills/list` is a list: `list_skills`.)"""
        if self.skills is None:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", method)
        typed = self._skill_params(method, params)
        if method == SKILLS_GET:
            return self.skills.get_skill(revision, typed.uri)
        if method == DIRECTORY_READ:
            return self.skills.read_directory(revision, typed.uri, typed.cursor)
        raise MCPError(METHOD_NOT_FOUND, "Method not found", method)

    def _checked(self, method: str, params: Mapping[str, Any] | None, revision: str) -> Any:
        if method not in self.methods:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", method)
        try:
            # The SDK's `validate_client_request` (tests/protocol/test_answers_schema_check.py holds to it):
            # the revision's schema of the request, without that function's checks of its own arguments.
            surface = sdk_methods.CLIENT_REQUESTS[(method, revision)]  # KeyError: not at this revision
            if params is None:
                surface.model_validate({"jsonrpc": "2.0", "id": 0, "method": method}, by_name=False)
                params = {}
            else:
                surface.model_validate({"jsonrpc": "2.0", "id": 0, "method": method, "params": params}, by_name=False)
            if method in _PLAIN and _PLAIN[method].issuperset(params):
                # Plain strings the revision's schema has just checked: read as they are, not parsed again.
                return _Plain(params.get("name", ""), params.get("arguments"), params.get("cursor"))
            return _PARAMS[method].model_validate(params, by_name=False)
        except KeyError:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", method) from None
        except ValidationError as problem:
            raise invalid_params(method, problem) from None

    def _text_only(self, rendered: RenderedPrompt) -> bytes | None:
        """`_stamped(to_mcp_get_prompt_result(rendered))`, made without the wire's models, when every message is
        plain text (no annotations, no `_meta`) and the prompt has no `_meta` of its own (the usual prompt);
        else None. The same bytes: the models of such a result hold nothing but these members, in this order."""
        if rendered.meta:
            return None
        messages = []
        for message in rendered.messages:
            content = message.content
            if type(content) is not TextContent or content.annotations is not None or content.meta:
                return None
            messages.append({"role": message.role, "content": {"type": "text", "text": content.text}})
        tail = self._complete_tail
        if rendered.description is None:
            return b"".join((b'{"messages":', to_json(messages), tail))
        return b"".join((b'{"description":', to_json(rendered.description), b',"messages":', to_json(messages), tail))

    def _stamped(self, model: BaseModel) -> bytes:
        """A `prompts/get` or `completion/complete` result's JSON as the SDK's shaping writes it at 2026-07-28:
        its fields, its type, and the server's identity in `_meta` (no cache hints: these methods have none)."""
        if getattr(model, "meta", None) is None:
            body = to_json(model, by_alias=True, exclude_none=True)
            if body.endswith(_COMPLETE):  # the usual case: the stamp is the only `_meta`, added at the end
                return body[:-1] + b',"_meta":' + self._stamp_json + b"}"
        result = model.model_dump(by_alias=True, mode="json", exclude_none=True)
        result["resultType"] = "complete"
        meta = result.get("_meta")
        if meta is None:
            result["_meta"] = {SERVER_INFO_META_KEY: self._stamp}
        elif meta.get(SERVER_INFO_META_KEY) is None:  # a stamp the prompt's metadata sets itself stays
            result["_meta"] = {**meta, SERVER_INFO_META_KEY: self._stamp}
        return to_json(result)


def _capabilities(raw: Any) -> types.ClientCapabilities | None:
    """The client's capabilities from a 2026-07-28 envelope; None when they do not parse (it cannot be asked)."""
    if isinstance(raw, types.ClientCapabilities) or raw is None:
        return raw
    try:
        return types.ClientCapabilities.model_validate(raw, by_name=False)
    except ValidationError:
        return None
