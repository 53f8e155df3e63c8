"""Running kernels as MCP servers: found through their connection files, followed as they come and go.

The watcher polls the Jupyter runtime directory, and the kernels of other
runtime directories that left a pointer in the user's state directory
(`discovery.list_kernel_connections`): a directory listing and a few tiny JSON
reads, once a second by default. Polling rather than file events,
because a kernel that crashed leaves its file behind: only its dead process
tells, and `list_kernel_connections` checks that on every scan.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from ..config import ServerConfig
from ..discovery import KernelConnection, list_kernel_connections
from ..naming import kernel_server_name
from ..worker_threads import run_off_loop

__all__ = ["KernelWatcher", "to_kernel_server_configs"]

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _stem(connection: KernelConnection) -> str | None:
    """The kernel's name from its notebook (`kernel_server_name`), or None when its notebook is unknown."""
    name = kernel_server_name(connection.notebook_path, connection.kernel_id)
    return None if name == kernel_server_name(None, connection.kernel_id) else name


def to_kernel_server_configs(
    connections: Sequence[KernelConnection], taken: Collection[str] = ()
) -> dict[str, ServerConfig]:
    """One HTTP server entry per kernel, named as every client names it (`naming.kernel_server_name`).

    The stem is used when exactly one kernel has it and no configured server
    (`taken`) is called that already; otherwise the short kernel id tells them
    apart. The token travels as `Authorization: Bearer <token>`.
    """
    stems: dict[str, int] = {}
    for connection in connections:
        if (stem := _stem(connection)) is not None:
            stems[stem] = stems.get(stem, 0) + 1
    configs: dict[str, ServerConfig] = {}
    for connection in connections:
        stem = _stem(connection)
        name = stem if stem is not None and stems[stem] == 1 and stem not in taken else None
        if name is None:
            name = kernel_server_name(None, connection.kernel_id)
        if name in configs or name in taken:
            name = f"kernel-{_UNSAFE.sub('_', connection.kernel_id)}"
        headers = {"Authorization": f"Bearer {connection.token}"} if connection.token else None
        configs[name] = ServerConfig(name=name, url=connection.url, headers=headers, source=connection.path)
    return configs


class KernelWatcher:
    """Keeps the kernel servers of a pool in step with the runtime directory."""

    def __init__(
        self,
        on_servers: Callable[[Mapping[str, ServerConfig]], None],
        *,
        directory: Path | None = None,
        interval: float = 1.0,
        taken: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        self._on_servers = on_servers
        self._directory = directory
        self._interval = interval
        self._taken = taken
        self._current: dict[str, ServerConfig] | None = None
        self._task: asyncio.Task[None] | None = None

    async def scan(self) -> dict[str, ServerConfig]:
        """Look once; report the kernel servers when they changed. Returns them."""
        # Off the loop: a slow or network file system must not stall the editor.
        connections = await run_off_loop(list_kernel_connections, self._directory, abandon_on_cancel=True)
        configs = to_kernel_server_configs(connections, self._taken())
        if configs != self._current:
            self._current = configs
            log.info("kernels: %s", ", ".join(configs) or "none")
            self._on_servers(configs)
        return configs

    def start(self) -> None:
        """Scan now and then every `interval` seconds, in the background."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="mcp-kernel-watcher")

    async def _run(self) -> None:
        while True:
            try:
                await self.scan()
            except Exception:  # a bad scan must not end the watching
                log.exception("scanning for kernels failed")
            await asyncio.sleep(self._interval)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
