"""The client pool: background connections, cached listings, list_changed, lost connections, health checks of
HTTP servers, reconnects, deadlines."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

import pytest

from mcp_notebook.catalog.pool import CatalogSnapshot, ClientPool, ServerState
from mcp_notebook.client.skills import Skill, SkillContent
from mcp_notebook.config import ServerConfig
from mcp_notebook.exceptions import ServerConnectionError, ServerError
from mcp_notebook.models import CompletionResult, PromptArgument, PromptMessage, PromptSpec, RenderedPrompt, TextContent

DEADLINE = 5.0


class FakeServer:
    """What a fake client talks to; survives reconnects, so tests can kill and revive it."""

    def __init__(self, *names: str) -> None:
        self.prompts = tuple(PromptSpec(name=n, arguments=(PromptArgument("x"),)) for n in names)
        self.alive = True
        self.connects = 0
        self.hang = False
        self.refuse_completion = False
        self.probes = 0
        self.probed = asyncio.Event()
        # While set to an event, get_prompt waits for it before answering.
        self.gate: asyncio.Event | None = None
        self.clients: list[FakeClient] = []

    def kill(self) -> None:
        """Die as a stdio server dies: every open connection reports that it was lost."""
        self.alive = False
        for client in self.clients:
            if client.connected:
                client.connected = False
                for listener in list(client.lost_listeners):
                    listener()


class FakeClient:
    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.connected = False
        self.closed = False
        self.closed_event = asyncio.Event()
        self.listeners: list[Callable[[], None]] = []
        self.lost_listeners: list[Callable[[], None]] = []
        server.clients.append(self)

    async def connect(self) -> None:
        self.server.connects += 1
        if not self.server.alive:
            raise ServerConnectionError("fake", "cannot start")
        self.connected = True

    async def close(self) -> None:
        self.connected = False
        self.closed = True
        self.closed_event.set()

    def _check(self) -> None:
        if not self.server.alive or self.closed:
            raise ServerConnectionError("fake", "the connection closed")

    async def list_prompts(self, *, refresh: bool = False) -> tuple[PromptSpec, ...]:
        self._check()
        return self.server.prompts

    @property
    def offers_skills(self) -> bool | None:
        return False  # skills through the pool are tested against a real server (test_bridge_skills.py)

    async def list_skills(self) -> tuple[Skill, ...]:
        raise AssertionError("a server that offers no skills is not asked for them")

    async def read_skill_file(self, skill: Skill, path: str = "SKILL.md") -> SkillContent:
        raise AssertionError("a server that offers no skills is not asked for them")

    def add_list_changed_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        self.listeners.append(callback)
        return lambda: self.listeners.remove(callback)

    def add_connection_lost_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        self.lost_listeners.append(callback)
        return lambda: self.lost_listeners.remove(callback)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        if self.server.gate is not None:
            await self.server.gate.wait()
        self._check()
        if self.server.hang:
            await asyncio.Event().wait()
        if name not in {p.name for p in self.server.prompts}:
            raise ServerError(f"Unknown prompt: {name}", -32602)
        return RenderedPrompt(messages=(PromptMessage("user", TextContent(f"{name} {dict(arguments or {})}")),))

    async def complete(
        self, prompt: str, argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        self._check()
        self.server.probes += 1
        if self.server.probes >= 2:
            self.server.probed.set()
        if self.server.hang:
            await asyncio.Event().wait()
        if self.server.refuse_completion:
            raise ServerError("Completion is not offered for x", -32602)
        return CompletionResult(values=(f"{value}1", f"{value}2", str(dict(context or {}))))

    def fire_list_changed(self) -> None:
        for listener in list(self.listeners):
            listener()


async def wait_until(pool: ClientPool, predicate: Callable[[CatalogSnapshot], bool]) -> CatalogSnapshot:
    """Wait (with a deadline) for a snapshot that satisfies `predicate`."""
    arrived = asyncio.Event()
    remove = pool.add_listener(lambda snap: arrived.set() if predicate(snap) else None)
    try:
        if not predicate(pool.snapshot()):
            await asyncio.wait_for(arrived.wait(), DEADLINE)
    finally:
        remove()
    return pool.snapshot()


def _state(name: str, state: ServerState) -> Callable[[CatalogSnapshot], bool]:
    return lambda snap: name in snap.servers and snap.servers[name].state is state


@pytest.fixture
async def servers() -> dict[str, FakeServer]:
    return {"a": FakeServer("greet", "plot"), "b": FakeServer("summarize")}


@pytest.fixture
async def pool(servers: dict[str, FakeServer]):  # type: ignore[no-untyped-def]
    pool = ClientPool(
        client_factory=lambda config: FakeClient(servers[config.name]),
        health_interval=0.05,
        reconnect_initial=0.01,
        reconnect_max=0.05,
        completion_timeout=0.2,
        request_timeout=0.5,
    )
    yield pool
    await pool.aclose()


def _configs(*names: str) -> dict[str, ServerConfig]:
    """Stdio servers: their clients report a lost connection, so they get no health checks."""
    return {n: ServerConfig(name=n, command="fake", source="/cfg/mcp.json") for n in names}


def _http_configs(*names: str) -> dict[str, ServerConfig]:
    """HTTP servers (as kernels are): they can vanish without a word, so they get health checks."""
    return {n: ServerConfig(name=n, url=f"http://127.0.0.1:1/{n}", source="/cfg/mcp.json") for n in names}


async def test_servers_connect_in_the_background_and_fill_the_index(pool: ClientPool) -> None:
    pool.set_servers(_configs("a", "b"))
    assert {s.state for s in pool.snapshot().servers.values()} <= {ServerState.CONNECTING}
    snap = await wait_until(pool, lambda s: len(s.index) == 3)
    assert [e.key for e in snap.index.entries] == ["a:greet", "a:plot", "b:summarize"]
    assert snap.servers["a"].source == "/cfg/mcp.json"


async def test_new_servers_show_as_connecting_before_the_loop_turns(pool: ClientPool) -> None:
    told: list[CatalogSnapshot] = []
    pool.add_listener(told.append)

    pool.set_servers(_configs("a", "b"))  # no await: the editor's next request may come first

    snapshot = pool.snapshot()
    assert {name: s.state for name, s in snapshot.servers.items()} == {
        "a": ServerState.CONNECTING,
        "b": ServerState.CONNECTING,
    }
    assert told == [snapshot]


async def test_a_server_added_while_another_change_waits_loses_no_prompt(pool: ClientPool) -> None:
    pool.set_servers(_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    pool.set_servers(_configs("a", "b"), group="more")  # at once: connecting
    assert pool.snapshot().servers["b"].state is ServerState.CONNECTING
    snap = await wait_until(pool, lambda s: len(s.index) == 3)
    assert [e.key for e in snap.index.entries] == ["a:greet", "a:plot", "b:summarize"]


async def test_get_prompt_and_complete_go_to_the_named_server(pool: ClientPool) -> None:
    pool.set_servers(_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    rendered = await pool.get_prompt("a", "greet", {"x": "1"})
    assert rendered.messages[0].content == TextContent("greet {'x': '1'}")
    result = await pool.complete("a", "greet", "x", "v", {"y": "2"})
    assert result.values == ("v1", "v2", "{'y': '2'}")


async def test_server_errors_pass_through_unchanged(pool: ClientPool) -> None:
    pool.set_servers(_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    with pytest.raises(ServerError, match="Unknown prompt: nope"):
        await pool.get_prompt("a", "nope", {})


async def test_unknown_server_is_a_connection_error(pool: ClientPool) -> None:
    with pytest.raises(ServerConnectionError, match="no such MCP server"):
        await pool.get_prompt("zzz", "greet", {})


async def test_list_changed_refreshes_the_cache(pool: ClientPool, servers: dict[str, FakeServer]) -> None:
    pool.set_servers(_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    servers["a"].prompts = (PromptSpec(name="fresh"),)
    servers["a"].clients[-1].fire_list_changed()
    snap = await wait_until(pool, lambda s: [e.key for e in s.index.entries] == ["a:fresh"])
    assert snap.servers["a"].state is ServerState.READY


async def test_a_lost_connection_takes_the_server_down_at_once_then_it_comes_back(
    pool: ClientPool, servers: dict[str, FakeServer]
) -> None:
    pool.set_servers(_configs("a", "b"))
    await wait_until(pool, lambda s: len(s.index) == 3)
    servers["a"].kill()
    snap = await wait_until(pool, _state("a", ServerState.DOWN))
    assert [e.key for e in snap.index.entries] == ["b:summarize"]
    assert snap.servers["a"].error == "a: the connection was lost"
    with pytest.raises(ServerConnectionError, match="not connected"):
        await pool.get_prompt("a", "greet", {})
    await asyncio.wait_for(servers["a"].clients[0].closed_event.wait(), DEADLINE)
    assert servers["a"].probes == 0  # noticed without asking the server
    servers["a"].alive = True
    await wait_until(pool, lambda s: len(s.index) == 3)
    assert servers["a"].connects >= 2


async def test_a_vanished_http_server_is_found_by_the_health_check_then_comes_back(
    pool: ClientPool, servers: dict[str, FakeServer]
) -> None:
    pool.set_servers(_http_configs("a", "b"))
    await wait_until(pool, lambda s: len(s.index) == 3)
    servers["a"].alive = False  # no lost connection reported: only asking finds out
    snap = await wait_until(pool, _state("a", ServerState.DOWN))
    assert [e.key for e in snap.index.entries] == ["b:summarize"]
    assert snap.servers["a"].error
    assert servers["a"].clients[0].closed
    servers["a"].alive = True
    await wait_until(pool, lambda s: len(s.index) == 3)
    assert servers["a"].connects >= 2


async def test_only_http_servers_are_health_checked(pool: ClientPool, servers: dict[str, FakeServer]) -> None:
    pool.set_servers(_configs("a"))
    pool.set_servers(_http_configs("b"), group="kernels")
    await wait_until(pool, lambda s: len(s.index) == 3)
    await asyncio.wait_for(servers["b"].probed.wait(), DEADLINE)  # two health checks of b, on the same interval
    assert servers["a"].probes == 0


async def test_failed_request_wakes_the_supervisor_at_once(servers: dict[str, FakeServer]) -> None:
    pool = ClientPool(
        client_factory=lambda config: FakeClient(servers[config.name]), health_interval=60, reconnect_initial=60
    )
    try:
        pool.set_servers(_configs("a"))
        await wait_until(pool, _state("a", ServerState.READY))
        servers["a"].alive = False
        with pytest.raises(ServerConnectionError):
            await pool.get_prompt("a", "greet", {})
        await wait_until(pool, _state("a", ServerState.DOWN))
    finally:
        await pool.aclose()


async def test_hung_request_hits_its_deadline(pool: ClientPool, servers: dict[str, FakeServer]) -> None:
    pool.set_servers(_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    servers["a"].hang = True
    with pytest.raises(ServerConnectionError, match=r"no answer within 0\.2 s"):
        await pool.complete("a", "greet", "x", "", {})
    with pytest.raises(ServerConnectionError, match=r"no answer within 0\.5 s"):
        await pool.get_prompt("a", "greet", {})


async def test_removed_servers_are_closed_and_dropped(pool: ClientPool, servers: dict[str, FakeServer]) -> None:
    pool.set_servers(_configs("a", "b"))
    await wait_until(pool, lambda s: len(s.index) == 3)
    pool.set_servers(_configs("b"))
    snap = await wait_until(pool, lambda s: "a" not in s.servers)
    assert [e.key for e in snap.index.entries] == ["b:summarize"]
    await asyncio.wait_for(servers["a"].clients[0].closed_event.wait(), DEADLINE)


async def test_groups_merge_and_earlier_groups_win_a_name(pool: ClientPool, servers: dict[str, FakeServer]) -> None:
    pool.set_servers(_configs("a"))
    pool.set_servers({"a": ServerConfig(name="a", url="http://127.0.0.1:1/mcp"), **_configs("b")}, group="kernels")
    snap = await wait_until(pool, lambda s: len(s.index) == 3)
    assert snap.servers["a"].source == "/cfg/mcp.json"


async def test_close_stops_every_server(pool: ClientPool, servers: dict[str, FakeServer]) -> None:
    pool.set_servers(_configs("a", "b"))
    await wait_until(pool, lambda s: len(s.index) == 3)
    await pool.aclose()
    assert all(c.closed for s in servers.values() for c in s.clients)


async def test_an_error_answer_to_the_health_check_proves_the_server_alive(
    pool: ClientPool, servers: dict[str, FakeServer]
) -> None:
    servers["a"].refuse_completion = True
    pool.set_servers(_http_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    await asyncio.wait_for(servers["a"].probed.wait(), DEADLINE)  # two health checks answered with an error
    assert pool.snapshot().servers["a"].state is ServerState.READY
    assert servers["a"].connects == 1


async def test_a_silent_http_server_is_given_up_after_the_request_deadline(
    pool: ClientPool, servers: dict[str, FakeServer]
) -> None:
    pool.set_servers(_http_configs("a"))
    await wait_until(pool, _state("a", ServerState.READY))
    servers["a"].hang = True
    snap = await wait_until(pool, _state("a", ServerState.DOWN))
    assert snap.index.entries == ()
    assert snap.servers["a"].error == "no answer in time"


async def test_a_request_failing_on_a_replaced_client_leaves_its_successor_up(servers: dict[str, FakeServer]) -> None:
    pool = ClientPool(
        client_factory=lambda config: FakeClient(servers[config.name]),
        reconnect_initial=0.01,
        request_timeout=DEADLINE,
    )
    try:
        pool.set_servers(_configs("a"))
        await wait_until(pool, _state("a", ServerState.READY))
        servers["a"].gate = asyncio.Event()
        stale = asyncio.create_task(pool.get_prompt("a", "greet", {}))
        servers["a"].kill()
        await wait_until(pool, _state("a", ServerState.DOWN))
        servers["a"].alive = True
        await wait_until(pool, _state("a", ServerState.READY))

        servers["a"].gate.set()  # the first client's request now fails: that client is closed
        with pytest.raises(ServerConnectionError):
            await stale
        servers["a"].prompts = (PromptSpec(name="fresh"),)
        servers["a"].clients[-1].fire_list_changed()
        # The supervisor handles a broken client before a changed list: the new listing proves it saw none.
        snap = await wait_until(pool, lambda s: [e.key for e in s.index.entries] == ["a:fresh"])
        assert snap.servers["a"].state is ServerState.READY
        assert servers["a"].connects == 2
    finally:
        await pool.aclose()
