"""Live reload: notebooks edited, added, renamed, deleted or broken on disk reach the registry within a second."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources.folder import NotebookFolderSource

DEADLINE = 1.0  # seconds from a save on disk to the new registry snapshot


class SnapshotWaiter:
    """Waits, with a deadline, until the registry's snapshot satisfies a condition.

    Reloads publish from a worker thread, so the listener wakes the waiting task through its loop.
    """

    def __init__(self, registry: PromptRegistry) -> None:
        self.registry = registry
        self.seen: list[RegistrySnapshot] = []
        self._changed = anyio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        registry.add_listener(self.on_snapshot)

    def on_snapshot(self, snapshot: RegistrySnapshot) -> None:
        self.seen.append(snapshot)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        self._changed.set()

    async def until(self, condition: Callable[[RegistrySnapshot], bool], deadline: float = DEADLINE) -> float:
        """Seconds it took for `condition` to hold; fails after `deadline`."""
        self._loop = asyncio.get_running_loop()
        start = time.monotonic()
        with anyio.fail_after(deadline):
            while not condition(self.registry.snapshot()):
                self._changed = anyio.Event()
                await self._changed.wait()
        return time.monotonic() - start


def _names(snapshot: RegistrySnapshot) -> set[str]:
    return {p.name for p in snapshot.prompts}


def _prompt_notebook(path: Path, *names: str) -> Path:
    return write(path, notebook(*(markdown(f"text of {name}", {"prompt": name}) for name in names)))


@asynccontextmanager
async def watching(source: NotebookFolderSource) -> AsyncIterator[None]:
    """Run `source.watch` while the block runs; the block starts once the watch is in place."""
    ready = anyio.Event()
    stop = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set))
        with anyio.fail_after(5):
            await ready.wait()
        yield
        stop.set()


@pytest.fixture
def registry() -> PromptRegistry:
    return PromptRegistry()


@pytest.fixture
def waiter(registry: PromptRegistry) -> SnapshotWaiter:
    return SnapshotWaiter(registry)


@pytest.fixture
def source(tmp_path: Path, registry: PromptRegistry) -> NotebookFolderSource:
    _prompt_notebook(tmp_path / "a.ipynb", "alpha")
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    return source


async def test_editing_a_notebook_updates_the_registry(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    async with watching(source):
        _prompt_notebook(tmp_path / "a.ipynb", "alpha", "alpha_two")
        await waiter.until(lambda s: _names(s) == {"alpha", "alpha_two"})


async def test_editing_a_notebook_in_place_updates_the_registry(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    async with watching(source):
        (tmp_path / "a.ipynb").write_text(
            (tmp_path / "a.ipynb").read_text().replace("text of alpha", "edited {{x}}"), encoding="utf-8"
        )
        await waiter.until(lambda s: [a.name for a in s.prompts[0].arguments] == ["x"])


async def test_adding_a_notebook_in_a_new_subfolder_publishes_it(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    async with watching(source):
        _prompt_notebook(tmp_path / "new" / "deeper" / "b.ipynb", "beta")
        await waiter.until(lambda s: _names(s) == {"alpha", "beta"})
    assert "new/deeper/b.ipynb" in source.notebooks


async def test_renaming_a_notebook_moves_its_prompts(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter, registry: PromptRegistry
) -> None:
    async with watching(source):
        (tmp_path / "a.ipynb").rename(tmp_path / "b.ipynb")
        await waiter.until(lambda s: (p := s.get("alpha")) is not None and p.origin == "b.ipynb")
    assert list(registry.groups()) == ["b.ipynb"]


async def test_renaming_a_folder_moves_the_prompts_inside(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    _prompt_notebook(tmp_path / "old" / "c.ipynb", "gamma")
    source.scan()
    async with watching(source):
        (tmp_path / "old").rename(tmp_path / "renamed")
        await waiter.until(lambda s: (p := s.get("gamma")) is not None and p.origin == "renamed/c.ipynb")


async def test_deleting_a_notebook_withdraws_its_prompts(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    _prompt_notebook(tmp_path / "b.ipynb", "beta")
    source.scan()
    async with watching(source):
        (tmp_path / "b.ipynb").unlink()
        await waiter.until(lambda s: _names(s) == {"alpha"})


async def test_a_corrupt_save_keeps_the_last_good_prompts_until_fixed(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    async with watching(source):
        (tmp_path / "a.ipynb").write_text('{"nbformat": 4, "cells": [{"cell_type"')
        await waiter.until(lambda s: any("a.ipynb" in w for w in s.warnings))
        assert _names(waiter.registry.snapshot()) == {"alpha"}
        assert "a.ipynb" in source.errors
        _prompt_notebook(tmp_path / "a.ipynb", "alpha_fixed")
        await waiter.until(lambda s: _names(s) == {"alpha_fixed"} and not s.warnings)
    assert source.errors == {}


async def test_each_change_in_a_row_reaches_the_registry(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    # How fast is measured by benchmarks/bench_reload.py; `until` fails after its deadline.
    async with watching(source):
        for round_ in range(3):
            _prompt_notebook(tmp_path / "a.ipynb", f"alpha{round_}")
            await waiter.until(lambda s, r=round_: _names(s) == {f"alpha{r}"})


async def test_checkpoint_files_never_reach_the_registry(
    source: NotebookFolderSource, tmp_path: Path, waiter: SnapshotWaiter
) -> None:
    async with watching(source):
        _prompt_notebook(tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb", "checkpoint")
        _prompt_notebook(tmp_path / "z.ipynb", "zulu")
        await waiter.until(lambda s: "zulu" in _names(s))
    assert all("checkpoint" not in _names(s) for s in waiter.seen)


async def test_a_notebook_saved_before_the_watch_started_is_not_missed(
    source: NotebookFolderSource, tmp_path: Path, registry: PromptRegistry
) -> None:
    _prompt_notebook(tmp_path / "late.ipynb", "late")
    async with watching(source):
        assert "late" in _names(registry.snapshot())


async def test_a_single_served_file_is_reloaded_when_replaced(tmp_path: Path, registry: PromptRegistry) -> None:
    path = _prompt_notebook(tmp_path / "solo.ipynb", "solo")
    _prompt_notebook(tmp_path / "neighbour.ipynb", "neighbour")
    source = NotebookFolderSource([path], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    async with watching(source):
        _prompt_notebook(tmp_path / "neighbour.ipynb", "neighbour_changed")
        _prompt_notebook(path, "solo_changed")
        await waiter.until(lambda s: _names(s) == {"solo_changed"})
    assert all(_names(s) <= {"solo", "solo_changed"} for s in waiter.seen)


async def test_setting_the_stop_event_ends_the_watch(source: NotebookFolderSource) -> None:
    ready = anyio.Event()
    stop = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set))
            await ready.wait()
            stop.set()
    assert stop.is_set()


async def test_cancelling_the_watch_ends_it(source: NotebookFolderSource) -> None:
    ready = anyio.Event()
    ended = anyio.Event()

    async def watch() -> None:
        try:
            await source.watch(ready=ready.set)
        finally:
            ended.set()

    with anyio.fail_after(30):  # a hang guard, not a measure: how soon is the slow test's question
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            await ready.wait()
            tasks.cancel_scope.cancel()
    assert ended.is_set()


@pytest.mark.slow  # a wall-clock bound: kept out of the fast suite, which a loaded machine must not fail
async def test_cancelling_the_watch_returns_promptly(source: NotebookFolderSource) -> None:
    ready = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, ready=ready.set))
        await ready.wait()
        start = time.monotonic()
        tasks.cancel_scope.cancel()
    assert time.monotonic() - start < DEADLINE
