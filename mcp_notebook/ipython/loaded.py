"""What `%load_ext mcp_notebook` keeps for the parts of the extension imported later.

The widgets and this kernel's own server are imported on first use, by a
`%mcp` subcommand; they find the shell's servers and the SDK warm-up here,
never by importing `extension` (which imports the magic that imports them).
"""

from __future__ import annotations

import threading
from typing import Any

from .servers import ServerPool

__all__ = ["WARM_UP_THREAD", "forget_pool", "loaded_pool", "remember_pool", "wait_for_sdk_warm_up"]

WARM_UP_THREAD = "mcp-notebook-warm-up"

_pools: dict[int, ServerPool] = {}


def remember_pool(shell: Any, pool: ServerPool) -> None:
    """`shell`'s `%mcp` servers, from loading until `forget_pool`."""
    _pools[id(shell)] = pool


def forget_pool(shell: Any) -> None:
    _pools.pop(id(shell), None)


def loaded_pool(shell: Any) -> ServerPool | None:
    """The servers of `shell`'s `%mcp`, while the extension is loaded (for widget forms and pickers)."""
    return _pools.get(id(shell))


def wait_for_sdk_warm_up(timeout: float = 60.0) -> None:
    """Let the background import of the SDK finish before importing more of it on this thread.

    The SDK's client and server packages import each other; the same modules
    imported from two threads at once can come out half-initialised.
    """
    for thread in threading.enumerate():
        if thread.name == WARM_UP_THREAD and thread is not threading.current_thread():
            thread.join(timeout)
