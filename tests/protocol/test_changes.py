"""Registry changes reach every connected client, whatever thread made them, in both eras."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import IncomingMessage
from protocol_samples import simple_prompt
from wire_harness import MODERN, RawWire, modern_meta

from mcp_notebook.protocol.changes import ChangeFeed
from mcp_notebook.protocol.server import PromptServer, create_server
from mcp_notebook.registry import PromptRegistry

DEADLINE = 5.0


def add_prompt(registry: PromptRegistry, name: str) -> None:
    registry.set_group(f"{name}.ipynb", [simple_prompt(name, origin=f"{name}.ipynb")])


class ChangeWatcher:
    """A `message_handler` that counts `notifications/prompts/list_changed`."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            self.count += 1
            self.changed.set()

    async def wait(self) -> None:
        with anyio.fail_after(DEADLINE):
            await self.changed.wait()
        self.changed = anyio.Event()


def capture_feeds(server: PromptServer) -> list[ChangeFeed]:
    """Record the `ChangeFeed` of each run of `server` (its lifespan state)."""
    feeds: list[ChangeFeed] = []
    original = server.lifespan

    @asynccontextmanager
    async def recording(srv: Any) -> AsyncIterator[ChangeFeed]:
        manager: AbstractAsyncContextManager[ChangeFeed] = original(srv)
        async with manager as feed:
            feeds.append(feed)
            yield feed

    server.lifespan = recording
    return feeds


async def test_a_change_made_on_another_thread_notifies_a_handshake_client(registry: PromptRegistry) -> None:
    watcher = ChangeWatcher()
    async with Client(create_server(registry), mode="legacy", message_handler=watcher) as client:
        await client.list_prompts()  # the connection is known once it made a request
        await anyio.to_thread.run_sync(add_prompt, registry, "fresh")
        await watcher.wait()
        names = [prompt.name for prompt in (await client.list_prompts(cache_mode="refresh")).prompts]
    assert "fresh" in names


async def test_a_change_made_on_the_servers_loop_notifies_a_handshake_client(registry: PromptRegistry) -> None:
    watcher = ChangeWatcher()
    async with Client(create_server(registry), mode="legacy", message_handler=watcher) as client:
        await client.list_prompts()
        add_prompt(registry, "fresh")
        await watcher.wait()
        add_prompt(registry, "fresher")
        await watcher.wait()
    assert watcher.count == 2


async def test_a_change_reaches_a_2026_07_28_listen_stream(registry: PromptRegistry) -> None:
    async with Client(create_server(registry), mode="auto") as client:
        async with client.listen(prompts_list_changed=True) as subscription:
            await anyio.to_thread.run_sync(add_prompt, registry, "fresh")
            with anyio.fail_after(DEADLINE):
                event = await subscription.__anext__()
        assert type(event).__name__ == "PromptsListChanged"
        names = [prompt.name for prompt in (await client.list_prompts()).prompts]
    assert "fresh" in names


async def test_the_raw_listen_stream_is_acknowledged_then_tagged_with_its_id(registry: PromptRegistry) -> None:
    async with RawWire(create_server(registry), MODERN) as wire:
        await wire.send(
            {
                "jsonrpc": "2.0",
                "id": "listen-1",
                "method": "subscriptions/listen",
                "params": {"notifications": {"promptsListChanged": True}, "_meta": modern_meta()},
            }
        )
        ack = await wire.receive()
        add_prompt(registry, "fresh")
        change = await wire.receive()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"promptsListChanged": True}
    assert change == {
        "jsonrpc": "2.0",
        "method": "notifications/prompts/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}},
    }


async def test_every_handshake_connection_is_notified(registry: PromptRegistry) -> None:
    server = create_server(registry)
    async with RawWire(server, "2024-11-05") as old, RawWire(server, "2025-11-25") as new:
        await old.request("prompts/list")
        await new.request("prompts/list")
        add_prompt(registry, "fresh")
        assert (await old.next_notification())["method"] == "notifications/prompts/list_changed"
        assert (await new.next_notification())["method"] == "notifications/prompts/list_changed"


async def test_a_closed_connection_is_forgotten(registry: PromptRegistry) -> None:
    server = create_server(registry)
    feeds = capture_feeds(server)
    async with RawWire(server, "2025-06-18") as wire:
        await wire.request("prompts/list")
        assert feeds[0].connection_count == 1
    assert feeds[0].connection_count == 0


async def test_any_request_after_the_handshake_makes_a_connection_known(registry: PromptRegistry) -> None:
    server = create_server(registry)
    feeds = capture_feeds(server)
    async with RawWire(server, "2025-06-18") as wire:
        await wire.request("ping")
        assert feeds[0].connection_count == 1
        add_prompt(registry, "fresh")
        assert (await wire.next_notification())["method"] == "notifications/prompts/list_changed"


async def test_a_change_of_warnings_alone_is_not_announced(registry: PromptRegistry) -> None:
    server = create_server(registry)
    async with RawWire(server, "2025-11-25") as wire:
        await wire.request("prompts/list")
        prompts = registry.groups()["many.ipynb"]
        registry.set_group("many.ipynb", prompts, ["many.ipynb: failed to reload; its last good prompts stay served"])
        add_prompt(registry, "fresh")
        assert (await wire.next_notification())["method"] == "notifications/prompts/list_changed"
        await wire.request("ping")
        assert wire.notifications == []  # one change of prompts, one notification
