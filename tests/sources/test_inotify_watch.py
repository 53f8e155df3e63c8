"""The folder watch on inotify: asleep while nothing changes, every folder below followed, new ones at once.

A real watch runs in each test; every wait is on a registry change or a
batch, with a deadline. The idle test counts the context switches of this
process's threads over a second of quiet: a watcher that polls wakes tens of
times in it, one that waits on inotify not at all.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from notebook_dicts import markdown, notebook, write
from test_folder_watch import SnapshotWaiter, watching
from watchfiles import Change

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources import watch as watch_module
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.inotify import changes, inotify_supported

pytestmark = pytest.mark.skipif(not inotify_supported(), reason="inotify is Linux's")

DEADLINE = 5.0


def _names(snapshot: RegistrySnapshot) -> set[str]:
    return {p.name for p in snapshot.prompts}


def _publish(path: Path, name: str) -> Path:
    return write(path, notebook(markdown(f"text of {name}", {"prompt": name})))


def _context_switches() -> int:
    total = 0
    for task in Path("/proc/self/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                total += int(line.split()[1])
    return total


@pytest.fixture
def served(tmp_path: Path) -> Path:
    folder = tmp_path / "served"
    _publish(folder / "first.ipynb", "first")
    (folder / "sub" / "deeper").mkdir(parents=True)
    return folder


async def test_an_idle_watch_does_not_wake_the_process(served: Path) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    async with watching(source):
        before = _context_switches()
        await anyio.sleep(1.0)  # measuring idleness: nothing to wait for but time itself
        woken = _context_switches() - before
    assert woken < 10, f"{woken} context switches in a second of idleness"


async def test_every_folder_below_is_watched_and_new_ones_at_once(served: Path, tmp_path: Path) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    async with watching(source):
        _publish(served / "sub" / "deeper" / "old_folder.ipynb", "old_folder")
        await waiter.until(lambda s: "old_folder" in _names(s), deadline=DEADLINE)
        (served / "new" / "a" / "b").mkdir(parents=True)
        _publish(served / "new" / "a" / "b" / "at_once.ipynb", "at_once")  # before its watch may be in place
        await waiter.until(lambda s: "at_once" in _names(s), deadline=DEADLINE)
        _publish(served / "new" / "a" / "b" / "later.ipynb", "later")  # the new folder is watched itself
        await waiter.until(lambda s: "later" in _names(s), deadline=DEADLINE)
        outside = tmp_path / "outside"
        _publish(outside / "inner" / "moved_in.ipynb", "moved_in")
        os.rename(outside, served / "moved")
        await waiter.until(lambda s: "moved_in" in _names(s), deadline=DEADLINE)
        _publish(served / "moved" / "inner" / "after_move.ipynb", "after_move")
        await waiter.until(lambda s: "after_move" in _names(s), deadline=DEADLINE)
        os.rename(served / "moved", tmp_path / "away")
        await waiter.until(lambda s: not {"moved_in", "after_move"} & _names(s), deadline=DEADLINE)
        _publish(tmp_path / "away" / "inner" / "not_served.ipynb", "not_served")  # no longer followed
        _publish(served / "marker.ipynb", "marker")
        await waiter.until(lambda s: "marker" in _names(s), deadline=DEADLINE)
        assert "not_served" not in _names(registry.snapshot())
        shutil.rmtree(served / "new")
        await waiter.until(lambda s: not {"at_once", "later"} & _names(s), deadline=DEADLINE)


async def _next(batches: object) -> set[tuple[Change, str]]:
    with anyio.fail_after(DEADLINE):
        return await batches.__anext__()  # type: ignore[attr-defined, no-any-return]


async def test_a_save_comes_as_one_batch_after_an_empty_first(tmp_path: Path) -> None:
    batches = changes(tmp_path, recursive=True)
    try:
        assert await _next(batches) == set()  # the watch is in place
        staged = tmp_path / ".staged"
        staged.write_text("{}")
        os.replace(staged, tmp_path / "saved.ipynb")  # an atomic save: write elsewhere, rename over
        batch = await _next(batches)
        assert (Change.added, str(tmp_path / "saved.ipynb")) in batch
        (tmp_path / "saved.ipynb").write_text("{} ")
        assert (Change.modified, str(tmp_path / "saved.ipynb")) in await _next(batches)
        (tmp_path / "saved.ipynb").unlink()
        assert (Change.deleted, str(tmp_path / "saved.ipynb")) in await _next(batches)
    finally:
        await batches.aclose()


@pytest.mark.parametrize("how", ["deleted", "moved away", "replaced"])
async def test_the_folder_itself_going_is_reported(tmp_path: Path, how: str) -> None:
    folder = tmp_path / "watched"
    folder.mkdir()
    batches = changes(folder, recursive=True)
    try:
        assert await _next(batches) == set()
        if how == "deleted":
            folder.rmdir()
        elif how == "moved away":
            folder.rename(tmp_path / "elsewhere")
        else:
            (tmp_path / "other").mkdir()
            os.rename(folder, tmp_path / "old")
            os.rename(tmp_path / "other", folder)
        assert (Change.deleted, str(folder)) in await _next(batches)
    finally:
        await batches.aclose()


async def test_an_unwatchable_folder_raises_at_once(tmp_path: Path) -> None:
    batches = changes(tmp_path / "missing", recursive=True)
    with pytest.raises(OSError):
        await _next(batches)


@pytest.mark.parametrize("backend", ["inotify", "watchfiles"])
async def test_both_backends_serve_a_save_and_a_folder_coming_back(
    served: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "watchfiles":
        monkeypatch.setattr(watch_module, "inotify_supported", lambda: False)
    registry = PromptRegistry()
    source = NotebookFolderSource([served], registry)
    source.scan()
    waiter = SnapshotWaiter(registry)
    async with watching(source):
        _publish(served / "saved.ipynb", "saved")
        await waiter.until(lambda s: "saved" in _names(s), deadline=DEADLINE)
        shutil.rmtree(served)
        await waiter.until(lambda s: not _names(s), deadline=DEADLINE)
        _publish(served / "back.ipynb", "back")
        await waiter.until(lambda s: _names(s) == {"back"}, deadline=DEADLINE)
    assert sys.platform.startswith("linux")
