"""A large notebook saved into a served folder is built by a helper process, and serves exactly what it would
have served built here: the same prompts, messages, cells, warnings and errors. Parsing it never holds the
server's interpreter lock, so its event loop runs meanwhile (`benchmarks/bench_loop_stall.py` measures that)."""

from __future__ import annotations

import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import psutil
import pytest
from notebook_dicts import PNG_1X1, code, display, markdown, notebook, stream, write

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources import loading as loading_module
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.offload import MIN_BYTES

DEADLINE = 20.0  # the helper process is started at the first large notebook


class Snapshots:
    """Waits (off the loop) until the registry's snapshot satisfies a condition; reloads publish from a thread."""

    def __init__(self, registry: PromptRegistry) -> None:
        self.registry = registry
        self._changed = threading.Condition()
        registry.add_listener(self._on_snapshot)

    def _on_snapshot(self, _: RegistrySnapshot) -> None:
        with self._changed:
            self._changed.notify_all()

    def _wait(self, condition: Callable[[RegistrySnapshot], bool]) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: condition(self.registry.snapshot()), timeout=DEADLINE)

    async def until(self, condition: Callable[[RegistrySnapshot], bool]) -> None:
        assert await anyio.to_thread.run_sync(self._wait, condition), self.registry.snapshot().warnings


@asynccontextmanager
async def _watching(source: NotebookFolderSource) -> AsyncIterator[None]:
    ready, stop = anyio.Event(), anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set))
        with anyio.fail_after(DEADLINE):
            await ready.wait()
        yield
        stop.set()


def _large_notebook(name: str) -> dict[str, Any]:
    """A notebook of more than `MIN_BYTES`: a prompt with text, code, outputs and an image; a large data cell."""
    data = "0123456789abcdef" * (MIN_BYTES // 16 + 1)
    return notebook(
        markdown("# Report\nSummarise {{topic}} for {{ reader }}.", {"prompt": name}),
        code("print(x)", {"prompt": name}, outputs=[stream("x\n"), display({"image/png": PNG_1X1})]),
        markdown("{{undeclared", tags=[f"prompt:{name}", "role:assistant"]),
        code("print(data)", outputs=[stream(data)]),
        {"cell_type": "markdown", "metadata": {"mcp": {"prompt": 5}}, "source": "a malformed prompt name"},
    )


def _served(source: NotebookFolderSource, registry: PromptRegistry) -> dict[str, Any]:
    """Everything the source serves, as values that compare exactly."""
    resources = source.list_resources()
    return {
        "prompts": [(spec, tuple(spec.messages)) for spec in registry.snapshot().prompts],
        "warnings": registry.snapshot().warnings,
        "errors": dict(source.errors),
        "resources": resources.items,
        "contents": [source.read_resource(info.uri) for info in resources.items],
    }


def _built_here(folder: Path) -> dict[str, Any]:
    registry = PromptRegistry()
    source = NotebookFolderSource([folder], registry)
    source.scan()
    return _served(source, registry)


@pytest.fixture
def built_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the notebooks built in this process (the helper builds in its own)."""
    keys: list[str] = []
    real = loading_module.prompts_from_notebook

    def counting(data: dict[str, Any], *, origin: str, **kwargs: Any) -> Any:
        keys.append(origin)
        return real(data, origin=origin, **kwargs)

    monkeypatch.setattr(loading_module, "prompts_from_notebook", counting)
    return keys


async def test_a_large_notebook_saved_is_built_elsewhere_and_serves_exactly_the_same(
    tmp_path: Path, built_here: list[str]
) -> None:
    write(tmp_path / "small.ipynb", notebook(markdown("small", {"prompt": "small"})))
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    waiter = Snapshots(registry)
    async with _watching(source):
        big = write(tmp_path / "big.ipynb", _large_notebook("big"))
        assert big.stat().st_size >= MIN_BYTES
        await waiter.until(lambda snapshot: snapshot.get("big") is not None)
        helper = source._builder.pid  # started for the first large notebook
        assert helper is not None and helper != os.getpid()
        write(big, _large_notebook("bigger"))
        await waiter.until(lambda snapshot: snapshot.get("bigger") is not None)
        assert source._builder.pid == helper  # and kept for the next one
        write(tmp_path / "small.ipynb", notebook(markdown("small again", {"prompt": "again"})))
        await waiter.until(lambda snapshot: snapshot.get("again") is not None)
        served = _served(source, registry)
    source.close()

    assert built_here == ["small.ipynb", "small.ipynb"]  # the large one never here, a small one here
    assert served == _built_here(tmp_path)
    assert [spec.name for spec, _ in served["prompts"]] == ["bigger", "again"]
    assert served["warnings"] and served["resources"]


async def test_a_large_file_that_is_no_notebook_is_refused_as_it_would_be_here(
    tmp_path: Path, built_here: list[str]
) -> None:
    write(tmp_path / "big.ipynb", _large_notebook("big"))
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    waiter = Snapshots(registry)
    built_here.clear()
    broken = '{"nbformat": 4, "cells": [' + " " * MIN_BYTES  # half written
    async with _watching(source):
        write(tmp_path / "big.ipynb", broken)
        await waiter.until(lambda _: "big.ipynb" in source.errors)
    source.close()

    assert built_here == []
    reference = NotebookFolderSource([tmp_path], PromptRegistry())
    reference.scan()
    assert dict(source.errors) == {"big.ipynb": reference.errors["big.ipynb"] + "; its last good prompts stay served"}
    assert registry.snapshot().get("big") is not None  # its last good prompts stay served


async def test_a_large_notebook_is_built_here_when_the_helper_is_gone(
    tmp_path: Path, built_here: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([tmp_path], registry)
    source.scan()
    waiter = Snapshots(registry)
    async with _watching(source):
        write(tmp_path / "one.ipynb", _large_notebook("one"))
        await waiter.until(lambda snapshot: snapshot.get("one") is not None)
        pid = source._builder.pid  # the helper this source started
        assert pid is not None
        helper = psutil.Process(pid)
        helper.kill()
        await anyio.to_thread.run_sync(helper.wait, DEADLINE)
        write(tmp_path / "two.ipynb", _large_notebook("two"))
        await waiter.until(lambda snapshot: snapshot.get("two") is not None)
    source.close()

    assert source._builder.pid is None
    assert built_here == ["two.ipynb"]
    assert "the notebook builder process ended; two.ipynb is built in this process" in caplog.text
