"""The background runtime: synchronous callers drive async work on one daemon loop thread."""

from __future__ import annotations

import _thread
import asyncio
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_notebook.runtime import BackgroundRuntime, get_runtime, run_in_caller

DEADLINE = 10.0


@pytest.fixture
def runtime() -> Iterator[BackgroundRuntime]:
    runtime = BackgroundRuntime(name="test-runtime")
    yield runtime
    runtime.shutdown()


class Forever:
    """A request that never finishes by itself: `started` once it runs, `cancelled` once it is cancelled."""

    def __init__(self) -> None:
        self.started, self.cancelled = threading.Event(), threading.Event()

    async def __call__(self) -> None:
        self.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise


@contextmanager
def ctrl_c_once(event: threading.Event, deliver: Callable[[], None] | None = None) -> Iterator[threading.Event]:
    """Deliver Ctrl-C to the main thread once `event` is set, while the block runs: with `deliver`, or as a
    terminal or a kernel does (SIGINT). After `DEADLINE` without `event`, all the same, so that a test fails on
    what it asserts of `event` instead of waiting for a call nothing would interrupt. Should the block still
    run `DEADLINE` after that, a real SIGINT ends it and sets the event this yields, so that a test fails on it
    instead of hanging. Never after the block."""
    main = threading.main_thread().ident
    assert main is not None
    over, forced = threading.Event(), threading.Event()

    def sigint() -> None:
        signal.pthread_kill(main, signal.SIGINT)

    def interrupt() -> None:
        event.wait(DEADLINE)
        if over.is_set():
            return
        (deliver or sigint)()
        if not over.wait(DEADLINE):
            forced.set()
            sigint()

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    try:
        yield forced
    finally:
        over.set()
        thread.join(DEADLINE)


def test_call_runs_the_coroutine_on_the_runtime_thread_and_returns_its_result(runtime: BackgroundRuntime) -> None:
    async def where(x: int) -> tuple[int, str]:
        await anyio.lowlevel.checkpoint()
        return x * 2, threading.current_thread().name

    assert runtime.call(where, 21) == (42, "test-runtime")
    assert runtime.thread is not None and runtime.thread.daemon


def test_call_works_while_the_calling_thread_runs_an_event_loop(runtime: BackgroundRuntime) -> None:
    async def answer() -> str:
        return "ok"

    async def like_a_kernel_cell() -> str:
        # A Jupyter cell runs inside the kernel's loop; a sync magic called from there must not nest loops.
        return runtime.call(answer)

    assert asyncio.run(like_a_kernel_cell()) == "ok"


def test_errors_of_the_coroutine_reach_the_caller_unchanged(runtime: BackgroundRuntime) -> None:
    async def fail() -> None:
        raise LookupError("nope")

    with pytest.raises(LookupError, match="nope"):
        runtime.call(fail)


def test_timeout_cancels_the_request_and_raises_timeout_error(runtime: BackgroundRuntime) -> None:
    forever = Forever()

    with pytest.raises(TimeoutError):
        runtime.call(forever, timeout=0.2)
    assert forever.cancelled.is_set()


@pytest.mark.usefixtures("sigint_raises_keyboard_interrupt")
def test_ctrl_c_cancels_the_request_then_reraises(runtime: BackgroundRuntime) -> None:
    forever = Forever()

    with pytest.raises(KeyboardInterrupt), ctrl_c_once(forever.started) as forced:
        runtime.call(forever)

    assert forever.started.is_set(), f"the request had not started {DEADLINE:g} s after the call"
    assert not forced.is_set(), f"the call had not seen Ctrl-C {DEADLINE:g} s after it landed"
    assert forever.cancelled.is_set()
    assert runtime.call(asyncio.sleep, 0, "still usable") == "still usable"


@pytest.mark.usefixtures("sigint_raises_keyboard_interrupt")
def test_ctrl_c_that_the_wait_misses_still_cancels_the_request(runtime: BackgroundRuntime) -> None:
    # A signal that lands just before the calling thread blocks sets Python's flag without waking the wait.
    # `_thread.interrupt_main()` does just that: it sets the flag and wakes nothing.
    forever = Forever()

    with pytest.raises(KeyboardInterrupt), ctrl_c_once(forever.started, deliver=_thread.interrupt_main) as forced:
        runtime.call(forever)

    assert forever.started.is_set(), f"the request had not started {DEADLINE:g} s after the call"
    assert not forced.is_set(), f"the call had not seen Ctrl-C {DEADLINE:g} s after it landed"
    assert forever.cancelled.is_set()
    assert runtime.call(asyncio.sleep, 0, "still usable") == "still usable"


def test_ctrl_c_landing_before_the_call_has_its_future_still_cancels_the_request(
    runtime: BackgroundRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    forever = Forever()

    portal = runtime._ensure_started()
    schedule = portal.start_task_soon
    calls = 0

    def schedule_then_interrupt(fn: Any, *args: Any) -> Any:
        # The signal lands after the task was handed to the loop, before its future is returned.
        nonlocal calls
        calls += 1
        future = schedule(fn, *args)
        if calls == 1:
            forever.started.wait(DEADLINE)
            raise KeyboardInterrupt
        return future

    monkeypatch.setattr(portal, "start_task_soon", schedule_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        runtime.call(forever)

    assert forever.cancelled.is_set()
    monkeypatch.undo()
    assert runtime.call(asyncio.sleep, 0, "still usable") == "still usable"


def test_run_in_caller_runs_blocking_work_on_the_calling_thread(runtime: BackgroundRuntime) -> None:
    async def ask() -> int | None:
        return await run_in_caller(threading.get_ident)

    assert runtime.call(ask) == threading.get_ident()


def test_errors_of_work_handed_back_reach_the_coroutine(runtime: BackgroundRuntime) -> None:
    def broken() -> None:
        raise ValueError("bad input")

    async def ask() -> str:
        try:
            await run_in_caller(broken)
        except ValueError as error:
            return f"caught {error}"
        return "not raised"

    assert runtime.call(ask) == "caught bad input"


def test_ctrl_c_inside_work_handed_back_cancels_the_request(runtime: BackgroundRuntime) -> None:
    cancelled = threading.Event()

    def typing_then_ctrl_c() -> str:
        raise KeyboardInterrupt  # what input() raises when the user presses Ctrl-C

    async def ask() -> str:
        try:
            return await run_in_caller(typing_then_ctrl_c)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise

    with pytest.raises(KeyboardInterrupt):
        runtime.call(ask)
    assert cancelled.is_set()


def test_run_in_caller_outside_a_call_uses_a_worker_thread(runtime: BackgroundRuntime) -> None:
    async def ask() -> int:
        return await run_in_caller(threading.get_ident)

    ident = runtime.start(ask).result(DEADLINE)

    assert runtime.thread is not None
    assert ident not in (threading.get_ident(), runtime.thread.ident)


def test_call_from_the_runtime_thread_is_refused(runtime: BackgroundRuntime) -> None:
    async def nested() -> None:
        async def inner() -> None:
            return None

        runtime.call(inner)

    with pytest.raises(RuntimeError, match="own thread"):
        runtime.call(nested)


def test_shutdown_awaits_hooks_stops_the_thread_and_a_later_call_restarts(runtime: BackgroundRuntime) -> None:
    closed: list[str] = []

    async def close_connections() -> None:
        await anyio.lowlevel.checkpoint()
        closed.append(threading.current_thread().name)

    async def current_thread() -> threading.Thread:
        return threading.current_thread()

    first = runtime.call(current_thread)
    runtime.on_shutdown(close_connections)
    old_thread = runtime.thread
    runtime.shutdown()

    assert closed == ["test-runtime"]
    assert old_thread is not None and not old_thread.is_alive()
    assert not runtime.running
    second = runtime.call(current_thread)
    assert second is not first and second.is_alive()


def test_removed_shutdown_hooks_are_not_run(runtime: BackgroundRuntime) -> None:
    ran: list[str] = []

    async def hook() -> None:
        ran.append("hook")

    runtime.call(asyncio.sleep, 0)
    remove = runtime.on_shutdown(hook)
    remove()
    runtime.shutdown()

    assert ran == []


def test_get_runtime_is_one_process_wide_runtime() -> None:
    assert get_runtime() is get_runtime()
