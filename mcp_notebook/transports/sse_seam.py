"""The one reach into sse-starlette's internals (the SDK's Server-Sent Events), watched by a canary test.

sse-starlette (3.x, since its per-thread shutdown watcher) starts one task on
each event loop that streams an event: `_shutdown_watcher`, which ends when
uvicorn stops. Under another server it never ends, and a loop closed with it
pending prints "Task was destroyed but it is pending!". The Jupyter Server
extension, which runs the application on tornado's loop, ends it as it stops
(`end_shutdown_watcher`). Its public switch, `AppStatus.should_exit`, would
end every stream of the process for good, so it is not used.

`missing_touchpoints()` names what an sse-starlette release moved; the canary
(tests/transports/test_sse_seam.py) fails on it.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from sse_starlette import sse

__all__ = ["end_shutdown_watcher", "missing_touchpoints"]


def _watcher() -> Callable[..., Any] | None:
    """sse-starlette's watcher coroutine function; None in a release without one (before the per-loop watcher)."""
    found = getattr(sse, "_shutdown_watcher", None)
    return found if inspect.iscoroutinefunction(found) else None


async def end_shutdown_watcher() -> None:
    """End sse-starlette's shutdown watcher on the running loop, if it runs, and wait until it has ended."""
    watcher = _watcher()
    if watcher is None:
        return
    code = watcher.__code__
    current = asyncio.current_task()
    tasks = [
        task
        for task in asyncio.all_tasks()
        if task is not current and getattr(task.get_coro(), "cr_code", None) is code
    ]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks)


def missing_touchpoints() -> list[str]:
    """What this module expects of the installed sse-starlette and does not find (empty: all there)."""
    starter = getattr(sse, "_ensure_watcher_started_on_this_loop", None)
    if starter is None:
        return [] if _watcher() is None else ["_ensure_watcher_started_on_this_loop"]  # no watcher: nothing to end
    missing = [] if _watcher() is not None else ["_shutdown_watcher (a coroutine function)"]
    if "create_task(_shutdown_watcher())" not in inspect.getsource(starter):
        missing.append("_ensure_watcher_started_on_this_loop starts _shutdown_watcher() as a task of the loop")
    return missing
