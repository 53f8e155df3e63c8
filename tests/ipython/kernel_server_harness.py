"""Helpers for the kernel server tests: a stand-in kernel main thread, a shell on it, SDK clients with the token."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp_notebook.ipython.kernel_server import (
    KernelServer,
    PromptMagics,
    kernel_prompt_state,
    serve_command,
    stop_command,
    unload_kernel_server,
)
from mcp_notebook.ipython.live_magics import MainThreadScheduler

DEADLINE = 20.0


class MainLoop:
    """A thread running an event loop: the tests' stand-in for a kernel's main thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="fake-kernel-main", daemon=True)
        self.thread.start()

    def post(self, fn: Callable[[], None]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def run(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the loop thread and wait for its result (everything posted earlier runs first)."""
        return asyncio.run_coroutine_threadsafe(self._call(fn), self.loop).result(DEADLINE)

    @staticmethod
    async def _call(fn: Callable[[], Any]) -> Any:
        return fn()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(DEADLINE)
        self.loop.close()


class Kernel:
    """A shell driven on a stand-in main thread, as a kernel would run it."""

    def __init__(self, shell: InteractiveShell, main: MainLoop) -> None:
        self.shell = shell
        self.main = main
        self.scheduler: MainThreadScheduler = main.run(lambda: MainThreadScheduler(shell, main.post))

    def cell(self, source: str) -> str:
        """Run a cell on the main thread; returns what it printed."""
        out = io.StringIO()

        def run() -> None:
            with contextlib.redirect_stdout(out):
                self.shell.run_cell(source)

        self.main.run(run)
        return out.getvalue()

    def serve(self, *argv: str) -> KernelServer:
        with contextlib.redirect_stdout(io.StringIO()):
            self.main.run(lambda: serve_command(self.shell, argv, scheduler=self.scheduler))
        server = kernel_prompt_state(self.shell).server
        assert server is not None
        return server

    def stop(self) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            self.main.run(lambda: stop_command(self.shell))


def isolate_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh Jupyter runtime directory for connection files, and no notebook named by jupyter-server."""
    folder = tmp_path / "runtime"
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("MCP_NOTEBOOK_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    return folder


@contextlib.contextmanager
def running_kernel() -> Iterator[Kernel]:
    """The shared shell with `%%prompt` on a stand-in main thread; its server, prompts and `ks_` names go after."""
    shell = InteractiveShell.instance()
    shell.register_magics(PromptMagics)
    main = MainLoop()
    kernel = Kernel(shell, main)
    try:
        yield kernel
    finally:
        main.run(lambda: unload_kernel_server(shell))
        kernel.scheduler.close()
        main.close()
        for name in [n for n in shell.user_ns if n.startswith("ks_")]:
            del shell.user_ns[name]


class Notifications:
    """Collects a handshake-era client's notifications; `wait_for(method)` waits for the next one of a kind."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._changed = asyncio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            self.seen.append(method)
            self._changed.set()

    async def wait_for(self, method: str, *, after: int = 0) -> None:
        async with asyncio.timeout(DEADLINE):
            while method not in self.seen[after:]:
                self._changed.clear()
                await self._changed.wait()


@contextlib.asynccontextmanager
async def connect(
    url: str, token: str | None, *, mode: str = "legacy", message_handler: Any = None, **options: Any
) -> AsyncIterator[Client]:
    """An SDK client of the kernel's server, sending the bearer token; `options` go to `Client`."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, message_handler=message_handler, **options) as client:
            yield client
