"""Running allowed magics for clients: on the kernel's main thread, between cells, output captured.

The MCP server answers on a background thread, but the shell is not thread
safe: a magic must run where cells run, and never while one is running.
`MainThreadScheduler` hands a function to the kernel's main event loop (the
only thread-safe entry into it is `IOLoop.add_callback`), and holds it back
while a cell executes (between the shell's `pre_execute` and `post_execute`
events, which also covers cells that `await`). The server thread waits for
the result with a deadline; a function whose caller gave up never runs.

`run_magic` executes one invocation with IPython's `capture_output` and
returns what it printed, displayed and returned, as plain data.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from IPython.utils.capture import capture_output

from ..exceptions import PromptExecutionError
from ..sources.magics import CapturedOutput, MagicInvocation

__all__ = ["MagicExecutionError", "MainThreadScheduler", "create_kernel_scheduler", "run_magic"]

T = TypeVar("T")

Post = Callable[[Callable[[], None]], None]
"""Queues a callable onto the kernel's main thread; must be safe to call from any thread."""


class MagicExecutionError(PromptExecutionError):
    """A live magic failed, or could not run in time; clients get its message (JSON-RPC -32603)."""

    def __init__(self, magic: str, message: str, prompt: str | None = None) -> None:
        self.magic = magic
        super().__init__(prompt or magic, f"{magic} failed: {message}")


class MainThreadScheduler:
    """Runs functions on the kernel's main thread, only between cells.

    Create it on the main thread; call `run` (or `submit`) from any other thread.
    """

    def __init__(self, shell: Any, post: Post) -> None:
        self._shell = shell
        self._post = post
        self._lock = threading.Lock()
        self._running_cells = 0
        self._waiting: deque[Callable[[], None]] = deque()
        self._closed = False
        shell.events.register("pre_execute", self.on_pre_execute)
        shell.events.register("post_execute", self.on_post_execute)

    def on_pre_execute(self) -> None:
        with self._lock:
            self._running_cells += 1

    def on_post_execute(self) -> None:
        with self._lock:
            self._running_cells = max(0, self._running_cells - 1)
            resume = self._running_cells == 0 and bool(self._waiting)
        if resume:
            # Not now: post_execute still runs inside the finishing cell. The loop calls us after it.
            self._post(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if self._running_cells or not self._waiting:
                    return
                job = self._waiting.popleft()
            job()

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Schedule `fn()` on the main thread, between cells; cancel the future to withdraw it."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        if self._closed:
            future.set_exception(RuntimeError("the kernel server has stopped"))
            return future

        def job() -> None:
            if not future.set_running_or_notify_cancel():
                return  # the caller gave up waiting: never run late
            try:
                result = fn()
            except BaseException as error:  # handed to the waiting thread, which re-raises it
                future.set_exception(error)
            else:
                future.set_result(result)

        def attempt() -> None:
            with self._lock:
                if self._running_cells:
                    self._waiting.append(job)
                    return
            job()

        self._post(attempt)
        return future

    async def run(self, fn: Callable[[], T], deadline: float) -> T:
        """Await `fn()` run on the main thread; `TimeoutError` if it has not finished in `deadline` seconds."""
        future = self.submit(fn)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), deadline)
        finally:
            future.cancel()

    def close(self) -> None:
        """Stop following the shell's cells; functions still waiting never run."""
        if self._closed:
            return
        self._closed = True
        for event, callback in (("pre_execute", self.on_pre_execute), ("post_execute", self.on_post_execute)):
            with contextlib.suppress(ValueError):  # already gone, e.g. the shell reset its events
                self._shell.events.unregister(event, callback)
        with self._lock:
            self._waiting.clear()


def create_kernel_scheduler(shell: Any) -> MainThreadScheduler | None:
    """A scheduler for an ipykernel shell (through its IO loop); None outside a kernel."""
    kernel = getattr(shell, "kernel", None)
    io_loop = getattr(kernel, "io_loop", None)
    add_callback = getattr(io_loop, "add_callback", None)
    if add_callback is None:
        return None
    return MainThreadScheduler(shell, add_callback)


def _format_result(shell: Any, value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    data, _ = shell.display_formatter.format(value)
    return dict(data) if data else None


def run_magic(shell: Any, invocation: MagicInvocation) -> CapturedOutput:
    """Run one magic invocation now (main thread only), capturing its output; raises `MagicExecutionError`."""
    title = ("%" if invocation.kind == "line" else "%%") + invocation.name
    try:
        with capture_output() as captured:
            if invocation.kind == "line":
                value = shell.run_line_magic(invocation.name, invocation.line)
            else:
                value = shell.run_cell_magic(invocation.name, invocation.line, invocation.body or "")
    except Exception as error:
        raise MagicExecutionError(title, str(error) or type(error).__name__) from error
    displays = tuple(dict(output.data) for output in captured.outputs if output.data)
    return CapturedOutput(
        stdout=captured.stdout,
        stderr=captured.stderr,
        displays=displays,
        result=_format_result(shell, value),
    )
