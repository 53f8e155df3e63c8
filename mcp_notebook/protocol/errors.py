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
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, Final, TypeVar

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from ..exceptions import PathOutsideRootError, PromptError, PromptExecutionError, ResourceError
from .revisions import is_modern

__all__ = ["RESOURCE_NOT_FOUND", "guarded", "to_mcp_error"]

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
