"""The MCP server a Jupyter server hosts: the notebooks of one folder, served by the one protocol core.

`NotebookHost` is what `mcp-notebook serve --http` runs, without the HTTP
server of its own: the folder source fills a registry, `create_server` serves
it, and `create_http_app` is the same Streamable HTTP application (and access gate
for JSON bodies) that uvicorn runs there. The Jupyter server's tornado
handlers relay requests to it; its lifespan, the first scan and the folder
watch run in one task on the Jupyter server's event loop.

A host that cannot serve (no such folder, a contents manager that keeps
notebooks somewhere else than files) keeps the reason in `problem`, and every
request is answered with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial

import anyio

from ..interrupts import interrupts_pass
from ..protocol.server import CachePolicy
from ..service import NotebookService, ServiceSettings
from ..transports.http import create_http_app
from ..transports.sse_seam import end_shutdown_watcher
from .bridge import ASGIApp, AsgiLifespan

__all__ = ["SHUTDOWN_SECONDS", "NotebookHost"]

log = logging.getLogger(__name__)

SHUTDOWN_SECONDS = 5.0  # open event streams do not end by themselves: wait for them this long at most


class NotebookHost:
    """The prompts of the notebooks under `root`, served over MCP from inside another server."""

    def __init__(self, settings: ServiceSettings) -> None:
        # The prompts are one user's files behind that user's login: no cache may share them.
        self.service = NotebookService(settings, cache=CachePolicy(scope="private"))
        self.root = self.service.root
        # No Host check and no token here: the Jupyter server has done both, with its own rules.
        self.app: ASGIApp = create_http_app(self.service.server, allowed_hosts=None)
        self.problem: str | None = None
        self._ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self, on_ready: Callable[[NotebookHost], None]) -> None:
        """Start serving in the background on the running event loop; `on_ready(self)` once requests are served."""
        self._task = asyncio.get_running_loop().create_task(self._run(on_ready), name="mcp-notebook host")

    async def wait_ready(self) -> str | None:
        """Wait until requests can be served: None, or why they cannot be."""
        await self._ready.wait()
        return self.problem

    @interrupts_pass
    async def _run(self, on_ready: Callable[[NotebookHost], None]) -> None:
        try:
            await self.service.start_in_thread()  # the Jupyter server's loop goes on meanwhile
            lifespan = AsgiLifespan(self.app)
            watch_stop = anyio.Event()
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(lifespan.run)
                    await lifespan.started.wait()
                    if lifespan.failure is not None:
                        raise RuntimeError(lifespan.failure)
                    watching = anyio.Event()
                    group.start_soon(partial(self.service.watch, stop_event=watch_stop, ready=watching.set))
                    await watching.wait()
                    self._ready.set()
                    on_ready(self)
                    await self._stopping.wait()
                    lifespan.stop()
                    watch_stop.set()
                    group.cancel_scope.deadline = anyio.current_time() + SHUTDOWN_SECONDS
            finally:
                with anyio.CancelScope(shield=True):  # the index is written and closed before the server exits
                    await self.service.close_in_thread()
        except Exception as error:  # the Jupyter server goes on; every request says why MCP does not
            while isinstance(error, ExceptionGroup) and len(error.exceptions) == 1:
                error = error.exceptions[0]
            log.error("the MCP endpoint stopped: %s", error, exc_info=error)
            self.problem = f"the MCP endpoint stopped: {error}"
            self._ready.set()

    async def stop(self) -> None:
        """Stop serving: the application shuts down, open streams end, the watch stops.

        The event streams' shutdown watcher, which only uvicorn's exit would end,
        ends too: the Jupyter server closes its loop next.
        """
        self._stopping.set()
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=SHUTDOWN_SECONDS + 1)
        await end_shutdown_watcher()

    def summary(self) -> str:
        """How many prompts from how many notebooks, and where (the first line of the start-up summary)."""
        return self.service.describe()
