"""The MCP servers of one IPython session: configured ones, ones added with `%mcp connect`, their connections.

`ServerPool` reads the user's MCP configuration lazily, opens a connection on
a server's first use and keeps it until `disconnect()`, and resolves prompt
references (`server:prompt`, or a bare prompt name when only one server has
it). All network work goes through the background runtime.

`input_handler` is the hook that asks the user when a server needs input in
the middle of `prompts/get` (2026-07-28 input-required, or elicitation); it
defaults to `input()` on the waiting thread. Widget forms replace it, e.g.
`servers.input_handler = create_form_input_handler(fallback=servers.input_handler)`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..config import ServerConfig, load_server_configs
from ..exceptions import (
    AmbiguousPromptError,
    ConfigError,
    MCPNotebookError,
    SkillsNotOfferedError,
    UnknownPromptError,
    UnknownSkillError,
)
from ..models import PromptSpec
from ..naming import suggest_names
from ..trust import TrustStore, UntrustedConfig

if TYPE_CHECKING:
    # The client machinery (and asyncio) is imported on first use, not by `%load_ext`.
    from ..api import Connection
    from ..client import InputRequest, PromptClient, Skill
    from ..runtime import BackgroundRuntime

__all__ = [
    "AmbiguousPromptError",
    "ServerPool",
    "ask_on_caller_thread",
    "input_handler",
    "on_input_required",
    "why_no_skills",
]

_T = TypeVar("_T")


async def ask_on_caller_thread(request: InputRequest) -> Mapping[str, Any] | None:
    """The default `input_handler`: console questions with `input()` on the thread running the magic."""
    from ..api import ask_with_input
    from ..runtime import run_in_caller

    return await run_in_caller(ask_with_input, request)


input_handler: Callable[[InputRequest], Awaitable[Mapping[str, Any] | None]] = ask_on_caller_thread


async def on_input_required(request: InputRequest) -> Mapping[str, Any] | None:
    """Hand a server's input request to the session's current `input_handler`.

    Give this to a `PromptClient` of the session: the handler is looked up per
    request, so one swapped in later (widget forms) applies to open connections too.
    """
    return await input_handler(request)


TRUST_HINT = "%mcp trust starts them (the file as it is now; %mcp trust --help)."


def _say(line: str) -> None:
    print(line)


class ServerPool:
    """Servers by name, connected on first use and kept connected.

    A project's configuration file (found from `cwd`) that the user has not
    trusted starts nothing: its servers are kept in `untrusted`, and
    `on_untrusted` is told once per file and content, with what it would start.
    """

    def __init__(
        self,
        *,
        config_paths: Sequence[Path] = (),
        cwd: Path | None = None,
        timeout: float = 30.0,
        runtime: BackgroundRuntime | None = None,
        on_untrusted: Callable[[str], None] = _say,
    ) -> None:
        self.config_paths: list[Path] = list(config_paths)
        self.cwd = cwd
        self.timeout = timeout
        self._runtime = runtime
        self._configured: dict[str, ServerConfig] | None = None
        self.config_errors: list[ConfigError] = []
        self.untrusted: list[UntrustedConfig] = []
        self._on_untrusted = on_untrusted
        self._announced: set[tuple[Path, str]] = set()
        self._added: dict[str, ServerConfig] = {}
        self._connections: dict[str, Connection] = {}

    @property
    def runtime(self) -> BackgroundRuntime:
        from ..runtime import get_runtime

        return self._runtime or get_runtime()

    # -- configuration -----------------------------------------------------------------------------

    def configs(self) -> dict[str, ServerConfig]:
        """Every known server: from the configuration files, overridden by `%mcp connect` ones."""
        if self._configured is None:
            self.config_errors = []
            self.untrusted = []
            self._configured = load_server_configs(
                self.config_paths, cwd=self.cwd, on_error=self.config_errors.append, on_untrusted=self.untrusted.append
            )
            for untrusted in self.untrusted:
                if (untrusted.path, untrusted.digest) not in self._announced:
                    self._announced.add((untrusted.path, untrusted.digest))
                    self._on_untrusted(untrusted.hint(TRUST_HINT))
        return {**self._configured, **self._added}

    def trust(self, path: Path | None = None) -> list[UntrustedConfig]:
        """Trust the project files found not trusted (or the one at `path`), as they were when read; returns them.

        What is trusted is the content the user was told about: a file edited since is not trusted by this.
        """
        self.configs()
        chosen = [u for u in self.untrusted if path is None or u.path == Path(path).expanduser().absolute()]
        store = TrustStore()
        for untrusted in chosen:
            store.trust(untrusted.path, untrusted.digest)
        if chosen:
            self.reload()
        return chosen

    def add_config_file(self, path: Path) -> None:
        """Read one more configuration file (it wins over the default ones)."""
        path = Path(path).expanduser()
        if not path.is_file():
            raise ConfigError(str(path), "no such configuration file")
        if path not in self.config_paths:
            self.config_paths.append(path)
        self.reload()

    def reload(self) -> None:
        """Read the configuration files again on next use (open connections stay as they are)."""
        self._configured = None

    def config(self, name: str) -> ServerConfig:
        configs = self.configs()
        for untrusted in self.untrusted if name not in configs else ():
            for server, what in untrusted.servers:
                if server == name:
                    raise ConfigError(
                        None,
                        f"MCP server {name!r} is in {untrusted.path}, which you have not trusted: it would start "
                        f"{what}. Run %mcp trust to start it, if you trust this project.",
                    )
        if name not in configs:
            hint = suggest_names(name, configs)
            did_you_mean = f"; did you mean {', '.join(hint)}?" if hint else ""
            known = ", ".join(sorted(configs)) or "none"
            raise ConfigError(None, f"no MCP server named {name!r} (known: {known}){did_you_mean}")
        return configs[name]

    # -- connections -------------------------------------------------------------------------------

    def add(self, config: ServerConfig, *, mode: str = "auto") -> Connection:
        """Add (or replace) a server and connect to it now."""
        self.disconnect(config.name)
        previous = self._added.get(config.name)
        self._added[config.name] = config
        connection = self.connection(config.name, mode=mode)
        try:
            connection.connect()
        except BaseException:
            # A server that cannot be reached is not kept: the name means what it meant before.
            self.disconnect(config.name)
            if previous is None:
                del self._added[config.name]
            else:
                self._added[config.name] = previous
            raise
        return connection

    def connection(self, name: str, *, mode: str = "auto") -> Connection:
        """The server's connection object (it connects on first request)."""
        connection = self._connections.get(name)
        if connection is None:
            from ..api import Connection

            connection = Connection(
                self.config(name),
                mode=mode,
                timeout=self.timeout,
                on_input_required=on_input_required,  # the swappable hook, so widget forms can take over
                runtime=self.runtime,
            )
            self._connections[name] = connection
        return connection

    def connections(self) -> dict[str, Connection]:
        """The connections opened so far (connected or not)."""
        return dict(self._connections)

    def connected(self) -> dict[str, PromptClient]:
        """Clients of the servers connected right now, by name."""
        return {name: c.client for name, c in self._connections.items() if c.connected}

    def disconnect(self, name: str | None = None) -> list[str]:
        """Close one server's connection (all when `name` is None); returns the names closed."""
        names = list(self._connections) if name is None else [name]
        closed = []
        for each in names:
            connection = self._connections.pop(each, None)
            if connection is not None:
                was_connected = connection.connected
                with contextlib.suppress(MCPNotebookError):
                    connection.close()
                if was_connected:
                    closed.append(each)
        return closed

    def close(self) -> None:
        """Disconnect everything and forget `%mcp connect` servers."""
        self.disconnect()
        self._added.clear()

    # -- prompts -----------------------------------------------------------------------------------

    def listings(self, names: Sequence[str]) -> dict[str, tuple[PromptSpec, ...] | MCPNotebookError]:
        """The prompts of several servers, fetched concurrently; a server's failure is its entry."""
        return self._from_each(names, lambda client: client.list_prompts())

    def _from_each(
        self, names: Sequence[str], ask: Callable[[PromptClient], Awaitable[_T]]
    ) -> dict[str, _T | MCPNotebookError]:
        """`ask` of each named server's client, concurrently, in the order named; a server's failure is its entry."""
        connections = {name: self.connection(name) for name in names}

        async def fetch_all() -> dict[str, _T | MCPNotebookError]:
            import anyio

            results: dict[str, _T | MCPNotebookError] = {}

            async def fetch(name: str, client: PromptClient) -> None:
                try:
                    results[name] = await ask(client)
                except MCPNotebookError as error:
                    results[name] = error

            async with anyio.create_task_group() as tasks:
                for name, connection in connections.items():
                    tasks.start_soon(fetch, name, connection.client)
            return {name: results[name] for name in names}

        return self.runtime.call(fetch_all)

    def resolve(self, reference: str) -> tuple[Connection, PromptSpec]:
        """Find `server:prompt`, or a bare prompt name offered by exactly one server.

        An unknown prompt raises `UnknownPromptError` whose suggestions are
        `server:prompt` references, ready to show.
        """
        configs = self.configs()
        server, _, prompt = reference.partition(":")
        if prompt:
            self.config(server)  # an unknown server is an error naming the known ones
            connection = self.connection(server)
            try:
                return connection, connection.prompt(prompt)
            except UnknownPromptError as error:
                raise UnknownPromptError(reference, [f"{server}:{s}" for s in error.suggestions]) from None
        name = reference
        if not configs:
            raise ConfigError(None, "no MCP servers configured; add one with %mcp connect NAME -- COMMAND")
        # Connected servers first; the others are started only when the name is not found there.
        connected = self.connected()
        searched = [n for n in configs if n in connected]
        hits, known = self._search(name, searched)
        if not hits:
            rest = [n for n in configs if n not in searched]
            more_hits, more_known = self._search(name, rest)
            hits, known = more_hits, known + more_known
        if len(hits) > 1:
            raise AmbiguousPromptError(name, [f"{server}:{name}" for server in hits])
        if not hits:
            close = set(suggest_names(name, {qualified.partition(":")[2] for qualified in known}))
            raise UnknownPromptError(name, [q for q in known if q.partition(":")[2] in close])
        connection = self.connection(hits[0])
        return connection, connection.prompt(name)

    def _search(self, name: str, servers: Sequence[str]) -> tuple[list[str], list[str]]:
        if not servers:
            return [], []
        hits: list[str] = []
        known: list[str] = []
        for server, listing in self.listings(servers).items():
            if isinstance(listing, MCPNotebookError):
                continue
            known += [f"{server}:{spec.name}" for spec in listing]
            if any(spec.name == name for spec in listing):
                hits.append(server)
        return hits, known

    # -- skills ------------------------------------------------------------------------------------

    def skill_listings(self, names: Sequence[str]) -> dict[str, tuple[Skill, ...] | MCPNotebookError]:
        """The skills of several servers, fetched concurrently; a server's failure (or having none) is its entry."""
        return self._from_each(names, lambda client: client.list_skills())

    def resolve_skill(self, reference: str) -> tuple[Connection, Skill]:
        """Find `server:skill` (a name, a path such as `acme/billing/refunds`, or a `SKILL.md` URI), or a bare
        skill name offered by exactly one server: the connected ones first, then the others.
        """
        server, found, skill = reference.partition(":")
        if found and server in self.configs():
            connection = self.connection(server)
            return connection, connection.skill(skill)
        configs = self.configs()
        if not configs:
            raise ConfigError(None, "no MCP servers configured; add one with %mcp connect NAME -- COMMAND")
        connected = self.connected()
        searched = [n for n in configs if n in connected]
        hits, known = self._search_skills(reference, searched)
        if not hits:
            rest = [n for n in configs if n not in searched]
            more_hits, more_known = self._search_skills(reference, rest)
            hits, known = more_hits, known + more_known
        if len(hits) > 1:
            raise UnknownSkillError(reference, [f"{s.server}:{s.path}" for s in hits], ambiguous=True)
        if not hits:
            close = set(suggest_names(reference, {s.name for s in known}))
            raise UnknownSkillError(reference, [s.reference for s in known if s.name in close])
        return self.connection(hits[0].server), hits[0]

    def _search_skills(self, name: str, servers: Sequence[str]) -> tuple[list[Skill], list[Skill]]:
        if not servers:
            return [], []
        hits: list[Skill] = []
        known: list[Skill] = []
        for listing in self.skill_listings(servers).values():
            if isinstance(listing, MCPNotebookError):
                continue
            known += listing
            hits += [s for s in listing if name in (s.name, s.path)]
        return hits, known


def why_no_skills(error: MCPNotebookError) -> str:
    """What `%mcp skills` says of a server that has none to list."""
    if isinstance(error, SkillsNotOfferedError):
        return str(error).removeprefix(f"{error.server} ")
    return str(error)
