"""The bridge as JupyterLab starts it (through jupyter-lsp): the Jupyter server it runs under, and quick answers.

jupyter-lsp starts the bridge with two variables in its environment (set by
`mcp_notebook.jupyter.lsp_spec`):

* `MCP_NOTEBOOK_JUPYTER_SERVER_INFO`: the path of the Jupyter server's info
  file (`jpserver-<pid>.json`). Its URL and token name the server's own MCP
  endpoint, `<base_url>mcp`, which joins the configured servers as `jupyter`
  (ranked with them, before a kernel's magics).
* `MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE`: seconds an argument-value completion
  may wait for a server (0.2, as Tab on `%mcp` lines). A slower answer is not
  lost: it keeps coming in the background and answers the next request for
  the same value, while this one gets an empty, incomplete list (asked again
  as the user types).
* `MCP_NOTEBOOK_LSP_CLIENT=jupyterlab`: the editor is JupyterLab, whose
  completer needs completion items of its own shape (completion.py).

Without them (an editor started the bridge) nothing here changes anything.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerConnectionError
from mcp_notebook.models import CompletionResult, RenderedPrompt

from .pool import CatalogSnapshot, PromptCatalog, SnapshotListener

if TYPE_CHECKING:
    from mcp_notebook.client.skills import Skill, SkillContent

__all__ = [
    "CLIENT_ENV",
    "COMPLETION_DEADLINE_ENV",
    "HOST_SERVER_NAME",
    "INFO_FILE_ENV",
    "QuickCompletions",
    "completion_deadline",
    "host_server_config",
    "started_by_jupyterlab",
    "with_completion_deadline",
    "with_host_server",
]

log = logging.getLogger(__name__)

INFO_FILE_ENV = "MCP_NOTEBOOK_JUPYTER_SERVER_INFO"
COMPLETION_DEADLINE_ENV = "MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE"
CLIENT_ENV = "MCP_NOTEBOOK_LSP_CLIENT"
HOST_SERVER_NAME = "jupyter"
ENDPOINT = "mcp"
# How long a value list fetched in the background answers again without asking the server.
_FRESH = 10.0
_MAX_KEPT = 256


def host_server_config(environ: Mapping[str, str] | None = None) -> ServerConfig | None:
    """The MCP endpoint of the Jupyter server named by `$MCP_NOTEBOOK_JUPYTER_SERVER_INFO`, or None.

    A missing or unreadable info file is logged and ignored: the user's own
    servers and the kernels are still offered.
    """
    path = (os.environ if environ is None else environ).get(INFO_FILE_ENV)
    if not path:
        return None
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
        url = info["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url {url!r} is not an http(s) URL")
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("the Jupyter server's info file %s cannot be read (%s): its notebooks are not offered", path, error)
        return None
    token = info.get("token")
    headers = {"Authorization": f"token {token}"} if isinstance(token, str) and token else None
    return ServerConfig(
        name=HOST_SERVER_NAME, url=url.rstrip("/") + "/" + ENDPOINT, headers=headers, source=f"the Jupyter server {url}"
    )


def with_host_server(
    configs: Mapping[str, ServerConfig], environ: Mapping[str, str] | None = None
) -> dict[str, ServerConfig]:
    """`configs` and, under a Jupyter server, its endpoint as `jupyter` (`jupyter_` when a configured one has it)."""
    found = dict(configs)
    host = host_server_config(environ)
    if host is not None:
        name = HOST_SERVER_NAME
        while name in found:
            name += "_"
        found[name] = ServerConfig(name=name, url=host.url, headers=host.headers, source=host.source)
    return found


def started_by_jupyterlab(environ: Mapping[str, str] | None = None) -> bool:
    """True when `$MCP_NOTEBOOK_LSP_CLIENT` says the editor is JupyterLab (jupyter-lsp's spec sets it)."""
    return (os.environ if environ is None else environ).get(CLIENT_ENV, "").strip().lower() == "jupyterlab"


def completion_deadline(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds from `$MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE`, or None (unset or not a positive number)."""
    text = (os.environ if environ is None else environ).get(COMPLETION_DEADLINE_ENV, "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 3600:
        log.warning("%s=%r is not a number of seconds; completions wait as usual", COMPLETION_DEADLINE_ENV, text)
        return None
    return seconds


_Key = tuple[str, str, str, str, tuple[tuple[str, str], ...]]


class QuickCompletions:
    """A catalog whose value completions never wait longer than `deadline` seconds.

    Everything else goes to the catalog it wraps. A request that is not
    answered in time keeps running; its answer is kept (for a few seconds)
    for the next request with the same prompt, argument, text and context.
    """

    def __init__(self, catalog: PromptCatalog, deadline: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._catalog = catalog
        self._deadline = deadline
        self._clock = clock
        self._pending: dict[_Key, asyncio.Task[CompletionResult]] = {}
        self._kept: dict[_Key, tuple[float, CompletionResult]] = {}

    def snapshot(self) -> CatalogSnapshot:
        return self._catalog.snapshot()

    def add_listener(self, listener: SnapshotListener) -> Callable[[], None]:
        return self._catalog.add_listener(listener)

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt:
        return await self._catalog.get_prompt(server, prompt, arguments)

    async def read_skill(self, server: str, skill: Skill) -> SkillContent:
        return await self._catalog.read_skill(server, skill)

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult:
        key: _Key = (server, prompt, argument, value, tuple(sorted(context.items())))
        kept = self._kept.get(key)
        if kept is not None and self._clock() - kept[0] < _FRESH:
            return kept[1]
        task = self._pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self._catalog.complete(server, prompt, argument, value, context))
            self._pending[key] = task
            task.add_done_callback(lambda done: self._keep(key, done))
        done, _ = await asyncio.wait({task}, timeout=self._deadline)
        if not done:
            raise ServerConnectionError(server, f"no values within {self._deadline:g} s; they answer the next request")
        return task.result()

    def _keep(self, key: _Key, task: asyncio.Task[CompletionResult]) -> None:
        self._pending.pop(key, None)
        if task.cancelled() or task.exception() is not None:
            return  # the caller that waited saw it; a later one asks again
        if len(self._kept) >= _MAX_KEPT:
            self._kept.pop(next(iter(self._kept)))
        self._kept[key] = (self._clock(), task.result())


def with_completion_deadline(catalog: PromptCatalog, environ: Mapping[str, str] | None = None) -> PromptCatalog:
    """`catalog` behind `QuickCompletions` when `$MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE` says so; else itself."""
    deadline = completion_deadline(environ)
    return catalog if deadline is None else QuickCompletions(catalog, deadline)
