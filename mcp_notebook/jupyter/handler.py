"""`<base_url>mcp` on a Jupyter server: MCP over Streamable HTTP, behind the server's own login.

An `APIHandler`, so every rule of the Jupyter server applies before a byte
reaches MCP: its identity provider (the token, in the `Authorization: token …`
header or the `?token=` parameter, the login cookie, JupyterHub's OAuth),
its authorizer (reading contents), its Host and Origin rules, XSRF for
cookie-authenticated posts. Refusals are Jupyter's own (403, 404 for a
foreign origin), but for one: a request that carries no credential Jupyter
accepts is answered 401 with what to send, where Jupyter would say "'_xsrf'
argument missing" (its cookie login's check, for a client that never meant to
log in) or a bare 403. What passes is relayed to the MCP application, without
the credentials, which are Jupyter's business.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

import anyio
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from ..interrupts import interrupts_pass
from ..transports.gate import MCP_PATH
from .bridge import Relay
from .host import NotebookHost

__all__ = ["READY_SECONDS", "MCPHandler", "token_advice"]

READY_SECONDS = 30.0  # a request that comes while the notebooks are first read waits this long for them

# Acted on by the Jupyter server already; MCP never needs them.
_WITHHELD = ("authorization", "cookie", "origin")

_Method = TypeVar("_Method", bound=Callable[..., Any])
# Every MCP request only reads notebooks, whatever its HTTP method: the contents API's "read" permission.
_reads_contents = cast(Callable[[_Method], _Method], authorized(action="read", resource="contents"))


def _signed_in(method: Callable[[MCPHandler], Awaitable[None]]) -> Callable[[MCPHandler], Awaitable[None]]:
    """`tornado.web.authenticated`'s rule (no user, no entry), answered with a 401 saying which token to send."""

    @functools.wraps(method)
    async def checked(self: MCPHandler) -> None:
        if not self.current_user:
            raise self._token_needed()
        await method(self)

    return checked


def token_advice(endpoint: str, *, sent: bool, token_page: str | None = None) -> str:
    """What a client refused for want of credentials must send, and where it finds them (the 401's message).

    `token_page` is the hub's token page under JupyterHub, where each user makes their own.
    """
    what = "the token sent is not accepted here" if sent else "no token was sent"
    if token_page is not None:
        where = f"an API token of yours from the hub's token page ({token_page}); another user's is refused"
    else:
        where = (
            "the server's token: the one after ?token= in the URL that 'jupyter server list' prints, "
            "also in the server's log when it starts"
        )
    return (
        f"This Jupyter server needs a token, and {what}. Send the header 'Authorization: token <token>' "
        f"with {where}. 'mcp-notebook config --jupyter {endpoint}' prints the configuration "
        "for Claude Code, VS Code and Cursor."
    )


class MCPHandler(APIHandler):
    """Relays each request to the host's MCP application, once Jupyter has let it in."""

    auth_resource = "contents"  # MCP reads notebooks, as the contents API does

    def initialize(self, host: NotebookHost | None, problem: str | None = None) -> None:
        self.host = host
        self.problem = problem
        self._relay: Relay | None = None
        self._advice: str | None = None  # what a client refused for want of a token must send (the 401's body)

    async def prepare(self) -> None:  # type: ignore[override]  # as APIHandler.prepare
        try:
            await super().prepare()
        except web.HTTPError as refusal:
            # Jupyter found no user (prepare() has set `current_user`): whatever check spoke
            # (cookie XSRF, login redirect), the answer is the credential. A refused Host keeps its 403.
            if refusal.status_code == 403 and self.current_user is None and self.check_host():
                raise self._token_needed() from None
            raise

    def _token_needed(self) -> web.HTTPError:
        """The 401 for a request with no credential Jupyter accepts; `write_error` writes what to send."""
        request = self.request
        sent = bool(request.headers.get("Authorization")) or "token" in request.query_arguments
        endpoint = f"{request.protocol}://{request.host}{request.path}"
        # A single-user server of JupyterHub is told the hub's address in its environment.
        under_hub = "JUPYTERHUB_API_URL" in os.environ
        token_page = url_path_join(os.environ.get("JUPYTERHUB_BASE_URL") or "/", "hub/token") if under_hub else None
        self._advice = token_advice(endpoint, sent=sent, token_page=token_page)
        return web.HTTPError(401, "no credentials Jupyter accepts")

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        if status_code != 401 or self._advice is None:
            super().write_error(status_code, **kwargs)
            return
        # RFC 9110: a 401 names its scheme; Jupyter's is "token" (it takes "Bearer" too). The body is
        # shaped as Jupyter's API errors are, its message written as is (a URL may hold a '%').
        self.set_header("WWW-Authenticate", 'token realm="Jupyter Server"')
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"message": self._advice, "reason": None}))

    @interrupts_pass
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

    @_signed_in
    @_reads_contents
    async def get(self) -> None:
        """The event stream of a handshake-era session (list_changed and other notifications)."""
        await self._serve()

    @_signed_in
    @_reads_contents
    async def post(self) -> None:
        """One JSON-RPC message, answered as JSON or as an event stream."""
        await self._serve()

    @_signed_in
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
