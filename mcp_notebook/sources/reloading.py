"""Reloading a folder source as its notebooks change on disk, off the event loop, following symlink swaps.

One task, the turn-taker, does every look in a worker thread, strictly one
after the other, so that a reload and a followed swap never interleave; the
event loop only queues the paths that changed (`watch.watch_paths`) and wakes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Protocol

import anyio

from ..worker_threads import run_off_loop
from .embeds import is_hidden_part
from .finding import Seen, is_notebook_name
from .watch import symlinks_on_the_way, watch_paths

__all__ = ["Refreshable", "Reloadable", "Reloader"]

log = logging.getLogger(__name__)


class Refreshable(Protocol):
    """What else a save may change (the skills of the folders: `skills.SkillCatalog`), refreshed in the same turn."""

    def refresh(self, changed: Iterable[Path]) -> None: ...

    def wants(self, name: str) -> bool: ...


class Reloadable(Protocol):
    """What the reloader asks of its folder source (`NotebookFolderSource`): what it serves, the looks it takes."""

    @property
    def given_paths(self) -> tuple[Path, ...]: ...

    @property
    def served_folders(self) -> tuple[Path, ...]: ...

    @property
    def served_files(self) -> tuple[Path, ...]: ...

    def accepts(self, path: Path) -> bool: ...

    def rescan(self, seen: Seen | None = None) -> bool: ...

    def follow_swap(self) -> bool: ...

    def reload(self, changed: Iterable[Path], *, in_turn: bool = False, seen: Seen | None = None) -> bool: ...

    @property
    def skills(self) -> Refreshable | None: ...


class Reloader:
    """Keeps one folder source in step with its files: `watch` runs until stopped."""

    def __init__(self, source: Reloadable) -> None:
        self._source = source

    async def watch(
        self,
        *,
        stop_event: anyio.Event | None = None,
        ready: Callable[[], None] | None = None,
        poll: float | None = None,
    ) -> None:
        """`NotebookFolderSource.watch`: reload as notebooks change on disk, every look in a worker thread."""
        announce = ready

        def announced() -> None:
            nonlocal announce
            if announce is not None:
                call, announce = announce, None
                call()

        first = True
        while await self._watch_until_swapped(first=first, stop_event=stop_event, ready=announced, poll=poll):
            first = False

    async def _watch_until_swapped(
        self, *, first: bool, stop_event: anyio.Event | None, ready: Callable[[], None], poll: float | None
    ) -> bool:
        """Watch what is served now, until `stop_event` (False) or a symlink on the way is swapped (True).

        One task, the turn-taker, does every look in a worker thread, strictly one after the other:
        once the watch is in place, the look at everything (`first`) or, after a swap was followed, the
        read of the new target; then each batch of changes queued meanwhile, merged. Every look begins
        by asking whether a served path was swapped; a swap ends the watch after that look, and no look
        of this watch runs after it. The loop only queues paths and wakes the turn-taker.

        Where the watch polls, that first look reads what the poll's first look found (`Seen`) rather
        than walking again: a file saved after the poll's look and gone before its next would be read
        by a later walk, yet never reported gone, and stay served.
        """
        source = self._source
        links = frozenset(link for path in source.given_paths for link in symlinks_on_the_way(path))
        queue = _Batches()
        watching = anyio.Event()
        swapped = False
        polled: Seen | None = None

        def seen(first: Seen) -> None:
            nonlocal polled
            polled = first

        def accept(path: Path) -> bool:
            return path in links or source.accepts(path)

        names = {path.name for path in (*source.served_files, *links)}

        def wanted(name: str) -> bool:
            # Where the watch polls, this says which files are looked at: the skills' too.
            return is_notebook_name(name) or name in names or (source.skills is not None and source.skills.wants(name))

        async def take_turns() -> None:
            nonlocal swapped
            await watching.wait()
            if first:  # a fresh look at everything, so that nothing saved before the watch is missed
                everything = {*source.served_folders, *source.served_files} - links
                swapped = await run_off_loop(self._turn, everything, polled)
            else:
                swapped = await run_off_loop(source.rescan, polled)
                if not swapped and source.skills is not None:  # the new target's skills too
                    await run_off_loop(source.skills.refresh, set(source.served_folders))
            if swapped:
                return
            ready()  # after the first look, which every later batch follows
            while True:
                batch = await queue.take()
                if await run_off_loop(self._turn, batch - links):
                    swapped = True
                    return

        async with anyio.create_task_group() as group:

            async def watch_then_end() -> None:
                folders = source.served_folders
                flat = {f.parent for f in source.served_files if not any(f.parent.is_relative_to(d) for d in folders)}
                await watch_paths(
                    source.served_folders,
                    sorted(flat | {link.parent for link in links}),
                    on_changes=queue.add,
                    accept=accept,
                    ready=watching.set,
                    stop_event=stop_event,
                    poll=poll,
                    wanted=wanted,
                    descend=lambda name: not is_hidden_part(name),
                    seen=seen,
                )
                group.cancel_scope.cancel()

            async def turns_then_end() -> None:
                await take_turns()
                group.cancel_scope.cancel()

            group.start_soon(watch_then_end)
            group.start_soon(turns_then_end)
        return swapped

    def _turn(self, changed: set[Path], seen: Seen | None = None) -> bool:
        """One look, in the turn-taker's thread: follow a swap (True), or reload `changed` (False), as `seen`."""
        source = self._source
        if source.follow_swap():  # before a batch: a swap's deletions never empty what is served
            return True
        try:
            if changed:
                source.reload(changed, in_turn=True, seen=seen)
        except Exception:  # one failed reload must not end the watch
            log.exception("reloading changed notebooks failed")
        try:
            if changed and source.skills is not None:
                source.skills.refresh(changed)
        except Exception:  # nor a failed look at the skills
            log.exception("looking again at the skills failed")
        return source.follow_swap()  # swapped while it read: it published nothing, the new target is read


class _Batches:
    """Paths changed since the last look, merged; a look waits on `take` for the next (all on the event loop)."""

    def __init__(self) -> None:
        self._paths: set[Path] = set()
        self._more = anyio.Event()

    def add(self, paths: Collection[Path]) -> None:
        self._paths.update(paths)
        self._more.set()

    def pending(self) -> bool:
        return bool(self._paths)

    async def take(self) -> set[Path]:
        while not self._paths:
            await self._more.wait()
            self._more = anyio.Event()
        paths, self._paths = self._paths, set()
        return paths
