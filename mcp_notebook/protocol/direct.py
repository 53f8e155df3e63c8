"""Direct answers: the stateless 2026-07-28 requests a transport may answer without the SDK's request path.

A 2026-07-28 request stands alone, so answering it needs no session. The SDK
still builds a runner, a connection, a session and a context per request and
validates it twice before a handler runs, and that path costs several times
what the answer does. For the three methods clients send most (`prompts/get`,
`prompts/list`, `completion/complete`), a transport that has checked what the
transport spec asks of the request on the way in (its headers, its version
and its envelope) may ask `DirectAnswers.answer(method, params, revision)`:

* the result the SDK's path would put on the wire for that request: a dict
  (for a `prompts/list` page the prepared one the SDK's path serves too,
  `prepared`, written as its transport writes every prepared result:
  `prepared_json`, then `written`). A page is shaped once by the SDK's own
  shaping (`sdk_seam.shape_result`); a `prompts/get` or `completion/complete`
  result is dumped from the same model the handler returns, with the two
  fields the SDK adds at 2026-07-28 (`resultType` and the `serverInfo`
  stamp) added here, without validating again what this server built;
* or None: this request takes the SDK's path, which answers it as it always
  did. So does everything that is not the plain case: params the request's
  schema refuses, an unknown prompt or argument, a missing argument, a
  question to ask, a progress token or log level to honour, a trace to
  continue (a `traceparent`, or OpenTelemetry set up in the process: the
  SDK's path records a span per request), a body still to be read from disk,
  a prompt or completion a host hook owns. The direct path
  never answers with an error, so every error keeps the SDK's words.

The differential tests (`tests/protocol/test_direct_answers.py`,
`tests/transports/test_http_direct.py`) hold each answer to the SDK's, per
method, over the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from mcp_types import SERVER_INFO_META_KEY
from mcp_types import methods as sdk_methods

from ..models import Deferred, PromptSpec
from ..registry import PromptRegistry
from ..rendering import FileReader, argument_values, complete_argument
from .asking import arguments_to_ask
from .convert import to_mcp_completion
from .get_bodies import GetBodies
from .listing import LIST_PROMPTS, PromptPages
from .prepared import PreparedResults, prepared_body
from .revisions import is_modern

__all__ = ["DIRECT_METHODS", "DirectAnswers"]

GET_PROMPT: Final = "prompts/get"
COMPLETE: Final = "completion/complete"
DIRECT_METHODS: Final = frozenset({LIST_PROMPTS, GET_PROMPT, COMPLETE})
"""The methods a transport may answer through `DirectAnswers`."""

# `_meta` keys whose requests need the SDK's path: it sends their progress and log notifications, and
# continues the client's trace in its OpenTelemetry span.
_SDK_PATH_META: Final = ("progressToken", "io.modelcontextprotocol/logLevel", "traceparent")
# Params beyond these (the multi-round-trip answers, say) belong to the SDK's path.
_PLAIN_PARAMS: Final = {
    GET_PROMPT: frozenset({"name", "arguments", "_meta"}),
    LIST_PROMPTS: frozenset({"cursor", "_meta"}),
    COMPLETE: frozenset({"ref", "argument", "context", "_meta"}),
}


class DirectAnswers:
    """Answers the plain stateless requests of one server the way its SDK handlers would (module docstring)."""

    def __init__(
        self,
        registry: PromptRegistry,
        pages: PromptPages,
        results: PreparedResults,
        server_info: Mapping[str, Any],
        *,
        read_file: FileReader | None,
        max_argument_bytes: int,
        hooked: bool,
        traced: Callable[[], bool] = lambda: False,
    ) -> None:
        self._registry = registry
        self._pages = pages
        self._results = results
        self._stamp = server_info  # the server's `serverInfo`, as the SDK stamps it; only ever serialized
        self._read_file = read_file
        self._max_argument_bytes = max_argument_bytes
        self._hooked = hooked  # a host renders or completes some prompts itself (the kernel): never direct
        self._traced = traced  # whether the SDK's per-request spans are recorded: then every request makes one
        self._bodies = GetBodies(self._stamped)

    def answer(self, method: str, params: Mapping[str, Any], revision: str) -> dict[str, Any] | None:
        """The wire result of the stateless request (`method`, `params`) at `revision`; None: take the SDK's path.

        `params` is the request's own (its `_meta` included), already checked
        against its envelope by the transport; this checks it against the
        request's schema for `revision`, as the SDK does first.
        """
        plain = _PLAIN_PARAMS.get(method)
        if plain is None or not is_modern(revision) or not plain.issuperset(params):
            return None
        meta = params.get("_meta")
        if not isinstance(meta, Mapping) or any(key in meta for key in _SDK_PATH_META) or self._traced():
            return None
        try:
            sdk_methods.validate_client_request(method, revision, params)
        except (KeyError, ValueError):  # pydantic's ValidationError is a ValueError
            return None
        if method == LIST_PROMPTS:
            return self._list(params, revision)
        if self._hooked:
            return None
        if method == GET_PROMPT:
            return self._get(params, revision)
        return self._complete(params, revision)

    def _list(self, params: Mapping[str, Any], revision: str) -> dict[str, Any] | None:
        cursor = params.get("cursor")
        try:
            return self._pages.wire_page(self._registry.snapshot(), revision, cursor, taken=self._results.taken)
        except Exception:  # an invalid cursor, say: the SDK's path refuses it in its own words
            return None

    def _spec(self, name: object) -> PromptSpec | None:
        return self._registry.snapshot().get(name) if isinstance(name, str) else None

    def _get(self, params: Mapping[str, Any], revision: str) -> dict[str, Any] | None:
        spec = self._spec(params.get("name"))
        if spec is None:
            return None
        messages = spec.messages
        if isinstance(messages, Deferred) and not messages.made:
            return None  # its body is still to be read, off the loop: the SDK's path does that
        if any(template.path is not None for template in messages):
            return None  # it reads files: the SDK's path reads them off the loop
        arguments: Mapping[str, str] = params.get("arguments") or {}
        if arguments_to_ask(spec, arguments):
            return None  # a question for the user, or the missing-arguments error
        try:
            values = argument_values(spec, arguments, self._max_argument_bytes)
            body = self._bodies.body(spec, values, revision)  # rendered as `render_prompt` renders it (get_bodies)
        except Exception:  # an unknown or oversized argument: the SDK's path says so in its words
            return None
        return None if body is None else prepared_body(body)

    def _complete(self, params: Mapping[str, Any], revision: str) -> dict[str, Any] | None:
        ref, argument, context = params.get("ref"), params.get("argument"), params.get("context")
        if not isinstance(ref, Mapping) or ref.get("type") != "ref/prompt" or not isinstance(argument, Mapping):
            return None
        spec = self._spec(ref.get("name"))
        if spec is None:
            return None
        chosen = context.get("arguments") if isinstance(context, Mapping) else None
        found = complete_argument(spec, str(argument["name"]), str(argument["value"]), chosen)
        completion = to_mcp_completion(found).model_dump(by_alias=True, mode="json", exclude_none=True)
        return self._stamped({"completion": completion})

    def _stamped(self, result: dict[str, Any]) -> dict[str, Any]:
        # What the SDK's shaping adds to a 2026-07-28 result: its type, and the server's identity in `_meta`.
        result["resultType"] = "complete"
        meta = result.get("_meta")
        if meta is None:
            result["_meta"] = {SERVER_INFO_META_KEY: self._stamp}
        elif meta.get(SERVER_INFO_META_KEY) is None:  # a stamp the prompt's metadata sets itself stays
            result["_meta"] = {**meta, SERVER_INFO_META_KEY: self._stamp}
        return result
