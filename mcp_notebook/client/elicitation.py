"""A server asking the user for input (elicitation), as our `InputRequest`, answered by an `InputHandler`.

The handler runs in the context of the request that caused the question, so
it can reach its caller (the cell whose output shows a form). Only the
standard library is imported here up front.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types
    from mcp.client.context import ClientRequestContext

__all__ = ["InputHandler", "InputRequest", "ask_user"]


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


async def ask_user(
    handler: InputHandler,
    context: ClientRequestContext,
    params: mcp_types.ElicitRequestParams,
    *,
    run_context: contextvars.Context,
) -> mcp_types.ElicitResult:
    """Answer the server's elicitation `params` with `handler`, run in (a copy of) `run_context`."""
    import anyio
    from mcp_types import ElicitRequestURLParams, ElicitResult

    if isinstance(params, ElicitRequestURLParams):
        request = InputRequest(params.message, {}, str(context.request_id), url=params.url)
    else:
        request = InputRequest(params.message, dict(params.requested_schema), str(context.request_id))
    answers: list[Mapping[str, Any] | None] = []
    failures: list[Exception] = []

    async def ask() -> None:
        # The handler's own errors come out as themselves, not wrapped in the task group's group.
        try:
            answers.append(await handler(request))
        except Exception as error:
            failures.append(error)

    async with anyio.create_task_group() as tasks:
        # A task started while `run_context` is current runs in a copy of it.
        run_context.run(tasks.start_soon, ask)
    if failures:
        raise failures[0]
    answer = answers[0]
    if answer is None:
        return ElicitResult(action="decline")
    return ElicitResult(action="accept", content=None if request.url else dict(answer))
