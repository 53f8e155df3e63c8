"""`<base_url>mcp` on a Jupyter server: MCP over Streamable HTTP, behind the server's own login.

An `APIHandler`, so every rule of the Jupyter server applies before a byte
reaches MCP: its identity provider (the token, in the `Authorization: token …`
header or the `?token=` parameter, the login cookie, JupyterHub's OAuth),
its authorizer (reading contents), its Host and Origin rules, XSRF for
cookie-authenticated posts. Refusals are Jupyter's own (403, 404 for a
foreign origin). What passes is relayed to the MCP application, without the
credentials, which are Jupyter's business.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import anyio
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..transports.http import MCP_PATH
from .bridge import Relay
from .host import NotebookHost

__all__ = ["READY_SECONDS", "MCPHandler"]

READY_SECONDS = 30.0  # a request that comes while the notebooks are first read waits this long for them

# Acted on by the Jupyter server already; MCP never needs them.
_WITHHELD = ("authorization", "cookie", "origin")

_Method = TypeVar("_Method", bound=Callable[..., Any])
# Every MCP request only reads notebooks, whatever its HTTP method: the contents API's "read" permission.
_reads_contents = cast(Callable[[_Method], _Method], authorized(action="read", resource="contents"))


class MCPHandler(APIHandler):
    """Relays each request to the host's MCP application, once Jupyter has let it in."""

    auth_resource = "contents"  # MCP reads notebooks, as the contents API does

    def initialize(self, host: NotebookHost | None, problem: str | None = None) -> None:
        self.host = host
        self.problem = problem
        self._relay: Relay | None = None

    async def _serve(self) -> None:
        problem = self.problem
        if self.host is not None:
            with anyio.move_on_after(READY_SECONDS) as waiting:
                problem = await self.host.wait_ready()
            if waiting.cancelled_caught:
                problem = f"the notebooks under {self.host.root} are still being read; try again in a moment"
        if problem is not None or self.host is None:
            raise web.HTTPError(503, f"MCP prompts are not served here: {problem}")
        self._relay = Relay(self, path=MCP_PATH, withheld=_WITHHELD)
        await self._relay.run(self.host.app)

    @web.authenticated
    @_reads_contents
    async def get(self) -> None:
        """The event stream of a handshake-era session (list_changed and other notifications)."""
        await self._serve()

    @web.authenticated
    @_reads_contents
    async def post(self) -> None:
        """One JSON-RPC message, answered as JSON or as an event stream."""
        await self._serve()

    @web.authenticated
    @_reads_contents
    async def delete(self) -> None:
        """The end of a handshake-era session."""
        await self._serve()

    def on_connection_close(self) -> None:
        if self._relay is not None:
            self._relay.on_connection_close()

    def finish(self, *args: Any, **kwargs: Any) -> Any:
        # APIHandler would call every response JSON; an event stream must keep its own type.
        if self._relay is not None and self._relay.started:
            kwargs.setdefault("set_content_type", self._relay.content_type)
        return super().finish(*args, **kwargs)
