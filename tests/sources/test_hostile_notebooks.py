"""Notebooks built to break the server: nested too deeply, FIFOs and other special files, bad files in a batch.

Each is refused on its own, with a warning naming it, while every other
notebook keeps being served, and a notebook that was good keeps its last
good prompts.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from notebook_dicts import code, display, markdown, notebook, write

from mcp_notebook.registry import PromptRegistry
from mcp_notebook.sources.folder import NotebookFolderSource

DEPTHS = [101, 254, 300, 1_000, 10_000, 100_000]
FINISHES = 10.0  # seconds a scan may take before it counts as hung


def _nested(depth: int, kind: str) -> str:
    return ("[" * depth + "]" * depth) if kind == "array" else ('{"a":' * depth + "{}" + "}" * depth)


def _deep_notebooks(depth: int, kind: str) -> dict[str, str]:
    """The same deep value put where a notebook may carry JSON: metadata, a cell, an output, `_meta`."""
    value = _nested(depth, kind)
    good_cell = json.dumps(markdown("deep", {"prompt": "deep"}))
    return {
        "metadata": f'{{"nbformat": 4, "nbformat_minor": 5, "metadata": {{"x": {value}}}, "cells": [{good_cell}]}}',
        "cell": f'{{"nbformat": 4, "nbformat_minor": 5, "metadata": {{}}, "cells": [{good_cell}, {value}]}}',
        "output": json.dumps(
            notebook(code("x", {"prompt": "deep"}, outputs=[display({"application/json": "@@", "text/plain": "x"})]))
        ).replace('"@@"', value),
        "_meta": json.dumps(notebook(markdown("deep", {"prompt": "deep", "_meta": "@@"}))).replace('"@@"', value),
    }


def _scan_within_deadline(source: NotebookFolderSource) -> None:
    failure: list[BaseException] = []

    def scan() -> None:
        try:
            source.scan()
        except BaseException as error:
            failure.append(error)

    worker = threading.Thread(target=scan, daemon=True)
    worker.start()
    worker.join(FINISHES)
    assert not worker.is_alive(), "the scan hung"
    assert not failure, repr(failure[0])


@pytest.fixture
def registry() -> PromptRegistry:
    return PromptRegistry()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write(tmp_path / "good.ipynb", notebook(markdown("good", {"prompt": "good"})))
    return tmp_path


def _names(registry: PromptRegistry) -> list[str]:
    return [p.name for p in registry.snapshot().prompts]


@pytest.mark.parametrize("kind", ["array", "object"])
@pytest.mark.parametrize("depth", DEPTHS)
def test_a_notebook_nested_too_deeply_is_refused_alone(
    folder: Path, registry: PromptRegistry, depth: int, kind: str
) -> None:
    for place, text in _deep_notebooks(depth, kind).items():
        (folder / f"deep-{place}.ipynb").write_text(text)
    source = NotebookFolderSource([folder], registry)
    _scan_within_deadline(source)
    assert _names(registry) == ["good"]
    assert sorted(source.errors) == [f"deep-{place}.ipynb" for place in sorted(_deep_notebooks(depth, kind))]
    assert all("levels deep" in error for error in source.errors.values()), source.errors
    assert sum("levels deep" in warning for warning in registry.snapshot().warnings) == 4


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_good_notebook_saved_too_deep_keeps_its_last_good_prompts(
    folder: Path, registry: PromptRegistry, depth: int
) -> None:
    write(folder / "deep.ipynb", notebook(markdown("deep", {"prompt": "deep"})))
    source = NotebookFolderSource([folder], registry)
    source.scan()
    (folder / "deep.ipynb").write_text(_deep_notebooks(depth, "array")["cell"])
    source.reload([folder / "deep.ipynb"])
    assert _names(registry) == ["deep", "good"]
    assert "last good prompts stay served" in source.errors["deep.ipynb"]


@pytest.mark.parametrize("depth", [33, 60, 90])
def test_a_meta_nested_too_deeply_is_ignored_with_a_warning(
    registry: PromptRegistry, tmp_path: Path, depth: int
) -> None:
    meta: dict[str, Any] = {}
    for _ in range(depth):
        meta = {"a": meta}
    write(tmp_path / "nb.ipynb", notebook(markdown("x", {"prompt": "p", "_meta": meta})))
    NotebookFolderSource([tmp_path], registry).scan()
    prompt = registry.snapshot().get("p")
    assert prompt is not None and "a" not in prompt.meta
    assert any("_meta nests more than" in warning for warning in registry.snapshot().warnings)


def test_a_meta_of_ordinary_depth_is_kept(registry: PromptRegistry, tmp_path: Path) -> None:
    meta: dict[str, Any] = {"leaf": 1}
    for _ in range(20):
        meta = {"a": meta}
    write(tmp_path / "nb.ipynb", notebook(markdown("x", {"prompt": "p", "_meta": meta})))
    NotebookFolderSource([tmp_path], registry).scan()
    prompt = registry.snapshot().get("p")
    assert prompt is not None and prompt.meta["a"] == meta["a"]


# -- special files named *.ipynb ------------------------------------------------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _symlink_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("pipe"))
    path.symlink_to(path.with_name("pipe"))


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")  # outside the folder, and endless


def _loop(path: Path) -> None:
    path.symlink_to(path)


def _dangling(path: Path) -> None:
    path.symlink_to(path.with_name("nowhere.ipynb"))


SPECIAL: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "symlink to a fifo": _symlink_to_fifo,
    "device": _device,
    "symlink loop": _loop,
    "dangling symlink": _dangling,
}


@pytest.fixture
def unix_socket(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.chdir(folder)  # a socket's path must be short: bind it relative
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind("socket.ipynb")
        yield "socket.ipynb"


def test_special_files_named_like_notebooks_are_skipped_with_a_warning(
    folder: Path, registry: PromptRegistry, unix_socket: str
) -> None:
    for name, make in SPECIAL.items():
        make(folder / f"{name}.ipynb")
    source = NotebookFolderSource([folder], registry)
    _scan_within_deadline(source)
    assert _names(registry) == ["good"]
    assert sorted(source.errors) == sorted([f"{name}.ipynb" for name in SPECIAL] + [unix_socket])
    for name in ("fifo.ipynb", "symlink to a fifo.ipynb", unix_socket):
        assert "not a regular file" in source.errors[name], source.errors[name]


def test_a_notebook_replaced_by_a_fifo_keeps_its_last_good_prompts(folder: Path, registry: PromptRegistry) -> None:
    write(folder / "nb.ipynb", notebook(markdown("x", {"prompt": "kept"})))
    source = NotebookFolderSource([folder], registry)
    source.scan()
    (folder / "nb.ipynb").unlink()
    os.mkfifo(folder / "nb.ipynb")
    reloaded = threading.Thread(target=source.reload, args=([folder / "nb.ipynb"],), daemon=True)
    reloaded.start()
    reloaded.join(FINISHES)
    assert not reloaded.is_alive(), "the reload hung on the FIFO"
    assert _names(registry) == ["good", "kept"]
    assert "not a regular file" in source.errors["nb.ipynb"]


# -- one bad file in a batch ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["deep", "fifo", "huge and malformed"])
def test_a_bad_file_never_swallows_a_good_change_in_the_same_batch(
    folder: Path, registry: PromptRegistry, bad: str
) -> None:
    source = NotebookFolderSource([folder], registry)
    source.scan()
    write(folder / "good.ipynb", notebook(markdown("changed", {"prompt": "changed"})))
    target = folder / "bad.ipynb"
    if bad == "deep":
        target.write_text(_deep_notebooks(100_000, "array")["cell"])
    elif bad == "fifo":
        os.mkfifo(target)
    else:
        target.write_text('{"nbformat": 4, "cells": [' + '{"cell_type": "markdown", "source": "x"},' * 200_000)
    source.reload([target, folder / "good.ipynb"])
    assert _names(registry) == ["changed"]
    assert "bad.ipynb" in source.errors
