"""The bridge's language server over a fixed, in-memory catalog (no MCP servers): fast LSP tests.

Usage: python static_catalog_server.py CATALOG.json [SETTINGS.json]

CATALOG.json: {"servers": {"nb": {"state": "ready", "prompts": [{"name": ..., "title": ...,
"description": ..., "arguments": [{"name": ..., "required": true, "description": ...}]}]},
"off": {"state": "down", "error": "it crashed"}}, "values": ["python", ...]}

Rendering answers "<prompt>: k=v, ..." (or two messages for a prompt called "dialogue",
a user's and an assistant's, and two user messages for "monologue"); a prompt called
"broken" fails with -32602, one called "slow" answers after SLOW seconds. A server's state
may be "connecting". With "starting": true, the start hook never ends (a bridge that has not
yet set which servers to connect to).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from lsp_bridge.server import create_server
from lsp_bridge.settings import to_settings
from mcp_notebook.catalog.pool import CatalogSnapshot, ServerState, ServerStatus
from mcp_notebook.exceptions import ServerError
from mcp_notebook.models import CompletionResult, PromptArgument, PromptMessage, PromptSpec, RenderedPrompt, TextContent
from mcp_notebook.ranking import CommandEntry, CommandIndex

SLOW = 1.5


def _spec(raw: Mapping[str, Any]) -> PromptSpec:
    arguments = tuple(
        PromptArgument(a["name"], description=a.get("description"), required=a.get("required", True))
        for a in raw.get("arguments", ())
    )
    return PromptSpec(raw["name"], title=raw.get("title"), description=raw.get("description"), arguments=arguments)


class StaticCatalog:
    def __init__(self, raw: Mapping[str, Any]) -> None:
        servers: dict[str, ServerStatus] = {}
        for name, server in raw["servers"].items():
            prompts = tuple(_spec(p) for p in server.get("prompts", ()))
            state = ServerState(server.get("state", "ready"))
            servers[name] = ServerStatus(name, state, prompts, server.get("error"), source="static.json")
        entries = [CommandEntry(n, p) for n, s in servers.items() if s.state is ServerState.READY for p in s.prompts]
        self._snapshot = CatalogSnapshot(1, MappingProxyType(servers), CommandIndex(entries))
        self._values = tuple(raw.get("values", ()))

    def snapshot(self) -> CatalogSnapshot:
        return self._snapshot

    def add_listener(self, listener: Callable[[CatalogSnapshot], None]) -> Callable[[], None]:
        listener(self._snapshot)
        return lambda: None

    async def get_prompt(self, server: str, prompt: str, arguments: Mapping[str, str]) -> RenderedPrompt:
        if prompt == "slow":
            await asyncio.sleep(SLOW)
        if prompt == "broken":
            raise ServerError(f"{server}: Prompt 'broken' failed on purpose", -32602)
        if prompt == "monologue":
            return RenderedPrompt(
                (PromptMessage("user", TextContent("First thought.\n")), PromptMessage("user", TextContent("Second.")))
            )
        if prompt == "dialogue":
            return RenderedPrompt(
                (PromptMessage("user", TextContent("Question?")), PromptMessage("assistant", TextContent("Answer.")))
            )
        text = ", ".join(f"{k}={v}" for k, v in sorted(arguments.items()))
        return RenderedPrompt((PromptMessage("user", TextContent(f"{prompt}: {text}")),))

    async def complete(
        self, server: str, prompt: str, argument: str, value: str, context: Mapping[str, str]
    ) -> CompletionResult:
        matches = [v for v in self._values if v.startswith(value)]
        if context:
            matches.append("context:" + ",".join(f"{k}={v}" for k, v in sorted(context.items())))
        return CompletionResult(tuple(matches))


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        raw = json.load(handle)
    catalog = StaticCatalog(raw)
    settings = None
    if len(sys.argv) > 2:
        with open(sys.argv[2], encoding="utf-8") as handle:
            settings, _ = to_settings(json.load(handle))

    async def never_started() -> None:
        await asyncio.Event().wait()

    start = never_started if raw.get("starting") else None
    create_server(catalog, settings, on_start=start).start_io()


if __name__ == "__main__":
    main()
