"""SDK and transport errors of a prompt client, told in our error tree: once, at this edge.

`translated_errors` wraps each request; `connect_failure` explains why a
connection did not open, in terms of the configuration entry (a command
not found, a URL not reached). The SDK is imported when a request fails.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from ..config import ServerConfig
from ..exceptions import ServerConnectionError, ServerError

__all__ = ["connect_failure", "root_cause", "translated_errors"]


@contextlib.contextmanager
def translated_errors(
    server: str,
    method: str,
    *,
    request_timeout: float,
    stderr_hint: Callable[[], str],
    on_broken: Callable[[], None],
) -> Iterator[None]:
    """Turn SDK and transport errors raised by `method` on `server` into `ServerError` / `ServerConnectionError`.

    `on_broken` is called when the error shows the connection is gone;
    `stderr_hint()` is what the server wrote on stderr, told with it.
    """
    from mcp import MCPError
    from mcp.client import InputRequiredRoundsExceededError
    from mcp_types import CONNECTION_CLOSED
    from pydantic import ValidationError

    from ..protocol.sdk_seam import is_request_timeout

    try:
        yield
    except MCPError as error:
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


def connect_failure(config: ServerConfig, error: BaseException | None, *, stderr_hint: str) -> ServerConnectionError:
    """Why the connection to `config`'s server did not open: `error` ended it (None: it just closed)."""
    from mcp import MCPError

    if error is None:
        return ServerConnectionError(config.name, f"the connection closed while it was being opened.{stderr_hint}")
    cause = root_cause(error)
    where = f" (from {config.source})" if config.source else ""
    if isinstance(cause, FileNotFoundError) and config.command is not None:
        message = f"cannot start {config.command!r}: command not found. Install it, or fix 'command'{where}."
    elif isinstance(cause, PermissionError) and config.command is not None:
        message = f"cannot start {config.command!r}: permission denied{where}."
    elif isinstance(cause, MCPError):
        message = f"the server refused to connect: {cause.message} (code {cause.code}).{stderr_hint}"
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
