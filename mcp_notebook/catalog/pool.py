"""A pool of MCP clients whose prompt lists are kept in memory: the editor bridge's and JupyterLab's.

One supervisor task per server connects it in the background, lists its
prompts, refreshes them on `list_changed`, and reconnects with exponential
backoff when it went away (its prompts disappear meanwhile). A stdio server's
end is noticed at once, when its connection is lost; an HTTP server (a
kernel's) can vanish without a word between requests, so it is checked now and
then. Every change publishes a new immutable `CatalogSnapshot` (with a
ready-made `CommandIndex`), so editor requests are answered from memory. Every
request to a server has a deadline.

The LSP server and the JupyterLab API only need the `PromptCatalog` protocol; tests feed it fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..config import ServerConfig
from ..exceptions import ServerConnectionError, ServerError
from ..models import CompletionResult, PromptSpec, RenderedPrompt
from ..ranking import CommandEntry, CommandIndex, is_magic
from ..worker_threads import run_off_loop
from .prompt_cache import PromptListCache
from .skill_commands import skill_entries

if TYPE_CHECKING:
    from ..client.skills import Skill, SkillContent

__all__ = [
    "CatalogSnapshot",
    "ClientPool",
    "PromptCatalog",
    "PromptClientLike",
    "QuickCompletions",
    "ServerState",
    "ServerStatus",
    "create_prompt_client",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
SnapshotListener = Callable[["CatalogSnapshot"], None]


CONFIGURED_GROUP = "config"


def _priority(group: str | None, spec: PromptSpec) -> int:
    """Where a prompt ranks among equally good matches: the user's own servers first, generated magics last."""
    if is_magic(spec):
        return 2  # a kernel documents its magics (every one with --all-magics): none written by the user
    return 0 if group == CONFIGURED_GROUP else 1


def _skill_priority(group: str | None) -> int:
    """Skills rank as the prompts of their server do."""
    return 0 if group == CONFIGURED_GROUP else 1


class ServerState(Enum):
    CONNECTING = "connecting"
    READY = "ready"
    DOWN = "down"
    # Named by a project configuration file the user has not trusted: never started.
    NOT_TRUSTED = "not trusted"


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What the editor knows about one server right now."""

    name: str
    state: ServerState
    prompts: tuple[PromptSpec, ...] = ()
    error: str | None = None
    # Where it came from: a configuration file, or a kernel connection file.
    source: str | None = None
    # READY with the list stored at its last start (prompt_cache), while the server starts again.
    cached: bool = False
    # Its skills (the Skills extension), when it offers any.
    skills: tuple[Skill, ...] = ()


@dataclass(frozen=True, slots=True)
class CatalogSnapshot:
    """Every server and every ready server's prompts, at one moment."""

    version: int = 0
    servers: Mapping[str, ServerStatus] = field(default_factory=lambda: MappingProxyType({}))
    index: CommandIndex = field(default_factory=CommandIndex)
    # The skill behind each skill command, by the command's key (`server:name`).
    skills: Mapping[str, Skill] = field(default_factory=lambda: MappingProxyType({}))


class PromptCatalog(Protocol):
    """What the editor features need from the servers."""

    def snapshot(self) -> CatalogSnapshot: ...

    def add_listener(self, listener: SnapshotListener) -> Callable[[], None]: ...

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt: ...

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult: ...

    async def read_skill(self, server: str, skill: Skill) -> SkillContent: ...


class PromptClientLike(Protocol):
    """The part of `mcp_notebook.client.PromptClient` the pool uses."""

    @property
    def connected(self) -> bool: ...

    async def connect(self) -> None: ...

    async def close(self) -> None: ...

    async def list_prompts(self, *, refresh: bool = False) -> tuple[PromptSpec, ...]: ...

    def add_list_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]: ...

    def add_skills_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]: ...

    def add_connection_lost_listener(self, callback: Callable[[], None]) -> Callable[[], None]: ...

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> RenderedPrompt: ...

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult: ...

    @property
    def offers_skills(self) -> bool | None: ...

    async def list_skills(self) -> tuple[Skill, ...]: ...

    async def read_skill_file(self, skill: Skill, path: str = "SKILL.md") -> SkillContent: ...


ClientFactory = Callable[[ServerConfig], PromptClientLike]


def _describe_failure(error: Exception) -> str:
    if isinstance(error, TimeoutError):
        return "no answer in time"
    return str(error) or type(error).__name__


def create_prompt_client(config: ServerConfig, *, request_timeout: float = 30.0) -> PromptClientLike:
    """The real client (imported lazily: the MCP SDK is slow to import)."""
    from ..client.prompt_client import PromptClient

    return PromptClient(config, request_timeout=request_timeout, connect_timeout=request_timeout)


@dataclass(eq=False)
class _Supervised:
    config: ServerConfig
    task: asyncio.Task[None] | None = None
    client: PromptClientLike | None = None
    # Set when the supervisor should look again: the list changed, or a request saw the server fail.
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    changed: bool = False
    skills_changed: bool = False
    broken: bool = False


class ClientPool:
    """Connects to servers in the background and serves their prompts from a cache.

    `health_interval` is how often an HTTP server is asked whether it still
    answers; stdio servers need no asking (their connection reports its end).
    `cache` keeps each started server's last prompt list for the next start
    (by default the user's cache folder when the clients are real, none with
    a `client_factory`).
    """

    def __init__(
        self,
        *,
        client_factory: ClientFactory | None = None,
        connect_timeout: float = 30.0,
        request_timeout: float = 30.0,
        completion_timeout: float = 3.0,
        health_interval: float = 5.0,
        reconnect_initial: float = 0.5,
        reconnect_max: float = 30.0,
        cache: PromptListCache | None = None,
    ) -> None:
        self._default_factory = client_factory is None
        self._cache = cache if cache is not None or client_factory is not None else PromptListCache.default()
        self._factory: ClientFactory = client_factory or (
            lambda config: create_prompt_client(config, request_timeout=request_timeout)
        )
        self._connect_timeout = connect_timeout
        self._request_timeout = request_timeout
        self._completion_timeout = completion_timeout
        self._health_interval = health_interval
        self._reconnect_initial = reconnect_initial
        self._reconnect_max = reconnect_max
        self._groups: dict[str, dict[str, ServerConfig]] = {}
        self._servers: dict[str, _Supervised] = {}
        self._status: dict[str, ServerStatus] = {}
        self._untrusted: dict[str, ServerStatus] = {}
        self._snapshot = CatalogSnapshot()
        self._listeners: list[SnapshotListener] = []
        self._closed = False
        self._rebuild_task: asyncio.Task[None] | None = None
        self._dirty = False
        # The SDK's import in a worker thread (default factory only), and the moment stdio servers may start.
        self._importing: asyncio.Future[None] | None = None
        self._transport_ready: asyncio.Event | None = None

    async def prepare(self) -> None:
        """Start importing the MCP SDK in a worker thread, and return at once.

        It takes about a second; imported by the first connection instead, it
        would stall the event loop, and with it every editor request. Servers
        may be set meanwhile (they show as connecting): a stdio server is
        started as soon as the stdio transport is imported, a third of the
        way, so that it starts while the rest of the SDK imports.
        """
        self._start_import()

    def _start_import(self) -> None:
        if not self._default_factory or self._importing is not None:
            return
        loop = asyncio.get_running_loop()
        transport_ready = self._transport_ready = asyncio.Event()

        def stdio_first() -> None:
            from ..client import prompt_client  # noqa: F401  # what the factory needs, off the loop too

            loop.call_soon_threadsafe(transport_ready.set)

        def run() -> None:
            from ..client.connection import import_sdk

            import_sdk(stdio_first=stdio_first)

        def done(task: asyncio.Future[None]) -> None:
            transport_ready.set()  # a failed import is for the first connection to report
            if not task.cancelled() and task.exception() is not None:
                log.warning("importing the MCP SDK failed: %s", task.exception())

        self._importing = asyncio.ensure_future(run_off_loop(run, abandon_on_cancel=True))
        self._importing.add_done_callback(done)

    async def _until_importable(self, config: ServerConfig) -> None:
        """Wait until connecting to `config` imports nothing on the loop (a stdio server needs only its transport)."""
        self._start_import()
        if self._importing is None or self._transport_ready is None:
            return
        if config.url is None:
            await self._transport_ready.wait()
        else:
            await asyncio.wait([self._importing])

    # -- the catalog -------------------------------------------------------------------------------

    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot

    def add_listener(self, listener: SnapshotListener) -> Callable[[], None]:
        """Call `listener(snapshot)` after every change; returns a function that removes it."""
        self._listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt:
        client = self._ready_client(server)
        return await self._call(server, client, client.get_prompt(prompt, dict(arguments)), self._request_timeout)

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult:
        client = self._ready_client(server)
        call = client.complete(prompt, argument, value, dict(context) or None)
        return await self._call(server, client, call, self._completion_timeout)

    async def read_skill(self, server: str, skill: Skill) -> SkillContent:
        """The skill's SKILL.md, read when the command is rendered (never ahead: the extension says so)."""
        client = self._ready_client(server)
        return await self._call(server, client, client.read_skill_file(skill), self._request_timeout)

    def _ready_client(self, server: str) -> PromptClientLike:
        supervised = self._servers.get(server)
        if supervised is None:
            raise ServerConnectionError(server, "no such MCP server is configured")
        if supervised.client is None:
            status = self._status.get(server)
            reason = f" ({status.error})" if status is not None and status.error else ""
            state = status.state.value if status is not None else "connecting"
            raise ServerConnectionError(server, f"the server is not connected: {state}{reason}")
        return supervised.client

    async def _call(self, server: str, client: PromptClientLike, call: Awaitable[T], deadline: float) -> T:
        try:
            async with asyncio.timeout(deadline):
                return await call
        except TimeoutError:
            raise ServerConnectionError(server, f"no answer within {deadline:g} s") from None
        except ServerConnectionError:
            self._report_broken(server, client)
            raise

    def _report_broken(self, server: str, client: PromptClientLike) -> None:
        supervised = self._servers.get(server)
        # A request on a client already replaced must not take down its successor.
        if supervised is not None and supervised.client is client:
            supervised.broken = True
            supervised.wake.set()

    # -- which servers -----------------------------------------------------------------------------

    def set_servers(self, configs: Mapping[str, ServerConfig], *, group: str = CONFIGURED_GROUP) -> None:
        """Replace the servers of one group ("config", "kernels"); names of earlier groups win.

        Added servers start connecting, removed ones are closed, changed ones
        restart. Must be called on the event loop.
        """
        self._groups[group] = dict(configs)
        wanted: dict[str, ServerConfig] = {}
        for members in self._groups.values():
            for name, config in members.items():
                wanted.setdefault(name, config)
        stopped = [n for n in self._servers if n not in wanted or wanted[n] != self._servers[n].config]
        for name in stopped:
            self._stop(name)
        for name, config in wanted.items():
            if name not in self._servers and not self._closed:
                supervised = _Supervised(config)
                self._servers[name] = supervised
                supervised.task = asyncio.get_running_loop().create_task(
                    self._supervise(name, supervised), name=f"mcp-server-{name}"
                )
        if stopped or not self._publish_connecting():
            self._changed()

    def set_untrusted(self, servers: Mapping[str, tuple[str, str]]) -> None:
        """Show these servers (name → (what they would start, their file)) as not trusted; nothing is started."""
        self._untrusted = {
            name: ServerStatus(name, ServerState.NOT_TRUSTED, error=f"would start {what}", source=source)
            for name, (what, source) in servers.items()
        }
        self._changed()

    def _publish_connecting(self) -> bool:
        """Publish the servers just added, as connecting, at once; False when that must wait for a rebuild.

        The editor's next request then tells that prompts are on their way
        (its very first one, at start), instead of answering from the
        snapshot before. Only when no other change waits: the snapshot's
        index is then up to date, and servers that are connecting add nothing to it.
        """
        if self._dirty or (self._rebuild_task is not None and not self._rebuild_task.done()):
            return False
        current = self._snapshot
        statuses = dict(current.servers)
        for name, supervised in self._servers.items():
            statuses.setdefault(name, ServerStatus(name, ServerState.CONNECTING, source=supervised.config.source))
        if statuses != dict(current.servers):
            self._publish(CatalogSnapshot(current.version + 1, MappingProxyType(statuses), current.index))
        return True

    def _stop(self, name: str) -> None:
        supervised = self._servers.pop(name)
        self._status.pop(name, None)
        if supervised.task is not None:
            supervised.task.cancel()

    async def aclose(self) -> None:
        """Close every connection (stdio servers are stopped) and stop the background tasks."""
        self._closed = True
        tasks = [s.task for s in self._servers.values() if s.task is not None]
        for name in list(self._servers):
            self._stop(name)
        if self._rebuild_task is not None:
            self._rebuild_task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- supervision -------------------------------------------------------------------------------

    async def _supervise(self, name: str, supervised: _Supervised) -> None:
        delay = self._reconnect_initial
        source = supervised.config.source
        # The list stored at the last start answers until the server does (read off the loop).
        cache = self._cache if self._stores(name) else None
        stored = (
            await run_off_loop(cache.load, name, supervised.config, abandon_on_cancel=True)
            if cache is not None
            else None
        )
        if stored is not None:
            self._set_status(ServerStatus(name, ServerState.READY, stored, source=source, cached=True))
        while True:
            if stored is None:
                self._set_status(ServerStatus(name, ServerState.CONNECTING, source=source))
            stored = None
            started = time.monotonic()
            client: PromptClientLike | None = None
            try:
                await self._until_importable(supervised.config)
                client = self._factory(supervised.config)
                await self._serve(name, supervised, client)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # any failure: show it (before closing, which may take a while), retry later
                log.info("MCP server %s is down: %s", name, error)
                self._set_status(ServerStatus(name, ServerState.DOWN, error=_describe_failure(error), source=source))
            finally:
                supervised.client = None
                if client is not None:
                    await self._close_client(name, client)
            # A server that stayed up for a while starts the backoff afresh.
            if time.monotonic() - started > self._reconnect_max:
                delay = self._reconnect_initial
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._reconnect_max)

    async def _serve(self, name: str, supervised: _Supervised, client: PromptClientLike) -> None:
        """Connect, list, and keep the listing fresh until the server fails (then raise)."""

        def on_list_changed() -> None:
            supervised.changed = True
            supervised.wake.set()

        def on_skills_changed() -> None:
            supervised.skills_changed = True
            supervised.wake.set()

        def on_connection_lost() -> None:
            supervised.broken = True
            supervised.wake.set()

        # Only an HTTP server can vanish unnoticed: between its requests no stream is open whose end would tell.
        health_interval = self._health_interval if supervised.config.transport == "http" else None
        # Reset before connecting: whatever happens from now on concerns this client.
        supervised.changed = supervised.skills_changed = supervised.broken = False
        supervised.wake.clear()
        removers = [
            client.add_list_changed_listener(on_list_changed),
            client.add_skills_changed_listener(on_skills_changed),
            client.add_connection_lost_listener(on_connection_lost),
        ]
        try:
            async with asyncio.timeout(self._connect_timeout):
                await client.connect()
            await self._refresh(name, supervised, client)
            supervised.client = client
            while True:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(health_interval):
                        await supervised.wake.wait()
                supervised.wake.clear()
                if supervised.broken or not client.connected:
                    raise ServerConnectionError(name, "the connection was lost")
                if supervised.changed:
                    supervised.changed = supervised.skills_changed = False
                    await self._refresh(name, supervised, client)
                elif supervised.skills_changed:  # its skills alone: the prompts stand
                    supervised.skills_changed = False
                    skills = await self._list_skills(name, client)
                    if name in self._status:
                        self._set_status(replace(self._status[name], skills=skills))
                elif health_interval is not None:
                    await self._probe(name, client)
        finally:
            for remove in removers:
                remove()

    async def _refresh(self, name: str, supervised: _Supervised, client: PromptClientLike) -> None:
        async with asyncio.timeout(self._request_timeout):
            prompts = await client.list_prompts(refresh=True)
        skills = await self._list_skills(name, client)
        self._set_status(ServerStatus(name, ServerState.READY, prompts, source=supervised.config.source, skills=skills))
        if self._cache is not None and self._stores(name):  # started and listed: its list answers the next start
            await run_off_loop(self._cache.save, name, supervised.config, prompts, abandon_on_cancel=True)

    async def _list_skills(self, name: str, client: PromptClientLike) -> tuple[Skill, ...]:
        """The server's skills, when it declares the extension; a failure costs the skills only, not the prompts."""
        if not client.offers_skills:
            return ()
        try:
            async with asyncio.timeout(self._request_timeout):
                return await client.list_skills()
        except ServerConnectionError:
            raise
        except (ServerError, TimeoutError) as error:
            log.warning("MCP server %s: its skills cannot be listed: %s", name, error)
            return ()

    def _stores(self, name: str) -> bool:
        """Whether `name`'s prompt list is kept for the next start: a configured server's, not a kernel's (a
        kernel's address changes with every `%mcp serve`, so its list would never be read again)."""
        return self._cache is not None and self._group_of().get(name) == CONFIGURED_GROUP

    async def _probe(self, name: str, client: PromptClientLike) -> None:
        """Check that an HTTP server still answers (nothing else notices one that vanished).

        A completion request is small whatever the size of the listing. Any
        answer, even an error, proves the server is alive; only a lost
        connection or silence until the request deadline counts as dead (a
        busy server must not be restarted for being slow).
        """
        status = self._status.get(name)
        target = next((p for p in (status.prompts if status else ()) if p.arguments), None)
        try:
            async with asyncio.timeout(self._request_timeout):
                if target is not None:
                    await client.complete(target.name, target.arguments[0].name, "", None)
                else:
                    await client.list_prompts(refresh=True)
        except ServerConnectionError:
            raise
        except ServerError:
            pass

    async def _close_client(self, name: str, client: PromptClientLike) -> None:
        try:
            # Shielded: a cancelled supervisor must still stop its server process.
            await asyncio.shield(asyncio.wait_for(client.close(), self._request_timeout))
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.warning("closing MCP server %s failed: %s", name, error)

    # -- snapshots ---------------------------------------------------------------------------------

    def _group_of(self) -> dict[str, str]:
        """Each server's group: the first group that names it (that is the one it runs as)."""
        found: dict[str, str] = {}
        for group, members in self._groups.items():
            for name in members:
                found.setdefault(name, group)
        return found

    def _set_status(self, status: ServerStatus) -> None:
        if status.name not in self._servers:
            return
        self._status[status.name] = status
        self._changed()

    def _changed(self) -> None:
        """Rebuild the snapshot soon; a burst of changes costs one rebuild."""
        self._dirty = True
        if self._rebuild_task is None or self._rebuild_task.done():
            self._rebuild_task = asyncio.get_running_loop().create_task(self._rebuild())

    async def _rebuild(self) -> None:
        while self._dirty:
            self._dirty = False
            statuses = {
                name: self._status.get(name) or ServerStatus(name, ServerState.CONNECTING, source=s.config.source)
                for name, s in self._servers.items()
            }
            for name, status in self._untrusted.items():
                statuses.setdefault(name, status)
            if statuses == dict(self._snapshot.servers):
                continue  # e.g. an unchanged kernel scan: nothing to tell
            groups = self._group_of()
            entries = [
                CommandEntry(name, spec, _priority(groups.get(name), spec))
                for name, status in statuses.items()
                if status.state is ServerState.READY
                for spec in status.prompts
            ]
            skill_commands = [
                pair
                for name, status in statuses.items()
                if status.state is ServerState.READY
                for pair in skill_entries(name, status.skills, status.prompts, _skill_priority(groups.get(name)))
            ]
            entries += [entry for entry, _skill in skill_commands]
            skills = MappingProxyType({entry.key: skill for entry, skill in skill_commands})
            # Building the index of thousands of prompts takes a while: off the loop, so requests go on.
            index = (
                await run_off_loop(CommandIndex, entries, abandon_on_cancel=True)
                if len(entries) > 500
                else CommandIndex(entries)
            )
            self._publish(CatalogSnapshot(self._snapshot.version + 1, MappingProxyType(statuses), index, skills))

    def _publish(self, snapshot: CatalogSnapshot) -> None:
        self._snapshot = snapshot
        for listener in list(self._listeners):
            try:
                listener(snapshot)
            except Exception:
                log.exception("catalog listener failed")


# How long a value list fetched in the background answers again without asking the server.
_FRESH = 10.0
_MAX_KEPT = 256
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
        found = await self.complete_in_time(server, prompt, argument, value, context)
        if found is None:
            raise ServerConnectionError(server, f"no values within {self._deadline:g} s; they answer the next request")
        return found

    async def complete_in_time(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult | None:
        """The values, or None when they did not come within the deadline (they answer the next request)."""
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
        return task.result() if done else None

    def _keep(self, key: _Key, task: asyncio.Task[CompletionResult]) -> None:
        self._pending.pop(key, None)
        if task.cancelled() or task.exception() is not None:
            return  # the caller that waited saw it; a later one asks again
        if len(self._kept) >= _MAX_KEPT:
            self._kept.pop(next(iter(self._kept)))
        self._kept[key] = (self._clock(), task.result())
