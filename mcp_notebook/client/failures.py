"""SDK and transport errors of a prompt client, told in our error tree: once, at this edge.

`translated_errors` wraps each request; `every_page` reads a paginated list,
its cursors checked; `connect_failure` explains why a
connection did not open, in terms of the configuration entry (a command
not found, a URL not reached, a credential refused). An HTTP server's 401 or
403 always becomes `refusal_message`: the URL, the status, what the server
said, and which token to send. The SDK is imported when a request fails.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from ..config import ServerConfig
from ..exceptions import ServerConnectionError, ServerError
from .transport_choice import Refusal

__all__ = ["connect_failure", "every_page", "refusal_message", "root_cause", "translated_errors"]

_MAX_PAGES = 1000  # a listing that never ends must not hang the caller


async def every_page(server: str, method: str, fetch: Callable[[str | None], Awaitable[Any]]) -> list[Any]:
    """Every page of the paginated `method` (`fetch` reads the one at a cursor); cursors that repeat or never
    end are a `ServerError`."""
    pages: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        pages.append(await fetch(cursor))
        cursor = pages[-1].next_cursor
        # A present cursor (even "") means more pages; a repeated one would loop forever.
        if cursor is None:
            return pages
        if cursor in (page.next_cursor for page in pages[:-1]):
            raise ServerError(f"{server}: {method} returned the cursor {cursor!r} twice")
    raise ServerError(f"{server}: {method} did not end after {_MAX_PAGES} pages")


_WHICH_TOKEN = (
    "Send the server's token: a Jupyter server's as 'Authorization: token <token>' (the token after ?token= "
    "in the URL 'jupyter server list' prints; 'mcp-notebook config --jupyter URL' prints the client "
    "configuration), an 'mcp-notebook serve --http' server's as 'Authorization: Bearer <token>'."
)


def refusal_message(config: ServerConfig, refusal: Refusal, *, during: str = "the connection") -> str:
    """Why an HTTP server refused `during`: its status and words first, then whose header it was, and which
    token to send when the server said nothing about one."""
    text = f"{config.url} refused {during} (HTTP {refusal.status_line})"
    if refusal.message:
        text += f": {refusal.message.rstrip('.')}."
    else:
        text += "."
    sent = any(name.lower() == "authorization" for name in config.headers or {})
    if not sent:
        text += " No Authorization header was sent."
    elif config.source:
        text += f" The Authorization header was given in {config.source}."
    if not refusal.message or "token" not in refusal.message.lower():
        text += f" {_WHICH_TOKEN}"
    return text


@contextlib.contextmanager
def translated_errors(
    server: str,
    method: str,
    *,
    request_timeout: float,
    stderr_hint: Callable[[], str],
    on_broken: Callable[[], None],
    refusal: Callable[[], Refusal | None] = lambda: None,
    config: ServerConfig | None = None,
) -> Iterator[None]:
    """Turn SDK and transport errors raised by `method` on `server` into `ServerError` / `ServerConnectionError`.

    `on_broken` is called when the error shows the connection is gone;
    `stderr_hint()` is what the server wrote on stderr, told with it;
    `refusal()` the HTTP refusal behind an error, if there was one (told in terms of `config`).
    """
    from mcp import MCPError
    from mcp.client import InputRequiredRoundsExceededError
    from mcp_types import CONNECTION_CLOSED
    from pydantic import ValidationError

    from ..protocol.sdk_seam import is_request_timeout

    try:
        yield
    except MCPError as error:
        refused = refusal()
        if refused is not None and config is not None:
            raise ServerConnectionError(server, refusal_message(config, refused, during=method)) from error
        if error.code == CONNECTION_CLOSED:
            on_broken()
            raise ServerConnectionError(
                server, f"the connection closed during {method}.{stderr_hint()} Try again to reconnect."
            ) from error
        if is_request_timeout(error):
            raise ServerConnectionError(
                server,
                f"no answer to {method} within {request_timeout:g} s. The server may be busy or stuck: "
                "try again, raise the timeout, or disconnect and reconnect it.",
            ) from error
        raise ServerError(f"{server}: {error.message}", error.code, error.data) from error
    except ValidationError as error:
        raise ServerError(f"{server}: invalid answer to {method}: {error}") from error
    except InputRequiredRoundsExceededError as error:
        raise ServerError(f"{server}: {method} kept asking for input: {error}") from error
    except (OSError, EOFError) as error:
        on_broken()
        raise ServerConnectionError(server, f"the connection failed during {method}: {error}") from error


def connect_failure(
    config: ServerConfig, error: BaseException | None, *, stderr_hint: str, refusal: Refusal | None = None
) -> ServerConnectionError:
    """Why the connection to `config`'s server did not open: `error` ended it (None: it just closed).

    `refusal` is the server's 401 or 403 when there was one: that, not the SDK's stand-in error, is the cause.
    """
    from mcp import MCPError

    if refusal is not None and config.url is not None:
        return ServerConnectionError(config.name, refusal_message(config, refusal))
    if error is None:
        return ServerConnectionError(config.name, f"the connection closed while it was being opened.{stderr_hint}")
    cause = root_cause(error)
    where = f" (from {config.source})" if config.source else ""
    if isinstance(cause, FileNotFoundError) and config.command is not None:
        message = f"cannot start {config.command!r}: command not found. Install it, or fix 'command'{where}."
    elif isinstance(cause, PermissionError) and config.command is not None:
        message = f"cannot start {config.command!r}: permission denied{where}."
    elif isinstance(cause, MCPError):
        message = f"{config.describe()} refused to connect: {cause.message} (code {cause.code}).{stderr_hint}"
    elif config.url is not None:
        message = f"cannot reach {config.url}: {cause}. Is the server running, and are the URL and headers right?"
    else:
        message = (
            f"the server {config.describe()!r} stopped before answering: {cause or type(cause).__name__}.{stderr_hint}"
        )
    return ServerConnectionError(config.name, message)


def root_cause(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (task groups wrap what really failed)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
