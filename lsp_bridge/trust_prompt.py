"""Asking the user, in the editor, before a project's MCP configuration starts anything.

The project's files (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`,
`mcp.json`, found from the editor's root) name commands to run; the bridge
starts none of them until the user trusts the file as it is now. It asks with
`window/showMessageRequest` (VS Code and Neovim show a choice), once per file
and content; meanwhile the file's servers show as
"not trusted", with the command they would run, in the menu, hover and
diagnostics. Choosing the menu's "not trusted" item asks again, after reading
the files anew (so trust given with `mcp-notebook trust FILE` is seen too).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types

from mcp_notebook.config import Loaded, ServerConfig, untrusted_servers
from mcp_notebook.exceptions import ConfigError
from mcp_notebook.trust import TrustStore, UntrustedConfig
from mcp_notebook.worker_threads import run_off_loop

__all__ = ["TRUST_ACTION", "TRUST_COMMAND", "ProjectTrust", "trust_question"]

log = logging.getLogger(__name__)

TRUST_COMMAND = "mcpNotebook.trustProject"
TRUST_ACTION = "Trust and start"
LATER_ACTION = "Not now"


def trust_question(untrusted: UntrustedConfig) -> str:
    """What the user is asked: the file, and every command or URL it would start, as written (one paragraph:
    VS Code's notification runs lines together)."""
    listed = "; ".join(f"{name}: {what}" for name, what in untrusted.servers[:10])
    more = f"; and {len(untrusted.servers) - 10} more" if len(untrusted.servers) > 10 else ""
    return (
        f"This project's MCP configuration {untrusted.path} would start {listed}{more}. "
        "Start these servers? Only if you trust this folder: they run as you. "
        "The file is trusted as it is now; an edit asks again."
    )


class ProjectTrust:
    """Reads the MCP configuration, applies what is trusted to the pool, and asks about the rest.

    `apply` gets the trusted servers and the untrusted ones (name → (what it
    would start, file)); `configure` gives the function that reads the files
    (known once the editor has said its root; it runs in a worker thread).
    """

    def __init__(
        self,
        server: Any,
        apply: Callable[[dict[str, ServerConfig], Mapping[str, tuple[str, str]]], None],
        *,
        store: TrustStore | None = None,
    ) -> None:
        self._server = server
        self._load: Callable[[], Loaded] = lambda: ({}, [], [])
        self._apply = apply
        self._store = store or TrustStore()
        self._asked: set[tuple[Path, str]] = set()
        self._asking: set[asyncio.Task[None]] = set()
        self.untrusted: list[UntrustedConfig] = []

    def configure(self, load: Callable[[], Loaded]) -> None:
        self._load = load

    async def refresh(self, *, ask_again: bool = False) -> list[ConfigError]:
        """Read the files anew, apply them, and ask about each untrusted one not asked about yet."""
        configs, untrusted, problems = await run_off_loop(self._load, abandon_on_cancel=True)
        self.untrusted = untrusted
        self._apply(configs, untrusted_servers(untrusted, configs))
        for file in untrusted:
            key = (file.path, file.digest)
            if key in self._asked and not ask_again:
                continue
            self._asked.add(key)
            task = asyncio.get_running_loop().create_task(self._ask(file), name=f"trust {file.path}")
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)
        return problems

    async def _ask(self, file: UntrustedConfig) -> None:
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=trust_question(file),
            actions=[types.MessageActionItem(TRUST_ACTION), types.MessageActionItem(LATER_ACTION)],
        )
        try:
            answer = await self._server.window_show_message_request_async(params)
        except Exception as error:  # a client without the request: the menu and `mcp-notebook trust` remain
            log.info("could not ask about %s: %s", file.path, error)
            return
        if answer is None or answer.title != TRUST_ACTION:
            self._say(
                f"{file.path} left untrusted: its servers were not started (choose the menu's 'not trusted' item)"
            )
            return
        # What is trusted is the content the user was shown: an edit since then is asked about again.
        await run_off_loop(self._store.trust, file.path, file.digest, abandon_on_cancel=True)
        self._say(f"{file.path} trusted as it is now: starting its servers")
        await self.refresh()

    def _say(self, line: str) -> None:
        """A line in the editor's log of the bridge (and in ours)."""
        log.info("%s", line)
        self._server.window_log_message(types.LogMessageParams(types.MessageType.Info, line))

    async def aclose(self) -> None:
        for task in list(self._asking):
            task.cancel()
        for task in list(self._asking):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
