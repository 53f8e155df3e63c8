"""The one bridge from synchronous code (magics, scripts) to our async clients.

`BackgroundRuntime` owns a daemon thread running an asyncio event loop (an
anyio blocking portal). Synchronous callers hand it coroutine functions with
`call()`, which blocks until the result arrives, honours a deadline, and turns
Ctrl-C into cancellation of the request before re-raising `KeyboardInterrupt`.
Because the loop lives in its own thread, this works the same in a Jupyter
kernel (whose main thread already runs a loop), in plain IPython and in
scripts: nothing here calls `asyncio.run` on the caller's thread. anyio is
imported when the loop starts, not with this module (`%load_ext` stays light).

Code running on the loop during a `call()` can hand work back to the calling
thread with `run_in_caller()`; that is how a prompt that needs user input can
use `input()` (which in a kernel must run on the main thread).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import contextvars
import logging
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import anyio
    import anyio.from_thread

__all__ = ["BackgroundRuntime", "get_runtime", "run_in_caller"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How long Ctrl-C waits for a cancelled request to wind down (it sends a cancel notification).
_CANCEL_GRACE = 5.0
# A signal that lands just before the calling thread blocks sets Python's flag without waking the wait (a lost
# wakeup), and the thread would wait for the request forever: its waits are bounded, so that Ctrl-C is seen
# within this many seconds, whenever it lands.
_WAKE_EVERY = 0.25
_SHUTDOWN_GRACE = 15.0


class _Finished:
    """Put in a call's inbox when its task has ended (however it ended)."""


class _Interrupted(Exception):
    """How a call's task ends after Ctrl-C cancelled it (nobody reads it: the caller re-raises)."""


_FINISHED = _Finished()
_Work = tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple[Any, ...]]
_caller_inbox: contextvars.ContextVar[queue.SimpleQueue[_Work | _Finished] | None] = contextvars.ContextVar(
    "mcp_notebook_caller_inbox", default=None
)


class BackgroundRuntime:
    """A daemon thread with an event loop that synchronous code can call into.

    Started on first use, stopped by `shutdown()`, and started again on the
    next use after that.
    """

    def __init__(self, name: str = "mcp-notebook-runtime") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._stop: anyio.Event | None = None
        self._shutdown_hooks: list[Callable[[], Awaitable[None]]] = []

    @property
    def running(self) -> bool:
        return self._portal is not None and self._thread is not None and self._thread.is_alive()

    @property
    def thread(self) -> threading.Thread | None:
        """The event-loop thread, while it runs."""
        return self._thread if self.running else None

    def _ensure_started(self) -> anyio.from_thread.BlockingPortal:
        with self._lock:
            if self._portal is not None and self._thread is not None and self._thread.is_alive():
                return self._portal
            ready = threading.Event()
            failure: list[BaseException] = []

            def run() -> None:
                import anyio

                try:
                    anyio.run(self._main, ready, backend="asyncio")
                except BaseException as error:  # surfaced to the thread that started us
                    failure.append(error)
                    ready.set()

            thread = threading.Thread(target=run, name=self._name, daemon=True)
            thread.start()
            ready.wait()
            if failure or self._portal is None:
                raise RuntimeError(f"the {self._name} event loop did not start") from (failure[0] if failure else None)
            self._thread = thread
            return self._portal

    async def _main(self, ready: threading.Event) -> None:
        import anyio
        import anyio.from_thread

        self._stop = anyio.Event()
        async with anyio.from_thread.BlockingPortal() as portal:
            self._portal = portal
            ready.set()
            await self._stop.wait()
            await portal.stop(cancel_remaining=True)

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any, timeout: float | None = None) -> T:
        """Run `await fn(*args)` on the loop and return its result, blocking this thread.

        Raises `TimeoutError` after `timeout` seconds (the request is cancelled
        first). Ctrl-C cancels the request, waits briefly for it to wind down,
        and re-raises `KeyboardInterrupt`.
        """
        if threading.current_thread() is self._thread:
            raise RuntimeError("call() on the runtime's own thread would wait for itself; await the coroutine instead")
        portal = self._ensure_started()
        inbox: queue.SimpleQueue[_Work | _Finished] = queue.SimpleQueue()
        # Ctrl-C can land anywhere on this thread, even before start_task_soon returns the
        # future: cancelling through a scope the task publishes on the loop covers every moment.
        scope: list[anyio.CancelScope] = []
        interrupted = False

        async def run() -> T:
            import anyio

            _caller_inbox.set(inbox)
            try:
                with anyio.CancelScope() as cancel, anyio.fail_after(timeout):
                    scope.append(cancel)
                    if interrupted:
                        cancel.cancel()
                    return await fn(*args)
                raise _Interrupted  # the scope swallowed the cancellation Ctrl-C asked for
            finally:
                inbox.put(_FINISHED)

        async def cancel_run() -> None:
            nonlocal interrupted
            interrupted = True  # on the loop, so run() sees it if it has not started yet
            for cancel in scope:
                cancel.cancel()

        try:
            future = portal.start_task_soon(run)
            self._serve_until_finished(inbox)
        except KeyboardInterrupt:
            portal.start_task_soon(cancel_run)
            self._drain_after_cancel(inbox)
            raise
        return future.result()

    @staticmethod
    def _serve_until_finished(inbox: queue.SimpleQueue[_Work | _Finished]) -> None:
        """Wait for the call to end, running on this thread what it hands back meanwhile."""
        while True:
            try:
                item = inbox.get(timeout=_WAKE_EVERY)
            except queue.Empty:
                continue  # Python runs a Ctrl-C the wait missed here, raising KeyboardInterrupt
            if isinstance(item, _Finished):
                return
            work, fn, args = item
            if not work.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except Exception as error:
                work.set_exception(error)
            except KeyboardInterrupt:
                work.cancel()
                raise
            else:
                work.set_result(result)

    @staticmethod
    def _drain_after_cancel(inbox: queue.SimpleQueue[_Work | _Finished]) -> None:
        try:
            while True:
                item = inbox.get(timeout=_CANCEL_GRACE)
                if isinstance(item, _Finished):
                    return
                item[0].cancel()  # nobody waits for work handed back after Ctrl-C
        except queue.Empty:
            logger.warning("a cancelled MCP request did not finish within %s s", _CANCEL_GRACE)

    def start(self, fn: Callable[..., Awaitable[T]], *args: Any) -> concurrent.futures.Future[T]:
        """Schedule `fn(*args)` on the loop and return a future for its result, without waiting."""
        return self._ensure_started().start_task_soon(fn, *args)

    def on_shutdown(self, hook: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Await `hook()` on the loop when the runtime shuts down (to close connections).

        Returns a function that removes the hook.
        """
        with self._lock:
            self._shutdown_hooks.append(hook)

        def remove() -> None:
            with self._lock:
                if hook in self._shutdown_hooks:
                    self._shutdown_hooks.remove(hook)

        return remove

    def shutdown(self, timeout: float = _SHUTDOWN_GRACE) -> None:
        """Run the shutdown hooks, stop the loop and join its thread; safe to call twice."""
        with self._lock:
            portal, thread, stop = self._portal, self._thread, self._stop
            hooks, self._shutdown_hooks = self._shutdown_hooks, []
            self._portal = self._thread = self._stop = None
        if portal is None or thread is None or stop is None or not thread.is_alive():
            return

        async def finish() -> None:
            import anyio

            with anyio.move_on_after(timeout):
                for hook in reversed(hooks):
                    try:
                        await hook()
                    except Exception:
                        logger.exception("an MCP shutdown hook failed")
            stop.set()

        with contextlib.suppress(RuntimeError):  # the loop is already stopping
            portal.call(finish)
        thread.join(timeout)


async def run_in_caller(fn: Callable[..., T], *args: Any) -> T:
    """Run the blocking `fn(*args)` on the thread blocked in `BackgroundRuntime.call()`.

    Outside a `call()` (no thread is waiting), `fn` runs in a worker thread.
    """
    import asyncio

    from .worker_threads import run_off_loop

    inbox = _caller_inbox.get()
    if inbox is None:
        return await run_off_loop(fn, *args, abandon_on_cancel=True)

    work: concurrent.futures.Future[T] = concurrent.futures.Future()
    inbox.put((work, fn, args))
    return await asyncio.wrap_future(work)


_runtime: BackgroundRuntime | None = None
_runtime_lock = threading.Lock()


def get_runtime() -> BackgroundRuntime:
    """The process-wide runtime (created on first use, stopped at interpreter exit)."""
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = BackgroundRuntime()
            atexit.register(_runtime.shutdown)
        return _runtime
