"""Running allowed magics for clients: on the kernel's main thread, between cells, output captured.

The MCP server answers on a background thread, but the shell is not thread
safe: a magic must run where cells run, and never while one is running.
`MainThreadScheduler` hands a function to the kernel's main event loop (the
only thread-safe entry into it is `IOLoop.add_callback`), and holds it back
while a cell executes (between the shell's `pre_execute` and `post_execute`
events, which also covers cells that `await`). The server thread waits for
the result with a deadline; a function whose caller gave up never runs.

`run_magic` executes one invocation with IPython's `capture_output` and
returns what it printed, displayed and returned, as plain data. It calls the
magic's function itself, with the line exactly as built from the client's
arguments: never through `run_line_magic`, whose expansion of `{expr}` and
`$var` would evaluate code a client wrote. Whatever the magic raises
(`SystemExit` and `KeyboardInterrupt` too) becomes a `MagicExecutionError`,
so the server keeps serving. While it runs, interrupting the kernel (its stop
button, Ctrl-C) stops it, and `LiveMagicCall.stop` does the same for a magic
that ran past its time limit.
"""

from __future__ import annotations

import _thread
import asyncio
import concurrent.futures
import contextlib
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from IPython.utils.capture import capture_output

from ..exceptions import MagicExecutionError
from ..sources.magics import CapturedOutput, MagicInvocation

__all__ = ["LiveMagicCall", "MagicExecutionError", "MainThreadScheduler", "create_kernel_scheduler", "run_magic"]

T = TypeVar("T")

Post = Callable[[Callable[[], None]], None]
"""Queues a callable onto the kernel's main thread; must be safe to call from any thread."""


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
            except Exception as error:  # handed to the waiting thread, which re-raises it
                future.set_exception(error)
            except BaseException as error:
                # SystemExit or KeyboardInterrupt re-raised on the server's thread would end the server.
                future.set_exception(RuntimeError(f"stopped by {type(error).__name__}: {error}"))
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


class LiveMagicCall:
    """One live magic call, to run on the kernel's main thread; `stop` interrupts it from any thread.

    The call is a function of no arguments (what `MainThreadScheduler.run`
    takes). Until it starts, or once it has finished, `stop` does nothing, so
    a late stop can never interrupt the user's next cell.
    """

    def __init__(self, shell: Any, invocation: MagicInvocation) -> None:
        self.shell = shell
        self.invocation = invocation
        self.finished = threading.Event()
        self._lock = threading.Lock()
        self._state = "waiting"  # running, then done
        self._interruptible = False
        self._main_thread: int | None = None
        self.stop_reason: str | None = None

    @property
    def started(self) -> bool:
        return self._state != "waiting"

    def __call__(self) -> CapturedOutput:
        with self._lock:
            if self._state != "waiting":
                raise RuntimeError("a live magic call runs once")
            self._state = "running"
        try:
            return run_magic(self.shell, self.invocation, self)
        finally:
            self._finish()
            self.finished.set()

    def _begin_interruptible(self) -> None:
        with self._lock:
            self._interruptible = True
            self._main_thread = threading.get_ident()

    def _finish(self) -> None:
        with self._lock:
            self._state = "done"
            self._interruptible = False

    def stop(self, reason: str) -> str:
        """Interrupt the call if it is running: "stopped", "not running", or "cannot stop" (not interruptible)."""
        with self._lock:
            if self._state != "running":
                return "not running"
            if not self._interruptible or self._main_thread is None:
                return "cannot stop"
            self.stop_reason = reason
            if sys.platform == "win32":
                _thread.interrupt_main()
            else:
                # A real signal, so that a magic blocked in a system call (a sleep, a read) wakes up too.
                signal.pthread_kill(self._main_thread, signal.SIGINT)
            return "stopped"


def _call_magic(shell: Any, invocation: MagicInvocation) -> Any:
    """Call the magic's function with its line as given: no `{expr}` or `$var` expansion, ever."""
    title = ("%" if invocation.kind == "line" else "%%") + invocation.name
    find = shell.find_line_magic if invocation.kind == "line" else shell.find_cell_magic
    fn = find(invocation.name)
    if fn is None:
        raise MagicExecutionError(title, "this kernel has no such magic (any more)")
    options: dict[str, Any] = {}
    if getattr(fn, "needs_local_scope", False):  # as the shell does for a cell: the user's namespace
        options["local_ns"] = shell.user_ns
    with shell.builtin_trap:
        if invocation.kind == "line":
            return fn(invocation.line, **options)
        return fn(invocation.line, invocation.body or "", **options)


def _restore_sigint(previous: Any) -> bool:
    """Put the kernel's own SIGINT handler back; True when an interrupt arrived meanwhile."""
    late = False
    while True:
        try:
            signal.signal(signal.SIGINT, previous)
        except KeyboardInterrupt:  # signal.signal runs pending handlers first
            late = True
            continue
        return late


_NOTHING = object()


def run_magic(shell: Any, invocation: MagicInvocation, call: LiveMagicCall | None = None) -> CapturedOutput:
    """Run one magic invocation now (main thread only), capturing its output; raises `MagicExecutionError`.

    Between cells ipykernel ignores SIGINT; on the main thread the default
    handler is installed for the duration, so interrupting the kernel (or
    `call.stop`) raises `KeyboardInterrupt` in the magic and ends it.
    """
    title = ("%" if invocation.kind == "line" else "%%") + invocation.name
    previous: Any = None
    installed = False
    on_main = threading.current_thread() is threading.main_thread()
    value: Any = _NOTHING
    try:
        try:
            if on_main:
                previous = signal.signal(signal.SIGINT, signal.default_int_handler)
                installed = True
                if call is not None:
                    call._begin_interruptible()
            with capture_output() as captured:
                value = _call_magic(shell, invocation)
        finally:
            if call is not None:
                call._finish()  # from here on `stop` sends nothing
            if installed:
                # None: the handler was not set from Python; Python's own is the safe one to leave.
                _restore_sigint(previous if previous is not None else signal.default_int_handler)
    except KeyboardInterrupt as error:
        if value is _NOTHING:
            reason = (call.stop_reason if call is not None else None) or "it was interrupted (the kernel's stop button)"
            raise MagicExecutionError(title, reason) from error
        # The magic had finished when the interrupt came: its result stands.
    except MagicExecutionError:
        raise
    except SystemExit as error:
        message = f"it tried to end the kernel (SystemExit: {error.code!r}); the kernel and its server go on"
        raise MagicExecutionError(title, message) from error
    except BaseException as error:  # any failure of the magic is the client's answer, never the server's end
        raise MagicExecutionError(title, str(error) or type(error).__name__) from error
    displays = tuple(dict(output.data) for output in captured.outputs if output.data)
    return CapturedOutput(
        stdout=captured.stdout,
        stderr=captured.stderr,
        displays=displays,
        result=_format_result(shell, value),
    )
