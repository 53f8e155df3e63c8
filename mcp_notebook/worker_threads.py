"""The threads blocking work runs in, off the event loop, in every host: the one way our code does so.

Everything that would block the loop goes through `run_off_loop`: the
service's start and close, the sources' reloads and polls, the protocol's
renders and reads, the client's import of the SDK, the prompt lists
JupyterLab and the editors show (`catalog`, `jupyter.lab_api`,
`lsp_bridge.trust_prompt`) and the kernel's periodic checks.

`run_off_loop(fn, *args)` is `anyio.to_thread.run_sync(fn, *args)` with one
difference that decides whether a host's process can exit: on an asyncio
loop run by the main thread (or another thread that is no daemon) the work
runs in this module's `concurrent.futures` pool, whose idle threads end when
the interpreter exits. anyio's worker threads are daemons only when the
loop's thread is one, and each ends only when the task that started the
first of them ends. A host whose loop is left without ending its tasks (a
Jupyter server interrupted with SIGINT and no terminal, which is how
JupyterHub stops a user's server) then never exits, until it is killed.

The work sees the caller's context variables. By default the caller waits
for the work even when it is cancelled (a reload or a render is never left
half done behind a closing server). With `abandon_on_cancel`, a cancelled
caller returns at once and the work finishes on its own, its result
dropped: for reads a shutdown need not wait for (a listing of kernels, a
stored catalog, a config file). On a loop whose thread is a daemon (the
background runtime's, under the magics and the kernel's server) anyio's
workers are daemons too, and end with that loop's tasks: the work is
anyio's there, as it is under another event loop (trio).
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["run_off_loop"]

T = TypeVar("T")

POOL_SIZE = 40  # as many threads as anyio's default limiter lets work at once

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="mcp-notebook-worker")
        return _pool


async def run_off_loop(fn: Callable[..., T], *args: Any, abandon_on_cancel: bool = False) -> T:
    """`fn(*args)` in a worker thread, awaited without blocking the loop (module docstring)."""
    try:
        asyncio.get_running_loop()
        pooled = not threading.current_thread().daemon
    except RuntimeError:  # not asyncio
        pooled = False
    if not pooled:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=abandon_on_cancel)
    context = contextvars.copy_context()
    work = asyncio.wrap_future(_executor().submit(context.run, fn, *args))
    if abandon_on_cancel:
        return await work  # anyio is not imported for it: the SDK's import is such work
    import anyio

    with anyio.CancelScope(shield=True):
        result = await work
    return result
