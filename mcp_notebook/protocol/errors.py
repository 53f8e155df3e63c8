"""Our exceptions as JSON-RPC errors: the one place the server translates them.

| raised                         | code    | when                                            |
|--------------------------------|---------|-------------------------------------------------|
| `PromptError` (unknown prompt, missing/unknown/too large argument, bad cursor) | -32602 | bad input |
| `PathOutsideRootError`         | -32602  | a path that escapes the served folder           |
| `ResourceError` on `resources/read` | -32002 up to 2025-11-25, -32602 at 2026-07-28 | not found |
| `ResourceError` elsewhere      | -32603  | a prompt's embedded file cannot be read         |
| `PromptExecutionError`         | -32603  | a prompt that runs something (a live magic) failed; its message is kept |
| anything else                  | -32603  | a bug; logged with its traceback, message kept generic |

`data` carries the structured details (`PromptError.data()`, the URI).

`ErrorShaper`, the server's outermost middleware, shapes what the SDK
itself answers: a request before `initialize` gets -32600 saying so (the
SDK answers an empty -32602), params that fail the schema get -32602 naming
the first problem in a few words (not a validation dump, and never the
value), and every error's message and `data` are capped, so an error
never quotes a huge argument or URI back in full.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, Final, TypeVar

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from pydantic import ValidationError

from ..exceptions import PathOutsideRootError, PromptError, PromptExecutionError, ResourceError
from .revisions import is_modern
from .screening import excerpt
from .sdk_seam import initialize_accepted

__all__ = ["RESOURCE_NOT_FOUND", "ErrorShaper", "capped", "guarded", "invalid_params", "to_mcp_error"]

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND: Final = -32002
"""Resource not found, up to 2025-11-25 (2026-07-28 retired it in favour of -32602)."""

ParamsT = TypeVar("ParamsT")
R = TypeVar("R")


def to_mcp_error(exc: BaseException, *, revision: str, method: str) -> MCPError:
    """The JSON-RPC error a client gets for `exc`, raised while serving `method` at `revision`."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, PromptError):
        return MCPError(INVALID_PARAMS, str(exc), exc.data())
    if isinstance(exc, PathOutsideRootError):
        return MCPError(INVALID_PARAMS, str(exc), {"uri": exc.uri, "path": exc.path})
    if isinstance(exc, ResourceError):
        data: dict[str, Any] = {"uri": exc.uri}
        if method == "resources/read":
            code = INVALID_PARAMS if is_modern(revision) else RESOURCE_NOT_FOUND
            return MCPError(code, str(exc) or f"Resource not found: {exc.uri}", data)
        return MCPError(INTERNAL_ERROR, str(exc), data)
    if isinstance(exc, PromptExecutionError):
        return MCPError(INTERNAL_ERROR, str(exc), exc.data())
    log.error("%s failed", method, exc_info=(type(exc), exc, exc.__traceback__))
    return MCPError(INTERNAL_ERROR, f"Internal error while serving {method}; the server log has the details")


def guarded(
    method: str, handler: Callable[[ServerRequestContext[Any, Any], ParamsT], Awaitable[R]]
) -> Callable[[ServerRequestContext[Any, Any], ParamsT], Awaitable[R]]:
    """`handler` with every exception turned into a proper JSON-RPC error.

    Without this the SDK answers a stray exception with code 0 on handshake
    sessions; with it the client always learns what went wrong, and the
    server keeps serving after any failure.
    """

    @wraps(handler)
    async def run(ctx: ServerRequestContext[Any, Any], params: ParamsT) -> R:
        try:
            return await handler(ctx, params)
        except Exception as exc:
            raise to_mcp_error(exc, revision=ctx.protocol_version, method=method) from exc

    return run


MESSAGE_CHARS: Final = 200
"""The longest error message sent; client input inside it is quoted shorter still (`screening.excerpt`)."""
_DATA_ITEMS: Final = 20
_DATA_DEPTH: Final = 4
_BEFORE_INITIALIZE: Final = frozenset({"initialize", "ping"})


def _capped_data(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return excerpt(value)
    if depth >= _DATA_DEPTH:
        return excerpt(repr(value))
    if isinstance(value, dict):
        items = list(value.items())[:_DATA_ITEMS]
        return {excerpt(str(key)): _capped_data(item, depth + 1) for key, item in items}
    if isinstance(value, list | tuple):
        return [_capped_data(item, depth + 1) for item in value[:_DATA_ITEMS]]
    return value


def capped(error: MCPError) -> MCPError:
    """`error` with its message and `data` cut to a size that never echoes a large input."""
    message = error.error.message
    if len(message) > MESSAGE_CHARS:
        message = excerpt(message, MESSAGE_CHARS)
    return MCPError(error.error.code, message, _capped_data(error.error.data))


def _described(problem: ValidationError) -> str:
    """The first schema problem in a few words: where (`params.name`) and what, never the value."""
    errors = problem.errors(include_url=False, include_input=False)
    if not errors:
        return "they do not match the schema"
    first = errors[0]
    where = ".".join(excerpt(str(part), 40) for part in first["loc"]) or "params"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def invalid_params(method: str, problem: ValidationError) -> MCPError:
    """The error for params of `method` that fail the schema: the first problem in a few words."""
    return MCPError(INVALID_PARAMS, f"Invalid params for {excerpt(method)}: {_described(problem)}")


class ErrorShaper:
    """Server middleware: clear errors for requests before `initialize` and bad params; caps every error."""

    def __init__(self, server: Server[Any]) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if (
            method not in _BEFORE_INITIALIZE
            and not is_modern(ctx.protocol_version)
            and not initialize_accepted(ctx.session)  # stateless HTTP sessions are born initialized
            and self.server.get_request_handler(method) is not None  # unknown methods stay -32601, as probes expect
        ):
            raise MCPError(
                INVALID_REQUEST,
                f"Not initialized: send 'initialize' (then 'notifications/initialized') before '{excerpt(method)}'",
                {"reason": "not initialized"},
            )
        try:
            return await call_next(ctx)
        except ValidationError as problem:
            raise invalid_params(method, problem) from None
        except MCPError as error:
            raise capped(error) from error.__cause__
