"""Following a swapped symlink in process: which links are followed, and that a swap never empties the listing.

The end-to-end tests (tests/e2e/test_serve_symlink_swap.py) run `serve`; here
every snapshot the registry publishes during swaps is looked at.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from notebook_dicts import markdown, notebook, write

from mcp_notebook.registry import PromptRegistry, RegistrySnapshot
from mcp_notebook.sources.finding import Seen, SwapBounds
from mcp_notebook.sources.folder import NotebookFolderSource
from mcp_notebook.sources.watch import symlinks_on_the_way

DEADLINE = 5.0


def test_every_link_on_the_way_is_named_in_its_resolved_folder(tmp_path: Path) -> None:
    (tmp_path / "data" / "rev-1" / "prompts").mkdir(parents=True)
    os.symlink("rev-1", tmp_path / "data" / "current")
    os.symlink(tmp_path / "data", tmp_path / "mnt")  # absolute, and the link's folder is reached through it
    path = tmp_path / "mnt" / "current" / "prompts"
    assert symlinks_on_the_way(path) == (tmp_path / "mnt", tmp_path / "data" / "current")
    assert symlinks_on_the_way(tmp_path / "data" / "rev-1") == ()


def test_a_link_to_a_link_and_dot_dot_after_a_link_are_followed_as_the_kernel_does(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    os.symlink("a/b", tmp_path / "inner")
    os.symlink("inner", tmp_path / "outer")
    assert symlinks_on_the_way(tmp_path / "outer") == (tmp_path / "outer", tmp_path / "inner")
    os.symlink("a/b", tmp_path / "deep")
    (tmp_path / "a" / "sibling").mkdir()
    assert symlinks_on_the_way(tmp_path / "deep" / ".." / "sibling") == (tmp_path / "deep",)


def test_a_loop_of_links_ends(tmp_path: Path) -> None:
    os.symlink("two", tmp_path / "one")
    os.symlink("one", tmp_path / "two")
    assert len(symlinks_on_the_way(tmp_path / "one")) == 40


def _checkout(root: Path, revision: int) -> Path:
    folder = root / f"rev-{revision}"
    write(folder / "a.ipynb", notebook(markdown(f"revision {revision}", {"prompt": f"p{revision}"})))
    return folder


def _swap(git: Path, revision: int, *, delete_old: bool) -> Path:
    """git-sync's swap: the new checkout, a new link renamed over `current`, the old checkout deleted."""
    old = Path(os.path.realpath(git / "current"))
    new = _checkout(git, revision)
    os.symlink(new.name, git / ".tmp-link")
    os.replace(git / ".tmp-link", git / "current")
    if delete_old:
        shutil.rmtree(old)
    return new


class Snapshots:
    """Every snapshot the registry publishes, from whichever thread; waits until one satisfies a condition."""

    def __init__(self, registry: PromptRegistry) -> None:
        self.registry = registry
        self.seen: list[RegistrySnapshot] = []
        self._changed = threading.Condition()
        registry.add_listener(self.on_snapshot)

    def on_snapshot(self, snapshot: RegistrySnapshot) -> None:
        with self._changed:
            self.seen.append(snapshot)
            self._changed.notify_all()

    def _wait(self, condition: Callable[[RegistrySnapshot], bool]) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: condition(self.registry.snapshot()), timeout=DEADLINE)

    async def until(self, condition: Callable[[RegistrySnapshot], bool]) -> None:
        assert await anyio.to_thread.run_sync(self._wait, condition), [p.name for p in self.registry.snapshot().prompts]


def _names(snapshot: RegistrySnapshot) -> list[str]:
    return [prompt.name for prompt in snapshot.prompts]


@asynccontextmanager
async def _watching(source: NotebookFolderSource, poll: float | None = None) -> AsyncIterator[None]:
    ready = anyio.Event()
    stop = anyio.Event()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(partial(source.watch, stop_event=stop, ready=ready.set, poll=poll))
        with anyio.fail_after(DEADLINE):
            await ready.wait()
        yield
        stop.set()


@pytest.fixture
def git(tmp_path: Path) -> Path:
    root = tmp_path / "git"
    _checkout(root, 0)
    os.symlink("rev-0", root / "current")
    return root


@pytest.mark.parametrize("poll", [None, 0.1], ids=["inotify", "polled"])
async def test_swaps_never_publish_an_empty_listing(git: Path, tmp_path: Path, poll: float | None) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([git / "current"], registry, index_folder=tmp_path / "index")
    source.scan()
    snapshots = Snapshots(registry)
    async with _watching(source, poll):
        for revision in range(1, 4):
            new = _swap(git, revision, delete_old=True)
            await snapshots.until(lambda s, r=revision: _names(s) == [f"p{r}"])
            assert source.root == new.resolve()
    assert [_names(s) for s in snapshots.seen if _names(s)] == [[f"p{r}"] for r in range(1, 4)]
    assert all(_names(s) for s in snapshots.seen)  # never an empty listing in between
    source.close()


def _swap_before_the_walk(git: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """git-sync swaps and deletes the old checkout after the next look asked "swapped?" and before it walks."""
    walk = NotebookFolderSource._discover
    walked: list[Path] = []

    def discover(self: NotebookFolderSource, under: Path | None = None, seen: Seen | None = None) -> dict[str, Path]:
        if under is not None and not walked:  # a look at a folder (a scan walks from the top, under None)
            walked.append(under)
            _swap(git, 1, delete_old=True)
        return walk(self, under, seen)

    monkeypatch.setattr(NotebookFolderSource, "_discover", discover)
    return walked


async def test_a_swap_during_the_first_look_is_followed_and_what_it_saw_never_published(
    git: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([git / "current"], registry)
    source.scan()
    snapshots = Snapshots(registry)
    walked = _swap_before_the_walk(git, monkeypatch)
    async with _watching(source):  # its first look walks rev-0 as it is being deleted
        await snapshots.until(lambda s: _names(s) == ["p1"])
    assert walked == [git / "rev-0"]
    assert [_names(s) for s in snapshots.seen] == [["p1"]]  # never the empty listing the walk found


def test_a_look_that_finds_the_paths_swapped_when_it_would_publish_publishes_nothing(
    git: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([git / "current"], registry)
    source.scan()
    published: list[RegistrySnapshot] = []
    registry.add_listener(published.append)
    _swap_before_the_walk(git, monkeypatch)

    assert not source.reload([git / "rev-0"], in_turn=True)  # the look the watch takes

    assert published == [] and _names(registry.snapshot()) == ["p0"]
    assert source.root == (git / "rev-0").absolute()  # the swap is left for the watch to follow


async def test_a_link_removed_then_made_again_keeps_the_old_prompts_until_it_is_back(git: Path) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([git / "current"], registry)
    source.scan()
    snapshots = Snapshots(registry)
    async with _watching(source):
        (git / "current").unlink()  # rm then ln -s, as a hand-made deploy does
        new = _checkout(git, 1)
        os.symlink(new.name, git / "current")
        await snapshots.until(lambda s: _names(s) == ["p1"])
    assert all(_names(s) == ["p1"] for s in snapshots.seen)


async def test_a_notebook_file_served_through_a_link_follows_the_swap(git: Path) -> None:
    registry = PromptRegistry()
    source = NotebookFolderSource([git / "current" / "a.ipynb"], registry)
    source.scan()
    snapshots = Snapshots(registry)
    async with _watching(source):
        new = _swap(git, 1, delete_old=False)
        await snapshots.until(lambda s: _names(s) == ["p1"])
        write(new / "a.ipynb", notebook(markdown("edited", {"prompt": "edited"})))  # the new file is watched
        await snapshots.until(lambda s: _names(s) == ["edited"])


def _bounds(spelled: Path) -> SwapBounds:
    return SwapBounds.at((spelled,), (spelled.resolve(),))


def test_a_link_is_followed_only_to_a_folder_beside_its_first_target(tmp_path: Path) -> None:
    for name in ("rev-0/deep", "rev-1/deep", "rev-2", "other/rev-0"):
        (tmp_path / "git" / name).mkdir(parents=True)
    os.symlink("rev-0", tmp_path / "git" / "current")
    bounds = _bounds(tmp_path / "git" / "current")
    git = tmp_path / "git"
    assert bounds.refused((git / "rev-1",)) == []
    assert bounds.refused((git / "rev-0",)) == []  # back to the first
    # An ancestor, the link's own folder, the root of the file system, a folder of the same name elsewhere.
    for elsewhere in (tmp_path, git, Path("/usr"), Path("/"), git / "other" / "rev-0", git / "rev-0" / "deep"):
        assert bounds.refused((elsewhere,)) == [0], elsewhere


def test_a_folder_below_the_link_keeps_its_place_below_the_new_target(tmp_path: Path) -> None:
    for name in ("rev-0/deep", "rev-1/deep", "rev-1/other"):
        (tmp_path / "git" / name).mkdir(parents=True)
    os.symlink("rev-0", tmp_path / "git" / "current")
    bounds = _bounds(tmp_path / "git" / "current" / "deep")
    assert bounds.refused((tmp_path / "git" / "rev-1" / "deep",)) == []
    assert bounds.refused((tmp_path / "git" / "rev-1" / "other",)) == [0]
    assert bounds.refused((tmp_path / "git" / "rev-1",)) == [0]


def test_a_path_with_no_link_on_it_follows_no_swap(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _bounds(tmp_path / "a").refused((tmp_path / "b",)) == [0]


def test_a_link_beside_the_root_of_the_file_system_is_followed_nowhere_else(tmp_path: Path) -> None:
    bounds = SwapBounds((Path("/rev-0"),), ((Path("/rev-0"),),))
    assert bounds.refused((Path("/usr"),)) == [0]
