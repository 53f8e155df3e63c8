"""`run_off_loop`: where blocking work runs, and what the caller sees of it."""

from __future__ import annotations

import asyncio
import contextvars
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from mcp_notebook.runtime import BackgroundRuntime
from mcp_notebook.worker_threads import run_off_loop

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="none")


def where() -> tuple[str, bool, str]:
    thread = threading.current_thread()
    return thread.name, thread.daemon, request_id.get()


def test_on_the_main_threads_asyncio_loop_the_work_runs_in_the_pool_with_the_callers_context() -> None:
    async def main() -> tuple[str, bool, str]:
        request_id.set("r-7")
        return await run_off_loop(where)

    name, daemon, seen = asyncio.run(main())

    assert name.startswith("mcp-notebook-worker")
    assert seen == "r-7"
    assert threading.current_thread() is threading.main_thread()
    assert daemon is False  # the pool's idle threads end when the interpreter does, not before


def test_on_a_daemon_loop_thread_the_work_is_anyios_and_its_threads_are_daemons() -> None:
    runtime = BackgroundRuntime()
    try:
        name, daemon, _ = runtime.call(run_off_loop, where)
    finally:
        runtime.shutdown()

    assert not name.startswith("mcp-notebook-worker")
    assert daemon is True


def test_a_cancelled_caller_waits_for_the_work_and_the_loop_keeps_switching() -> None:
    started = threading.Event()
    release = threading.Event()
    finished: list[str] = []

    def work() -> None:
        started.set()
        release.wait(30)
        finished.append("done")

    async def main() -> None:
        returned = anyio.Event()

        async def caller(scope: anyio.CancelScope) -> None:
            with scope:
                await run_off_loop(work)
            returned.set()

        async with anyio.create_task_group() as tasks:
            scope = anyio.CancelScope()
            tasks.start_soon(caller, scope)
            await anyio.to_thread.run_sync(started.wait)
            scope.cancel()  # as a client's cancellation or a closing session does
            for _ in range(100):  # the loop switches, and the caller has every chance to return
                await anyio.lowlevel.checkpoint()
            assert not returned.is_set()  # cancelled, yet still waiting for the work
            release.set()
            await returned.wait()
            assert finished == ["done"]

    anyio.run(main, backend="asyncio")


def test_an_exception_in_the_work_reaches_the_caller() -> None:
    def broken() -> None:
        raise ValueError("bad cell")

    async def main() -> None:
        await run_off_loop(broken)

    with pytest.raises(ValueError, match="bad cell"):
        asyncio.run(main())


def _abandoning_caller_returns_at_once(run: Callable[[Callable[[], Any]], object]) -> list[str]:
    """Cancel a caller of `run_off_loop(work, abandon_on_cancel=True)` while the work blocks, on the loop `run`
    runs; the caller must return before the work is released. What the work did, once released."""
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    seen: list[str] = []

    def work() -> None:
        started.set()
        release.wait(30)
        seen.append("done")
        finished.set()

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            scope = anyio.CancelScope()

            async def caller() -> None:
                with scope:
                    await run_off_loop(work, abandon_on_cancel=True)

            tasks.start_soon(caller)
            await anyio.to_thread.run_sync(started.wait)
            scope.cancel()
        # The task group ended: the caller returned while the work was still blocked.
        assert not finished.is_set()

    try:
        run(main)
    finally:
        release.set()
    assert finished.wait(30)
    return seen


def test_with_abandon_on_cancel_a_cancelled_caller_returns_and_the_work_ends_on_its_own() -> None:
    assert _abandoning_caller_returns_at_once(lambda main: anyio.run(main, backend="asyncio")) == ["done"]


def test_with_abandon_on_cancel_on_a_daemon_loop_thread_too() -> None:
    runtime = BackgroundRuntime()
    try:
        assert _abandoning_caller_returns_at_once(runtime.call) == ["done"]
    finally:
        runtime.shutdown()


def test_no_other_module_sends_work_to_a_thread_pool_of_its_own() -> None:
    """`run_off_loop` is the one way off the loop: no `asyncio.to_thread`, `anyio.to_thread` or executor of the
    loop elsewhere in either package."""
    root = Path(__file__).resolve().parents[1]
    offenders = []
    for package in ("mcp_notebook", "lsp_bridge"):
        for path in sorted((root / package).rglob("*.py")):
            if path.name == "worker_threads.py":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"\bto_thread\b|\brun_in_executor\b", line):
                    offenders.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert offenders == []
