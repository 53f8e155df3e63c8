"""Watching folders and files for changes, and saying when the watch is live.

On Linux the event loop waits on an inotify descriptor itself (`inotify`):
an idle watch never wakes the process. Elsewhere `watchfiles.awatch` watches,
which gives no signal once its operating-system watch is in place, yet
callers (the server, tests) must know it is, or a save made in the meantime
is lost. That watcher checks its stop event before every wait, only after the
watch is registered; `ReadySignal` is that stop event, and reports its first
check back to the event loop.

An operating-system watch dies with its folder: deleted and created again,
the folder is a new one nobody watches. So each watched folder is followed
by its identity (device and inode) and by the events about the folder
itself (with inotify, also its entry in its parent), looked at after every
batch (with `awatch`, at least once a second): when it is gone, its nearest
existing parent is watched (not recursively) until it comes back; when it is
back (or was replaced), it is watched anew and reported changed once that
watch is in place, so notebooks created in between are found.

Folders on a file system where inotify misses what other machines write (NFS,
CIFS/SMB, FUSE, …; `polling.py`) are looked at every few seconds instead, and
one log line says so; `poll=SECONDS` looks at every folder that way.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.from_thread

from .finding import Seen
from .inotify import Change, inotify_supported
from .inotify import changes as inotify_changes
from .polling import DEFAULT_POLL_SECONDS, Look, blind_file_system, mount_table, poll_paths

__all__ = ["DEBOUNCE_MS", "STEP_MS", "FolderWatch", "ReadySignal", "symlinks_on_the_way", "watch_paths"]

log = logging.getLogger(__name__)

# A save reaches the callback in well under a second; bursts (write + rename) still come as one batch.
DEBOUNCE_MS = 50
STEP_MS = 20
# How often a quiet watch looks whether its folder is still the one watched (deleted, replaced).
_RECHECK_MS = 500


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino) if os.path.isdir(path) else None


def symlinks_on_the_way(path: Path) -> tuple[Path, ...]:
    """Every symlink that resolving the absolute `path` passes through, each named in its resolved folder.

    A swap of any of them (git-sync renaming a new `current` over the old one)
    changes what `path` is, and shows as an entry event in that folder. A link
    to a link counts both; a loop stops after 40 links, as the kernel does.
    """
    links: list[Path] = []
    pending = list(path.parts[1:])
    current = Path(path.anchor or "/")
    while pending and len(links) < 40:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        candidate = current / part
        try:
            target = os.readlink(candidate)
        except OSError:  # not a symlink (or not there): a plain step
            current = candidate
            continue
        links.append(candidate)
        if os.path.isabs(target):
            current = Path(Path(target).anchor or "/")
        pending[0:0] = [piece for piece in Path(target).parts if piece != Path(target).anchor]
    return tuple(links)


def _nearest_existing(path: Path) -> Path:
    for parent in path.parents:
        if parent.is_dir():
            return parent
    return Path(path.anchor or "/")


class ReadySignal:
    """A stop event for `awatch` that calls `on_ready` (on the event loop) the first time it is checked."""

    def __init__(self, on_ready: Callable[[], None], stop_event: anyio.Event | None = None) -> None:
        self._on_ready: Callable[[], None] | None = on_ready
        self._stop_event = stop_event
        self._stopped = False  # set by awatch when it is cancelled; never touches the caller's event

    def is_set(self) -> bool:
        on_ready, self._on_ready = self._on_ready, None
        if on_ready is not None:
            try:
                anyio.from_thread.run_sync(on_ready)
            except Exception:  # must never raise into the watcher thread
                log.exception("file watcher readiness callback failed")
        return self._stopped or (self._stop_event is not None and self._stop_event.is_set())

    def set(self) -> None:
        self._stopped = True


async def watch_paths(
    recursive: Sequence[Path],
    flat: Sequence[Path],
    *,
    on_changes: Callable[[set[Path]], object],
    accept: Callable[[Path], bool],
    ready: Callable[[], None] | None = None,
    stop_event: anyio.Event | None = None,
    poll: float | None = None,
    wanted: Callable[[str], bool] = lambda _: True,
    descend: Callable[[str], bool] = lambda _: True,
    seen: Callable[[Seen], None] | None = None,
) -> None:
    """Call `on_changes(paths)` on the event loop for each batch of accepted changes, until `stop_event`.

    `recursive` folders are watched with their subfolders, `flat` folders alone
    (for single files: their folder, since editors save by replacing the file).
    `ready` is called once every watch is in place. A folder that is deleted
    is reported changed, and watched again once it exists again.

    Folders on a file system where inotify is blind, or all of them with `poll`
    (seconds), are looked at periodically instead: `wanted(name)` says which
    files and `descend(name)` which subfolders such a look stats. Before `ready`, `seen` is handed
    what the first such look found: what is on disk there is what it says, since only changes made
    after it are reported.
    """
    watch = FolderWatch(
        recursive,
        flat,
        on_changes=on_changes,
        accept=accept,
        ready=ready,
        stop_event=stop_event,
        poll=poll,
        wanted=wanted,
        descend=descend,
        seen=seen,
    )
    await watch.run()


# A batch of changes as the watchers give them: (what happened, the path), and what says a watch is done.
_Batch = set[tuple[Change, str]]
_Done = Callable[[_Batch], bool]


class FolderWatch:
    """One `watch_paths`: each folder followed by a task of its own (`follow`), the polled ones by one more.

    A followed folder is watched while it is the folder it was (`watch_once`), waited for through its
    nearest parent while it is gone (`wait_for`); each watch runs on inotify on the event loop
    (`watch_with_inotify`) or, where there is none, on `watchfiles.awatch` (`watch_with_awatch`).
    """

    def __init__(
        self,
        recursive: Sequence[Path],
        flat: Sequence[Path],
        *,
        on_changes: Callable[[set[Path]], object],
        accept: Callable[[Path], bool],
        ready: Callable[[], None] | None,
        stop_event: anyio.Event | None,
        poll: float | None,
        wanted: Callable[[str], bool],
        descend: Callable[[str], bool],
        seen: Callable[[Seen], None] | None = None,
    ) -> None:
        self._every = [(path, True) for path in recursive] + [(path, False) for path in flat]
        self._on_changes = on_changes
        self._accept = accept
        self._ready = ready
        self._stop_event = stop_event
        self._poll = poll
        self._wanted = wanted
        self._descend = descend
        self._seen = seen
        self._folders, self._polled, self._blind = _split_polled(self._every, poll)
        self._interval = poll if poll is not None else DEFAULT_POLL_SECONDS
        self._pending = len(self._folders) + (1 if self._polled else 0)  # watches not in place yet
        self._signals: set[ReadySignal] = set()
        self._stopping = False

    async def run(self) -> None:
        """Watch until the stop event is set or the task is cancelled."""
        self._say_how_polled()
        if not self._every:
            if self._ready is not None:
                self._ready()
            return
        async with anyio.create_task_group() as guard:
            guard.start_soon(self._stop_watchers_when_cancelled)
            async with anyio.create_task_group() as watchers:
                for path, deep in self._folders:
                    watchers.start_soon(self._follow, path, deep)
                if self._polled:
                    watchers.start_soon(
                        partial(
                            poll_paths,
                            self._polled,
                            interval=self._interval,
                            on_changes=self._report_polled,
                            wanted=self._wanted,
                            descend=self._descend,
                            ready=self._polled_ready,
                            stop_event=self._stop_event,
                        )
                    )
            guard.cancel_scope.cancel()

    def _say_how_polled(self) -> None:
        """One log line for the folders looked at periodically, and why."""
        blind, interval = self._blind, self._interval
        if blind:
            log.warning(
                "%s %s on a network file system (%s), where changes made by other machines are not reported: "
                "looking for changes every %g s instead (--poll SECONDS or MCP_NOTEBOOK_POLL sets how often)",
                ", ".join(str(path) for path, _ in blind),
                "is" if len(blind) == 1 else "are",
                ", ".join(sorted({fs for _, fs in blind})),
                interval,
            )
        elif self._poll is not None and self._polled:
            log.info(
                "looking for changes every %g s (--poll) in %s", interval, ", ".join(str(p) for p, _ in self._polled)
            )

    def _one_ready(self) -> None:
        """One more watch is in place; the last one calls `ready`."""
        self._pending -= 1
        if self._pending == 0 and self._ready is not None:
            self._ready()

    def _polled_ready(self, first: Look) -> None:
        """The first look at the polled folders is taken: hand on what it found, and that this watch is in place."""
        if self._seen is not None:
            self._seen(Seen(tuple(self._polled), frozenset(first)))
        self._one_ready()

    def _keep(self, change: Change, path: str) -> bool:
        return self._accept(Path(path))

    def _report(self, paths: set[Path]) -> None:
        try:
            self._on_changes(paths)
        except Exception:  # one failed reload must not end the watch
            log.exception("reloading changed notebooks failed")

    def _report_polled(self, changes: _Batch) -> None:
        accepted = {Path(changed) for _, changed in changes if self._accept(Path(changed))}
        if accepted:
            self._report(accepted)

    def _stopped(self) -> bool:
        return self._stopping or (self._stop_event is not None and self._stop_event.is_set())

    async def _follow(self, path: Path, deep: bool) -> None:
        """Watch folder `path` for as long as the watch runs, through deletions and re-creations."""
        first: Callable[[], None] | None = self._one_ready

        def on_ready(again: bool) -> None:
            nonlocal first
            if first is not None:
                announce, first = first, None
                announce()
            elif again:
                self._report({path})  # back, or replaced: look at everything in it, now that it is watched

        while not self._stopped():
            identity = _identity(path)
            try:
                if identity is None:
                    await self._wait_for(path, lambda: on_ready(False))
                else:
                    await self._watch_once(path, deep, lambda: on_ready(True), identity)
            except OSError as error:  # vanished while the watch was being set up: look again
                log.info("watching %s failed (%s); trying again", path, error)
                await anyio.sleep(_RECHECK_MS / 1000)

    async def _watch_once(
        self, path: Path, deep: bool, on_ready: Callable[[], None], identity: tuple[int, int]
    ) -> None:
        """Watch `path` until it is stopped, or is no longer the folder `identity` names."""

        def done(changes: _Batch) -> bool:
            if changes:
                self._report({Path(changed) for _, changed in changes})
            # Its own deletion ends a watch even when a new folder already took the place, and
            # the inode number with it (file systems reuse them at once): the identity alone misses that.
            deleted = any(change == Change.deleted and Path(changed) == path for change, changed in changes)
            if deleted or _identity(path) != identity:
                if _identity(path) is None:
                    self._report({path})  # gone: whatever it served is withdrawn
                return True
            return False

        await self._watch(path, deep, on_ready, done, self._keep)

    async def _wait_for(self, path: Path, on_ready: Callable[[], None]) -> None:
        """Return once `path` is a folder again (or the watch stops), watching its nearest parent."""
        parent = _nearest_existing(path)

        def done(_: _Batch) -> bool:
            return _identity(path) is not None or _nearest_existing(path) != parent

        await self._watch(parent, False, on_ready, done)

    async def _watch(
        self,
        path: Path,
        deep: bool,
        on_ready: Callable[[], None],
        done: _Done,
        keep_change: Callable[[Change, str], bool] | None = None,
    ) -> None:
        """Watch `path` until the watch stops or `done(batch)` says so; `on_ready()` once the watch is in place."""
        if inotify_supported():
            await self._watch_with_inotify(path, deep, on_ready, done, keep_change)
        else:
            await self._watch_with_awatch(path, deep, on_ready, done, keep_change)

    async def _watch_with_inotify(
        self,
        path: Path,
        deep: bool,
        on_ready: Callable[[], None],
        done: _Done,
        keep_change: Callable[[Change, str], bool] | None,
    ) -> None:
        # inotify on the event loop: its first (empty) batch says the watch is in place.
        async with anyio.create_task_group() as group:
            if self._stop_event is not None:
                group.start_soon(_cancel_when_set, self._stop_event, group.cancel_scope)
            first = True
            batches = inotify_changes(path, recursive=deep)
            async with contextlib.aclosing(batches):
                async for changes in batches:
                    if first:
                        first = False
                        on_ready()
                    if keep_change is not None:
                        changes = {(change, changed) for change, changed in changes if keep_change(change, changed)}
                    if done(changes):
                        break
            group.cancel_scope.cancel()

    async def _watch_with_awatch(
        self,
        path: Path,
        deep: bool,
        on_ready: Callable[[], None],
        done: _Done,
        keep_change: Callable[[Change, str], bool] | None,
    ) -> None:
        from watchfiles import awatch  # where there is no inotify

        signal = ReadySignal(on_ready, self._stop_event)
        self._signals.add(signal)
        try:
            # watchfiles' own `Change` has the values of ours (an IntEnum each): they compare equal.
            batches = awatch(
                path,
                watch_filter=cast(Any, keep_change),
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=signal,
                recursive=deep,
                rust_timeout=_RECHECK_MS,
                yield_on_timeout=True,
            )
            async with contextlib.aclosing(batches):
                async for changes in batches:
                    if done(cast(Any, changes)):
                        return
        finally:
            self._signals.discard(signal)

    async def _stop_watchers_when_cancelled(self) -> None:
        # awatch waits for its thread shielded from cancellation, for up to its 5 s timeout;
        # setting the stop signals makes the thread return within one step instead.
        try:
            await anyio.sleep_forever()
        finally:
            self._stopping = True
            for signal in list(self._signals):
                signal.set()


async def _cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _split_polled(
    folders: list[tuple[Path, bool]], poll: float | None
) -> tuple[list[tuple[Path, bool]], list[tuple[Path, bool]], list[tuple[Path, str]]]:
    """The folders inotify watches, those looked at periodically, and which of those are so for their file system."""
    if poll is not None:
        return [], folders, []
    watched: list[tuple[Path, bool]] = []
    polled: list[tuple[Path, bool]] = []
    blind: list[tuple[Path, str]] = []
    mountinfo = mount_table()
    for path, deep in folders:
        fs_type = blind_file_system(path, mountinfo) if mountinfo is not None else None
        if fs_type is None:
            watched.append((path, deep))
        else:
            polled.append((path, deep))
            blind.append((path, fs_type))
    return watched, polled, blind
