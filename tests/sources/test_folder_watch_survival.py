"""The live reload survives its folder going away and coming back, and one bad save never hides a good one.

A real watch runs in each test; every wait is on a registry change, with a
deadline (a recreated folder is noticed within the watch's one-second look).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from notebook_dicts import markdown, notebook, write
from test_folder_watch import SnapshotWaiter, watching

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources.folder import NotebookFolderSource

BACK_WITHIN = 5.0  # seconds from a folder's return to its notebooks being served


def _names(snapshot: RegistrySnapshot) -> set[str]:
    return {p.name for p in snapshot.prompts}


def _publish(path: Path, name: str) -> Path:
    return write(path, notebook(markdown(f"text of {name}", {"prompt": name})))


def _remove_folder(served: Path) -> None:
    shutil.rmtree(served)


def _remove_parent(served: Path) -> None:
    shutil.rmtree(served.parent)


def _rename_away(served: Path) -> None:
    served.rename(served.with_name("moved-away"))


REMOVALS: dict[str, Callable[[Path], None]] = {
    "deleted": _remove_folder,
    "parent deleted": _remove_parent,
    "renamed away": _rename_away,
}


@pytest.fixture
def served(tmp_path: Path) -> Path:
    folder = tmp_path / "parent" / "served"
    _publish(folder / "first.ipynb", "first")
    return folder


@pytest.mark.parametrize("removal", sorted(REMOVALS))
async def test_a_folder_deleted_and_created_again_is_served_again(served: Path, removal: str) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    async with watching(source):
        for cycle in range(3):
            REMOVALS[removal](served)
            await waiter.until(lambda s: not _names(s), deadline=BACK_WITHIN)
            shutil.rmtree(served.with_name("moved-away"), ignore_errors=True)
            _publish(served / "sub" / f"new{cycle}.ipynb", f"new{cycle}")
            await waiter.until(lambda s, c=cycle: _names(s) == {f"new{c}"}, deadline=BACK_WITHIN)  # type: ignore[misc]
            _publish(served / f"later{cycle}.ipynb", f"later{cycle}")  # the new folder itself is watched
            await waiter.until(lambda s, c=cycle: f"later{c}" in _names(s), deadline=BACK_WITHIN)  # type: ignore[misc]
            shutil.rmtree(served)
            await waiter.until(lambda s: not _names(s), deadline=BACK_WITHIN)
            _publish(served / "first.ipynb", "first")
            await waiter.until(lambda s: _names(s) == {"first"}, deadline=BACK_WITHIN)


async def test_a_folder_swapped_for_another_at_once_serves_the_new_one(served: Path) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    staged = served.with_name("staged")
    async with watching(source):
        _publish(staged / "swapped.ipynb", "swapped")
        os.rename(served, served.with_name("old"))
        os.rename(staged, served)  # no moment without the folder long enough to matter
        await waiter.until(lambda s: _names(s) == {"swapped"}, deadline=BACK_WITHIN)
        _publish(served / "after.ipynb", "after")
        await waiter.until(lambda s: _names(s) == {"swapped", "after"}, deadline=BACK_WITHIN)


async def test_a_served_file_whose_folder_comes_back_is_served_again(served: Path) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([served / "first.ipynb"], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    async with watching(source):
        shutil.rmtree(served)
        await waiter.until(lambda s: not _names(s), deadline=BACK_WITHIN)
        _publish(served / "first.ipynb", "again")
        await waiter.until(lambda s: _names(s) == {"again"}, deadline=BACK_WITHIN)


def _deep(path: Path) -> None:
    path.write_text('{"nbformat": 4, "cells": [' + "[" * 200_000 + "]" * 200_000 + "]}")


def _huge_and_cut(path: Path) -> None:
    path.write_text('{"nbformat": 4, "cells": [' + '{"cell_type": "markdown", "source": "x"},' * 300_000)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize("bad", [_deep, _huge_and_cut, _fifo], ids=["deep", "huge and cut", "fifo"])
async def test_a_bad_save_at_the_same_moment_never_loses_a_good_change(
    served: Path, bad: Callable[[Path], None]
) -> None:
    _publish(served / "other.ipynb", "other")
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    async with watching(source):
        bad(served / "bad.ipynb")
        _publish(served / "first.ipynb", "first_changed")
        (served / "other.ipynb").unlink()
        await waiter.until(lambda s: _names(s) == {"first_changed"}, deadline=BACK_WITHIN)
        assert "bad.ipynb" in source.errors
        _publish(served / "after.ipynb", "after")  # and the watch goes on
        await waiter.until(lambda s: _names(s) == {"first_changed", "after"}, deadline=BACK_WITHIN)
