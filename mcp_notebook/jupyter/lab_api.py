"""The JupyterLab extension's REST API at `<base_url>mcp-notebook/api/`: prompts, render, complete, notebook, names.

Jupyter `APIHandler`s, so Jupyter's login, authorizer and XSRF rules apply
before anything here runs (the frontend sends the token or the XSRF header
with `ServerConnection.makeRequest`). JSON in, JSON out; a refusal is
`{"message": "what went wrong and what to do"}` with a 4xx or 5xx status.
The browser is given prompt lists, states and rendered text; the MCP
clients, their commands, headers and tokens stay in this process
(`lab_api_catalog.LabCatalog`).

* `GET prompts[?magics=1][&since=N]`: the last known lists at once;
  `since` waits (up to `LONG_POLL_SECONDS`) for a version after N.
* `POST render`: one prompt rendered, as messages and as Markdown.
* `POST complete`: values for one argument, within 0.2 s.
* `GET notebook?path=`: what an open notebook publishes since its last save.
* `POST check-name`: whether a name is a valid prompt name, and a valid one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..exceptions import MCPNotebookError, ServerConnectionError, ServerError
from ..models import RenderedPrompt
from ..naming import fit_name, is_valid_name
from ..transcript import Layout, to_transcript
from ..worker_threads import run_off_loop
from .host import NotebookHost
from .lab_api_catalog import HOST_NAME, LabCatalog
from .lab_api_notebook import notebook_report

__all__ = ["API_PATH", "LONG_POLL_SECONDS", "LabState", "lab_api_handlers"]

API_PATH = "mcp-notebook/api"  # below the server's base URL
LONG_POLL_SECONDS = 10.0
_LARGE_LISTING = 500  # prompts above which a listing is written in a worker thread
_MAX_VALUE = 100_000  # characters of a typed value sent for completion

# The Markdown a rendered prompt is inserted as: the editor bridge's layout (one transcript writer).
MARKDOWN = Layout(
    blocks="markdown",
    sections="turn",
    headings="when-speakers-differ",
    heading="markdown",
    media="placeholder",
    trim=True,
)

_Method = TypeVar("_Method", bound=Callable[..., Any])
# Listing and rendering prompts reads what the user may read: the contents API's "read" permission.
_reads = cast(Callable[[_Method], _Method], authorized(action="read", resource="contents"))


def _refused(status: int, message: str) -> web.HTTPError:
    """A refusal whose message is written as is (a `%` in it is no format)."""
    return web.HTTPError(status, "%s", message)


class _LabHandler(APIHandler):
    auth_resource = "contents"

    def initialize(self, lab: LabState) -> None:
        self.lab = lab

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        if not isinstance(error, web.HTTPError) or error.log_message != "%s" or not error.args:
            super().write_error(status_code, **kwargs)
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"message": str(error.args[0]), "reason": None}))

    def catalog(self) -> LabCatalog:
        if self.lab.catalog is None:
            raise _refused(503, "the MCP prompt lists are not running yet; try again in a moment")
        return self.lab.catalog

    def body(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"null")
        except ValueError:
            raise _refused(400, "the request body is not JSON: send a JSON object") from None
        if not isinstance(body, dict):
            raise _refused(400, "the request body must be a JSON object")
        return body

    def answer(self, data: Mapping[str, Any] | bytes) -> None:
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(data if isinstance(data, bytes) else json.dumps(data))


def _text(body: Mapping[str, Any], key: str, *, required: bool = True, limit: int = 1000) -> str:
    value = body.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise _refused(400, f"{key!r} must be a non-empty string")
    if len(value) > limit:
        raise _refused(400, f"{key!r} is longer than {limit} characters")
    return value


def _strings(body: Mapping[str, Any], key: str) -> dict[str, str]:
    value = body.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _refused(400, f"{key!r} must be an object of strings (argument name → value)")
    return {str(k): v for k, v in value.items()}


class PromptsHandler(_LabHandler):
    @web.authenticated
    @_reads
    async def get(self) -> None:
        """Every server's state and prompts as last known; never waits for a server."""
        catalog = self.catalog()
        magics = self.get_argument("magics", "0").strip().lower() in ("1", "true", "yes")
        since = self.get_argument("since", None)
        if since is not None:
            try:
                version = int(since)
            except ValueError:
                raise _refused(400, f"since={since!r} must be a version number from an earlier answer") from None
            catalog.refresh_soon()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(LONG_POLL_SECONDS):
                    await catalog.wait_past(version)
        await catalog.settle()
        catalog.refresh_soon()
        self.answer(await self.lab.listing(catalog, magics))


class RenderHandler(_LabHandler):
    @web.authenticated
    @_reads
    async def post(self) -> None:
        """One prompt rendered: its messages, and the Markdown to insert."""
        body = self.body()
        server, prompt = _text(body, "server"), _text(body, "prompt")
        arguments = _strings(body, "arguments")
        rendered = await _asking(server, lambda: self.catalog().render(server, prompt, arguments))
        self.answer(
            {
                "messages": [
                    {"role": message.role, "text": to_transcript(RenderedPrompt(messages=(message,)), MARKDOWN)}
                    for message in rendered.messages
                ],
                "markdown": to_transcript(rendered, MARKDOWN),
            }
        )


class CompleteHandler(_LabHandler):
    @web.authenticated
    @_reads
    async def post(self) -> None:
        """Values for one argument; an empty list when the server offers none or does not answer in 0.2 s."""
        body = self.body()
        server, prompt, argument = _text(body, "server"), _text(body, "prompt"), _text(body, "argument")
        value = _text(body, "value", required=False, limit=_MAX_VALUE)
        context = _strings(body, "context")
        catalog = self.catalog()
        result = await _asking(server, lambda: catalog.complete(server, prompt, argument, value, context))
        if result is None:  # not in time: asked again as the user types, the late answer is kept for that
            self.answer({"values": [], "hasMore": False, "total": 0, "pending": True})
            return
        self.answer({"values": list(result.values), "hasMore": result.has_more, "total": result.total})


class NotebookHandler(_LabHandler):
    @web.authenticated
    @_reads
    async def get(self) -> None:
        """What the notebook at `path` publishes, as of its last save, and what is wrong with it."""
        path = self.get_argument("path", "")
        if not path:
            raise _refused(400, "give the notebook's path: notebook?path=<path as the contents API has it>")
        host = self.lab.host
        if host is None:
            raise _refused(503, f"this server's notebooks are not served: {self.lab.host_problem}")
        problem = await host.wait_ready()
        if problem is not None:
            raise _refused(503, f"this server's notebooks are not served: {problem}")
        served_as = self.lab.catalog.host_name if self.lab.catalog is not None else HOST_NAME
        try:
            report = await run_off_loop(
                notebook_report, host, self.lab.server_root, path, served_as, abandon_on_cancel=True
            )
        except LookupError as error:
            raise _refused(404, str(error)) from None
        self.answer(report)


class CheckNameHandler(_LabHandler):
    @web.authenticated
    @_reads
    async def post(self) -> None:
        """Whether `name` is a valid prompt name (naming.py's rule), and a valid one close to it."""
        name = self.body().get("name")
        if not isinstance(name, str):
            raise _refused(400, "'name' must be a string")
        if is_valid_name(name):
            self.answer({"ok": True, "message": "", "suggestion": name})
            return
        suggestion = fit_name(name)
        why = (
            "a prompt name is 1 to 64 letters, digits, '_', '.' or '-' (no spaces), "
            "so that every client can show it as a slash command"
        )
        self.answer({"ok": False, "message": why, "suggestion": suggestion})


async def _asking(server: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """`call()`'s answer; a server's refusal as 400, a server that cannot be reached as 503, silence as 504."""
    try:
        return await call()
    except ServerConnectionError as error:
        raise _refused(503, f"{error} (see its state in the prompts panel)") from None
    except TimeoutError:
        raise _refused(504, f"{server} did not answer in time; try again") from None
    except (ServerError, MCPNotebookError) as error:
        raise _refused(400, str(error)) from None


class LabState:
    """What every handler shares: the catalog (once started), this server's notebooks, its root folder."""

    def __init__(self, host: NotebookHost | None, host_problem: str | None, server_root: Path) -> None:
        self.host = host
        self.host_problem = host_problem
        self.server_root = server_root
        self.catalog: LabCatalog | None = None
        self._listings: dict[tuple[int, bool, bool], bytes] = {}

    async def listing(self, catalog: LabCatalog, magics: bool) -> bytes:
        """The listing's JSON as it is now, written once per change (in a worker thread when it is large)."""
        key = (catalog.version, magics, catalog.refreshing)
        found = self._listings.get(key)
        if found is not None:
            return found

        def write() -> bytes:
            return json.dumps(catalog.listing(magics=magics), separators=(",", ":")).encode()

        data = await run_off_loop(write, abandon_on_cancel=True) if catalog.prompt_count() > _LARGE_LISTING else write()
        self._listings = {key: data, **{k: v for k, v in self._listings.items() if k[0] == key[0]}}
        return data


def lab_api_handlers(lab: LabState) -> list[tuple[str, type[_LabHandler], dict[str, Any]]]:
    """The API's routes below the base URL, for `ExtensionApp.handlers`."""
    routes: list[tuple[str, type[_LabHandler]]] = [
        ("prompts", PromptsHandler),
        ("render", RenderHandler),
        ("complete", CompleteHandler),
        ("notebook", NotebookHandler),
        ("check-name", CheckNameHandler),
    ]
    return [(f"/{API_PATH}/{path}", handler, {"lab": lab}) for path, handler in routes]
