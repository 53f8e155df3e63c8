"""Running a kernel's MCP server over HTTP on the background runtime, watching its notebook and its session.

All run as tasks on the runtime's event loop (`runtime.get_runtime()`), so
the kernel's main thread is never blocked by network or file-system waits.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import anyio

from ..runtime import get_runtime
from ..worker_threads import run_off_loop

__all__ = ["HttpEndpoint", "start_endpoint", "start_repeating", "start_watch"]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 10.0


class HttpEndpoint:
    """A server listening on 127.0.0.1; `stop()` closes the port and ends every connection."""

    def __init__(self, url: str, stop: Callable[[], None]) -> None:
        self.url = url
        self._stop = stop

    def stop(self) -> None:
        self._stop()


def start_endpoint(server: Any, *, port: int, token: str | None, token_hint: str | None = None) -> HttpEndpoint:
    """Serve `server` (a `PromptServer`) over Streamable HTTP at `http://127.0.0.1:PORT/mcp`; port 0 picks one.

    `token_hint` says, in a 401's message, where a client finds the token.
    Returns once requests are served; raises `OSError` when the port cannot be bound.
    """
    from ..transports.http import serve_http

    runtime = get_runtime()
    ready = concurrent.futures.Future[tuple[str, anyio.Event]]()

    async def serve() -> None:
        shutdown = anyio.Event()

        def on_ready(url: str) -> None:
            ready.set_result((url, shutdown))

        await serve_http(
            server, host=HOST, port=port, token=token, on_ready=on_ready, shutdown=shutdown, token_hint=token_hint
        )

    future = runtime.start(serve)
    future.add_done_callback(lambda done: ready.cancel() if not ready.done() else None)
    try:
        url, shutdown = ready.result(timeout=_START_TIMEOUT)
    except concurrent.futures.CancelledError:
        future.result()  # the server ended before it was ready: raise why
        raise RuntimeError("the kernel's MCP server stopped as soon as it started") from None
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise RuntimeError(f"the kernel's MCP server did not start within {_START_TIMEOUT:.0f} s") from None

    def stop() -> None:
        with contextlib.suppress(RuntimeError):  # the runtime is already down (interpreter exit)
            runtime.call(_set, shutdown, timeout=_STOP_TIMEOUT)
        try:
            future.result(timeout=_STOP_TIMEOUT)
        except concurrent.futures.TimeoutError:
            future.cancel()
            log.warning("the kernel's MCP server did not stop within %s s; cancelled", _STOP_TIMEOUT)
        except concurrent.futures.CancelledError:
            pass
        except Exception:
            log.exception("the kernel's MCP server failed while stopping")

    return HttpEndpoint(url, stop)


async def _set(event: anyio.Event) -> None:
    event.set()


def start_watch(service: Any) -> Callable[[], None]:
    """Reload what `service` (a `NotebookService`) serves as it is saved; returns a function that stops it.

    Returns once the watch is in place, so no save made after `%mcp serve` is missed.
    """
    runtime = get_runtime()
    ready = concurrent.futures.Future[None]()

    def on_ready() -> None:
        if not ready.done():
            ready.set_result(None)

    async def watch() -> None:
        await service.watch(ready=on_ready)

    future = runtime.start(watch)
    future.add_done_callback(lambda _: on_ready())  # a watch that failed must not keep `%mcp serve` waiting
    try:
        ready.result(timeout=_START_TIMEOUT)
    except concurrent.futures.TimeoutError:
        log.warning("the notebook watch was not ready within %s s; saves may be missed", _START_TIMEOUT)
    if future.done() and not future.cancelled() and future.exception() is not None:
        log.warning("watching the notebook failed: %s", future.exception())

    def stop() -> None:
        future.cancel()

    return stop


def start_repeating(check: Callable[[], None], interval: float) -> Callable[[], None]:
    """Call `check` every `interval` seconds, on a worker thread (it may block), until the returned function is called.

    A failing call is logged and the next one made as planned.
    """
    runtime = get_runtime()

    async def repeat() -> None:
        while True:
            await anyio.sleep(interval)
            try:
                await run_off_loop(check, abandon_on_cancel=True)
            except Exception:
                log.exception("a periodic check of the kernel's MCP server failed")

    future = runtime.start(repeat)

    def stop() -> None:
        future.cancel()

    return stop
