"""The one module that knows the MCP SDK's private and provisional parts; everything else imports from here.

The SDK (`mcp`, tested: `TESTED_MINORS`) offers no public API for these,
so each is named here once, with why it is needed; each has a canary test
in `tests/protocol/test_sdk_seam.py` that fails with the SDK version and
the touchpoint when a release changes it.

Touchpoints (where used: why):

* `mcp.shared._context_streams` (transports/pipes.py): the streams the SDK's
  serving loop restores each sender's context from;
* `mcp.shared._stream_protocols` (transports/pipes.py, stdio.py, kernel_proxy.py): the
  read/write stream types `Server.run` takes;
* `mcp.shared._httpx_utils` (client/transport_choice.py, kernel_proxy.py): an HTTP client with
  the SDK transports' timeouts (`create_http_client`);
* `ServerSession._connection` (protocol/changes.py, errors.py): the only
  handle on when a handshake connection ends (`connection_of`) and on whether
  it is past `initialize` (`initialize_accepted`);
* `Server.middleware`, provisional (protocol/server.py): shaping errors and
  results around every handler (`add_middleware`);
* the SDK's "timed out" message (client/failures.py): telling a request timeout from
  other -32001 errors (`is_request_timeout`);
* pydantic's `json_invalid` error type (transports/stdio.py): telling
  unparsable lines from invalid messages on the SDK's own stdio transport
  (`is_json_invalid`);
* the `__init__` of `mcp` and `mcp.server` (lazy_packages.py, commands/serve.py):
  importing only the submodules serving needs (`DEFERRED_PACKAGES`; the
  same names are `lazy_packages.SDK_PACKAGE_INITS`, used before any SDK import);
* `StreamableHTTPSessionManager._admit_session`, `._server_instances` and
  `._session_owners` (transports/sessions.py): making room at the session
  cap by ending the least recently used idle session (`admit_session`,
  `open_sessions`, `session_owners`; the override keeps the SDK's name).
* `ServerRunner._serialize` (protocol/listing.py): a result shaped for the
  wire exactly as the SDK shapes a handler's (`shape_result`), for pages
  prepared once and answered without the SDK shaping them again (canary:
  `tests/protocol/test_sdk_seam_listing.py`).

Re-implemented rather than reached into, each behind its transport with a
differential test against the SDK's own: the stdio fd claim
(transports/pipes.py) and the Host/Origin gate (transports/hosts.py).
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT
from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    import httpx2
    from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = [
    "DEFERRED_PACKAGES",
    "TESTED_MINORS",
    "ContextReceiveStream",
    "ContextSendStream",
    "ReadStream",
    "WriteStream",
    "add_middleware",
    "admit_session",
    "check_session_manager",
    "connection_of",
    "create_context_streams",
    "create_http_client",
    "initialize_accepted",
    "is_json_invalid",
    "is_request_timeout",
    "open_sessions",
    "sdk_version",
    "session_owners",
    "shape_result",
]

log = logging.getLogger(__name__)
_reported: set[str] = set()  # each moved touchpoint found at run time is logged once per process

TESTED_MINORS: Final = ("2.3",)
"""The `mcp` minor releases this code is tested with (pinned in pyproject.toml)."""

DEFERRED_PACKAGES: Final = ("mcp", "mcp.server")
"""Packages whose `__init__` imports the whole SDK; `serve` defers them (`lazy_packages.SDK_PACKAGE_INITS`,
the same names where they are needed before any SDK import; a canary checks the two agree)."""


def sdk_version() -> str:
    """The installed `mcp` version."""
    return importlib.metadata.version("mcp")


def _moved(touchpoint: str) -> str:
    """What to say when `touchpoint` is not what this code was tested with."""
    return (
        f"mcp {sdk_version()} (mcp-notebook is tested with mcp {', '.join(TESTED_MINORS)}): "
        f"the SDK touchpoint {touchpoint} moved or changed"
    )


try:
    from mcp.shared._context_streams import ContextReceiveStream, ContextSendStream, create_context_streams
    from mcp.shared._stream_protocols import ReadStream, WriteStream
except ImportError as error:  # a newer SDK moved a private module: say which, not just "no module named"
    raise ImportError(_moved(error.name or "mcp.shared"), name=error.name) from error

TIMEOUT_TEXT: Final = "timed out"
JSON_INVALID: Final = "json_invalid"


def create_http_client(headers: dict[str, str] | None = None) -> httpx2.AsyncClient:
    """An HTTP client with the timeouts the SDK's own transports use (imported on first use: httpx is heavy)."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    return create_mcp_http_client(headers=headers)


def connection_of(session: ServerSession) -> Connection | None:
    """The connection behind a handler's session; its exit stack is the only signal that it ended.

    Every `ServerSession` of a tested SDK has one. None means the SDK moved it:
    change notifications to handshake clients then stop, so that is logged as
    an error (once), naming the SDK version, rather than passing in silence.
    """
    connection = getattr(session, "_connection", None)
    if isinstance(connection, Connection):
        return connection
    touchpoint = "ServerSession._connection"
    if isinstance(session, ServerSession) and touchpoint not in _reported:
        _reported.add(touchpoint)
        log.error("%s; list_changed notifications to handshake clients are off", _moved(touchpoint))
    return None


def initialize_accepted(session: ServerSession) -> bool:
    """Whether the SDK serves requests on this session (the handshake is done, or the connection needs none)."""
    connection = connection_of(session)
    return connection is None or connection.initialize_accepted


def add_middleware(server: Server[Any], middleware: Sequence[Any]) -> None:
    """Run `middleware` (outermost first) around every request handler of `server`."""
    server.middleware += list(middleware)


def is_request_timeout(error: MCPError) -> bool:
    """Whether the SDK client raised `error` because a request got no answer in time."""
    return error.error.code == REQUEST_TIMEOUT and TIMEOUT_TEXT in error.error.message


def is_json_invalid(problem: ValidationError) -> bool:
    """Whether pydantic refused a line because it is not JSON at all (rather than not a message)."""
    details = problem.errors()
    return bool(details) and details[0]["type"] == JSON_INVALID


def admit_session(
    manager: StreamableHTTPSessionManager, requestor: AuthorizationContext | None
) -> StreamableHTTPServerTransport | None:
    """The SDK's own admission of a new handshake session: registered and returned, or None at the cap.

    The manager calls `_admit_session` for every new session; a subclass
    overriding it calls this for what the SDK does.
    """
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # starlette: not for stdio

    return StreamableHTTPSessionManager._admit_session(manager, requestor)


def open_sessions(manager: StreamableHTTPSessionManager) -> dict[str, StreamableHTTPServerTransport]:
    """The manager's live handshake sessions by ID: the table it routes each request by."""
    return manager._server_instances


def session_owners(manager: StreamableHTTPSessionManager) -> dict[str, AuthorizationContext]:
    """Who opened each session (with authentication): only that credential may use it."""
    return manager._session_owners


def check_session_manager(manager: StreamableHTTPSessionManager) -> bool:
    """Whether `manager` still has the admission hook and tables; if not, logged as an error (once).

    A subclass's `_admit_session` that the SDK no longer calls would leave the
    session cap without its least-recently-used eviction, in silence.
    """
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    present = (
        callable(getattr(StreamableHTTPSessionManager, "_admit_session", None))
        and isinstance(getattr(manager, "_server_instances", None), dict)
        and isinstance(getattr(manager, "_session_owners", None), dict)
    )
    touchpoint = "StreamableHTTPSessionManager._admit_session / _server_instances / _session_owners"
    if not present and touchpoint not in _reported:
        _reported.add(touchpoint)
        log.error("%s; idle sessions are not evicted at the session cap", _moved(touchpoint))
    return present


def shape_result(server: Server[Any], method: str, version: str, result: dict[str, Any] | BaseModel) -> dict[str, Any]:
    """`result` as the SDK puts a handler's result on the wire at `version`: hints, per-revision fields, stamps."""
    from mcp.server.runner import ServerRunner

    # The shaping reads only the server (its cache hints and identity), never the connection.
    runner = ServerRunner(server, cast(Any, None), None)
    return runner._serialize(method, version, result)
