"""A served folder reloads off the event loop: the loop that answers every client (of `serve`, of a Jupyter
server) only queues what changed and goes on switching, while a worker thread reads, parses and builds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

import anyio
import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources import folder as folder_module
from mcp_notebook.sources.folder import NotebookFolderSource

DEADLINE = 10.0


def _prompt_notebook(path: Path, name: str) -> Path:
    return write(path, notebook(markdown(f"text of {name}", {"prompt": name})))


class _Builds:
    """The thread of every notebook built, and a way to wait (off the loop) for the next ones."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.threads: dict[str, list[threading.Thread]] = {}
        self._done = threading.Condition()
        build = folder_module.NotebookFolderSource._build

        def recorded(source: NotebookFolderSource, key: str) -> object:
            try:
                return build(source, key)
            finally:
                with self._done:
                    self.threads.setdefault(key, []).append(threading.current_thread())
                    self._done.notify_all()

        monkeypatch.setattr(folder_module.NotebookFolderSource, "_build", recorded)

    async def until(self, key: str) -> None:
        def wait() -> bool:
            with self._done:
                return self._done.wait_for(lambda: key in self.threads, timeout=DEADLINE)

        assert await anyio.to_thread.run_sync(wait), self.threads


@pytest.mark.parametrize("poll", [None, 0.2], ids=["inotify", "polling"])
async def test_the_first_look_and_every_reload_after_a_save_run_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, poll: float | None
) -> None:
    _prompt_notebook(tmp_path / "a.ipynb", "alpha")
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    builds = _Builds(monkeypatch)
    loop_thread = threading.current_thread()
    ready, stop = anyio.Event(), anyio.Event()
    published: list[threading.Thread] = []
    registry.add_listener(lambda _: published.append(threading.current_thread()))
    _prompt_notebook(tmp_path / "early.ipynb", "early")  # saved before the watch: found by the first look

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set, poll=poll))
        with anyio.fail_after(DEADLINE):
            await ready.wait()
        assert "early.ipynb" in builds.threads  # the fresh look at everything, done before the watch says it is ready
        _prompt_notebook(tmp_path / "b.ipynb", "beta")
        await builds.until("b.ipynb")
        stop.set()

    assert {p.name for p in registry.snapshot().prompts} == {"alpha", "beta", "early"}
    assert all(t is not loop_thread for threads in builds.threads.values() for t in threads), builds.threads
    assert len(published) == 2 and all(thread is not loop_thread for thread in published)


async def test_the_loop_goes_on_switching_while_a_slow_reload_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _prompt_notebook(tmp_path / "a.ipynb", "alpha")
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    build = folder_module.NotebookFolderSource._build
    inside, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow(source: NotebookFolderSource, key: str) -> object:
        if key != "slow.ipynb":
            return build(source, key)
        inside.set()
        # A build that lasts until the loop has shown it is free: on the loop, it would wait in vain.
        held = release.wait(DEADLINE)
        try:
            return build(source, key)
        finally:
            finished.set()
            assert held, "the loop stood still while a notebook was built"

    monkeypatch.setattr(folder_module.NotebookFolderSource, "_build", slow)
    ready, stop, ticked = anyio.Event(), anyio.Event(), anyio.Event()

    async def tick() -> None:
        for _ in range(5):
            await anyio.sleep(0.01)
        ticked.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set))
        with anyio.fail_after(DEADLINE):
            await ready.wait()
        _prompt_notebook(tmp_path / "slow.ipynb", "slow")
        await anyio.to_thread.run_sync(_waited(inside))
        tasks.start_soon(tick)
        with anyio.fail_after(DEADLINE):
            await ticked.wait()  # other tasks run while the build is held in its thread
        release.set()
        await anyio.to_thread.run_sync(_waited(finished))
        stop.set()

    assert {p.name for p in registry.snapshot().prompts} == {"alpha", "slow"}


def _waited(event: threading.Event) -> Callable[[], None]:
    def wait() -> None:
        assert event.wait(DEADLINE)

    return wait
