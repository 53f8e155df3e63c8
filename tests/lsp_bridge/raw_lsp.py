"""A bare LSP connection to a bridge process: framed JSON over its pipes, nothing hidden.

The lifecycle tests end the bridge in ways a well-behaved client never would
(closing its input mid-session, killing the editor), so they drive the pipes
themselves instead of pytest-lsp's client, which expects an orderly end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psutil

DEADLINE = 30.0
BRIDGE = [sys.executable, "-m", "lsp_bridge"]


def write_config(path: Path, servers: dict[str, Sequence[str]]) -> Path:
    """An mcp.json with one stdio server per entry (name -> command line)."""
    config = {name: {"command": command[0], "args": list(command[1:])} for name, command in servers.items()}
    path.write_text(json.dumps({"mcpServers": config}))
    return path


def tree(pid: int) -> list[psutil.Process]:
    """`pid` and every live process below it."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def gone(process: psutil.Process) -> bool:
    """True once the process no longer runs (a zombie waiting to be reaped counts as gone)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_until(ready: Callable[[], bool], deadline: float, what: str) -> None:
    """Look at `ready()` until it holds; fail saying `what` after `deadline` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while not ready():
        if loop.time() > end:
            raise AssertionError(f"not within {deadline:g} s: {what}")
        await asyncio.sleep(0.02)  # other processes' states: there is no event to wait on


class RawBridge:
    """One bridge process and its stdin/stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> RawBridge:
        process = await asyncio.create_subprocess_exec(
            *BRIDGE,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        return self.process.pid

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                header = await stdout.readline()
                if not header:
                    self._changed.set()
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(await stdout.readexactly(length))
            if "method" in message and "id" in message:  # a request from the server: say yes
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)
            elif (future := self._pending.pop(message.get("id"), None)) is not None and not future.done():
                future.set_result(message)
            self._changed.set()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any, deadline: float = DEADLINE) -> dict[str, Any]:
        """The whole response message (with `result` or `error`)."""
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, deadline)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, process_id: int | None = None, options: Any = None) -> dict[str, Any]:
        capabilities = {"workspace": {"applyEdit": True}, "textDocument": {"completion": {}}}
        params = {"processId": process_id, "rootUri": None, "capabilities": capabilities}
        if options is not None:
            params["initializationOptions"] = options
        answer = await self.request("initialize", params)
        self.notify("initialized", {})
        return answer

    async def log_line(self, ready: Callable[[str], bool], deadline: float = DEADLINE) -> str:
        """The first `window/logMessage` text that satisfies `ready`."""

        def found() -> str | None:
            for message in self.notifications:
                text = message.get("params", {}).get("message", "")
                if message["method"] == "window/logMessage" and ready(text):
                    return str(text)
            return None

        async def loop() -> str:
            while (text := found()) is None:
                if self.process.stdout is not None and self._reader.done():
                    raise AssertionError("the bridge ended before logging the line")
                self._changed.clear()
                await self._changed.wait()
            return text

        return await asyncio.wait_for(loop(), deadline)

    def open(self, uri: str, text: str, language_id: str = "markdown") -> None:
        document = {"uri": uri, "languageId": language_id, "version": 1, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})

    async def complete(self, uri: str, line: int, character: int, trigger: str | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        if trigger is not None:
            params["context"] = {"triggerKind": 2, "triggerCharacter": trigger}
        return await self.request("textDocument/completion", params)

    async def kill(self) -> None:
        """Make sure the process and everything it started are gone (after a test that failed half-way)."""
        for process in reversed(tree(self.pid)):
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        await self.process.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
