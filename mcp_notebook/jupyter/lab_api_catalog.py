"""Every prompt a JupyterLab user can reach, kept in the Jupyter server and answered from memory.

One `ClientPool` (the editor bridge's) holds three kinds of servers:

* `notebooks`: this Jupyter server's own MCP endpoint (`<base_url>mcp`), as
  `jupyter` (`jupyter_` when a configured server has that name);
* `config`: the user's configured MCP servers, a project's files only once
  the user has trusted them (`config.load_trusted`, the project being the
  server's root folder); the untrusted ones are listed, never started;
* `kernel`: running kernels serving their prompts (`%mcp serve`), named by
  `naming.kernel_server_name` as every client names them.

The pool connects, lists and reconnects in tasks of its own on the server's
loop (the MCP SDK imported in a worker thread, the files read in worker
threads), and keeps each configured server's last list in the user's cache
folder: the first request after a start lists them while the servers start.
`listing()` never waits for a server; `refresh_soon()` reads the
configuration and the kernels again in the background when they are older
than `REFRESH_SECONDS`. The browser is given names, states and prompts, never
a server's command, environment or headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..catalog.kernels import KernelWatcher
from ..catalog.pool import CatalogSnapshot, ClientPool, QuickCompletions, ServerState, ServerStatus
from ..config import Loaded, ServerConfig, load_trusted, untrusted_servers
from ..models import CompletionResult, PromptSpec, RenderedPrompt
from ..naming import command_server_names
from ..ranking import is_magic
from ..worker_threads import run_off_loop

__all__ = ["COMPLETION_SECONDS", "HOST_NAME", "REFRESH_SECONDS", "LabCatalog"]

log = logging.getLogger(__name__)

HOST_NAME = "jupyter"
REFRESH_SECONDS = 5.0  # the configuration and the kernels are read again when a listing is asked for after this
COMPLETION_SECONDS = 0.2  # a value completion waits this long at most (a slower answer serves the next request)
RENDER_SECONDS = 30.0  # a rendering waits this long for its server
# Just after a start, a listing waits this long at most for the configuration and the lists kept from the last
# start (they come within milliseconds), so that the first one already has them.
FIRST_LISTING_WAIT = 0.1

_STATES = {
    ServerState.READY: "ready",
    ServerState.CONNECTING: "connecting",
    ServerState.DOWN: "failed",
    ServerState.NOT_TRUSTED: "not-trusted",
}


class LabCatalog:
    """The servers JupyterLab lists: a pool of them, the configuration read again now and then.

    `host` gives this Jupyter server's own endpoint once it is known (None: its notebooks are not served, and
    `host_problem` says why). `load` reads the configuration (a worker thread runs it).
    """

    def __init__(
        self,
        *,
        root: Path,
        host: Callable[[], ServerConfig | None],
        host_problem: str | None = None,
        pool: ClientPool | None = None,
        load: Callable[[], Loaded] | None = None,
        runtime_dir: Path | None = None,
        completion_seconds: float = COMPLETION_SECONDS,
    ) -> None:
        self.pool = pool if pool is not None else ClientPool()
        self._catalog = QuickCompletions(self.pool, completion_seconds)
        self._host = host
        self._host_problem = host_problem
        self._load = load or (lambda: load_trusted([], root=root, include_defaults=True))
        self._kinds: dict[str, str] = {}
        self._configured: dict[str, ServerConfig] = {}
        self._problems: tuple[str, ...] = ()
        self._kernels = KernelWatcher(self._set_kernels, directory=runtime_dir, taken=self._taken)
        self._refreshed = float("-inf")
        self._refreshing: asyncio.Task[None] | None = None
        self._again = False
        self._changed = asyncio.Event()
        self._remove_listener = self.pool.add_listener(self._on_snapshot)
        self._extra_version = 0  # bumped by changes the pool does not see (the configuration's problems)
        self._host_name = HOST_NAME
        self._settled = False
        self._secrets: dict[str, tuple[str, ...]] = {}  # each server's command line, headers and environment
        self._called: dict[str, str] = {}  # what a message says instead of its command line or URL

    # -- lifecycle -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start importing the MCP SDK and reading the configuration, in the background; returns at once."""
        await self.pool.prepare()
        self.refresh_soon(force=True)

    async def aclose(self) -> None:
        """Stop refreshing and close every connection (stdio servers are stopped)."""
        self._remove_listener()
        if self._refreshing is not None:
            self._refreshing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refreshing
        await self._kernels.aclose()
        await self.pool.aclose()

    # -- refreshing ----------------------------------------------------------------------------------

    def refresh_soon(self, *, force: bool = False) -> bool:
        """Read the configuration and the kernels again in the background, when older than `REFRESH_SECONDS`
        (`force`: whatever their age; during a refresh, once more after it, since it may have read them already)."""
        if self.refreshing_files:
            self._again = self._again or force
            return True
        if not force and time.monotonic() - self._refreshed < REFRESH_SECONDS:
            return False
        self._refreshed = time.monotonic()
        self._refreshing = asyncio.get_running_loop().create_task(self._refresh(), name="mcp-notebook lab refresh")
        return True

    @property
    def refreshing_files(self) -> bool:
        return self._refreshing is not None and not self._refreshing.done()

    async def _refresh(self) -> None:
        try:
            self._again = True
            while self._again:
                self._again = False
                await self._read()
        finally:
            self._changed.set()  # `refreshing` turned false: the first listing stops waiting

    async def _read(self) -> None:
        try:
            configs, untrusted, problems = await run_off_loop(self._load, abandon_on_cancel=True)
            self._apply(configs, untrusted_servers(untrusted, configs))
            shown = tuple(str(problem) for problem in problems)
            if shown != self._problems:
                self._problems = shown
                self._bump()
            await self._kernels.scan()
        except Exception:  # the next listing tries again; the last lists stay
            log.exception("reading the MCP configuration for JupyterLab failed")

    def _apply(self, configs: Mapping[str, ServerConfig], untrusted: Mapping[str, tuple[str, str]]) -> None:
        named = command_server_names(configs)
        host = self._host()
        host_name = HOST_NAME
        while host_name in named:
            host_name += "_"
        self._configured = dict(named)
        kinds = {name: "config" for name in named} | {name: "config" for name in untrusted}
        kinds[host_name] = "notebooks"
        self._kinds = kinds | {name: "kernel" for name, kind in self._kinds.items() if kind == "kernel"}
        self._remember({**named, **({host_name: host} if host is not None else {})})
        self.pool.set_servers({host_name: host} if host is not None else {}, group="notebooks")
        self.pool.set_servers(named)
        self.pool.set_untrusted(untrusted)
        self._host_name = host_name

    def _remember(self, configs: Mapping[str, ServerConfig]) -> None:
        """What a server's messages must not show the browser: its command line, its headers' and environment's
        values (a token may be any of them)."""
        for name, config in configs.items():
            values = {*(config.headers or {}).values(), *(config.env or {}).values()}
            self._secrets[name] = (
                config.describe(),
                *sorted((v for v in values if len(v) >= 4), key=len, reverse=True),
            )
            self._called[name] = "its address" if config.url is not None else "its command"

    def _taken(self) -> set[str]:
        return {name for name, kind in self._kinds.items() if kind != "kernel"}

    def _set_kernels(self, kernels: Mapping[str, ServerConfig]) -> None:
        others = {name: kind for name, kind in self._kinds.items() if kind != "kernel"}
        self._kinds = others | {name: "kernel" for name in kernels if name not in others}  # one swap: read off-loop
        self._remember(kernels)
        self.pool.set_servers(kernels, group="kernels")

    # -- answers -------------------------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self.pool.snapshot().version + self._extra_version

    def _bump(self) -> None:
        self._extra_version += 1
        self._changed.set()

    def _on_snapshot(self, snapshot: CatalogSnapshot) -> None:
        self._changed.set()

    async def wait_past(self, version: int) -> None:
        """Return once the listing's version passes `version` (the caller bounds the wait)."""
        while self.version <= version:
            self._changed.clear()
            await self._changed.wait()

    async def settle(self) -> None:
        """The first listing after a start waits (`FIRST_LISTING_WAIT` at most) for the configuration to be read
        and the lists kept from the last start to be loaded; every other one returns at once."""
        if self._settled:
            return
        self._settled = True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FIRST_LISTING_WAIT):
                while self.refreshing_files or any(
                    status.state is ServerState.CONNECTING and name in self._configured
                    for name, status in self.pool.snapshot().servers.items()
                ):
                    self._changed.clear()
                    await self._changed.wait()

    def listing(self, *, magics: bool = False) -> dict[str, Any]:
        """Every server with its state and prompts, as last known (the `GET prompts` answer). Never waits."""
        snapshot = self.pool.snapshot()
        servers = [
            self._server(status, magics=magics)
            for name, status in snapshot.servers.items()
            if name in self._kinds or status.state is ServerState.NOT_TRUSTED
        ]
        if self._host_problem is not None:
            servers.append(_entry(HOST_NAME, "notebooks", "failed", self._host_problem, ()))
        order = {"notebooks": 0, "config": 1, "kernel": 2}
        servers.sort(key=lambda entry: (order.get(entry["kind"], 3), entry["name"].lower()))
        return {
            "servers": servers,
            "refreshing": self._refreshing_in(snapshot),
            "version": self.version,
            "problems": list(self._problems),
        }

    def _server(self, status: ServerStatus, *, magics: bool) -> dict[str, Any]:
        kind = self._kinds.get(status.name, "config")
        state = _STATES[status.state]
        called = self._called.get(status.name, "its command")
        detail = _redacted(status.error or "", self._secrets.get(status.name, ()), called)
        if status.state is ServerState.NOT_TRUSTED:
            detail = (
                f"{status.source} {detail}; it starts nothing until you trust it: "
                f"run `mcp-notebook trust {status.source}` (after reading it) and its servers start within seconds"
            )
        elif status.cached:
            detail = "the list kept from the server's last start, while it starts again"
        prompts = tuple(spec for spec in status.prompts if magics or not is_magic(spec))
        return _entry(status.name, kind, state, detail, prompts)

    @property
    def host_name(self) -> str:
        """What this server's own notebooks are called (`jupyter`, unless a configured server has that name)."""
        return self._host_name

    @property
    def refreshing(self) -> bool:
        """Whether the configuration is being read, or a server is still connecting."""
        return self._refreshing_in(self.pool.snapshot())

    def _refreshing_in(self, snapshot: CatalogSnapshot) -> bool:
        connecting = any(status.state is ServerState.CONNECTING for status in snapshot.servers.values())
        return self.refreshing_files or connecting

    def prompt_count(self) -> int:
        """How many prompts the servers have, magics too (what writing a listing costs)."""
        return sum(len(status.prompts) for status in self.pool.snapshot().servers.values())

    def kind_of(self, server: str) -> str | None:
        return self._kinds.get(server)

    def prompt(self, server: str, name: str) -> PromptSpec | None:
        status = self.pool.snapshot().servers.get(server)
        return next((spec for spec in status.prompts if spec.name == name), None) if status is not None else None

    async def render(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt:
        async with asyncio.timeout(RENDER_SECONDS):
            return await self._catalog.get_prompt(server, prompt, arguments)

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult | None:
        """The values, or None when the server did not give them in time (they answer the next request)."""
        return await self._catalog.complete_in_time(server, prompt, argument, value, context)


def _redacted(text: str, secrets: tuple[str, ...], called: str = "its command") -> str:
    """`text` with each of `secrets` (its command line or URL first, said as `called`, then header and environment
    values) left out."""
    for index, secret in enumerate(secrets):
        if secret:
            text = text.replace(secret, called if index == 0 else "…")
    return text


def _entry(name: str, kind: str, state: str, detail: str, prompts: tuple[PromptSpec, ...]) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "state": state,
        "detail": detail,
        "prompts": [_prompt(spec) for spec in prompts],
    }


def _prompt(spec: PromptSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "arguments": [
            {
                "name": argument.name,
                "description": argument.description,
                "required": argument.required,
                "default": argument.default,
            }
            for argument in spec.arguments
        ],
        "magic": is_magic(spec),
    }
