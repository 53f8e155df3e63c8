"""Watching folders and files for changes with `watchfiles`, and saying when the watch is live.

`watchfiles.awatch` gives no signal once its operating-system watch is in
place, yet callers (the server, tests) must know it is, or a save made in the
meantime is lost. The watcher checks its stop event before every wait, only
after the watch is registered; `ReadySignal` is that stop event, and reports
its first check back to the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import anyio.from_thread
from watchfiles import Change, awatch

__all__ = ["DEBOUNCE_MS", "STEP_MS", "ReadySignal", "watch_paths"]

log = logging.getLogger(__name__)

# A save reaches the callback in well under a second; bursts (write + rename) still come as one batch.
DEBOUNCE_MS = 50
STEP_MS = 20


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
) -> None:
    """Call `on_changes(paths)` on the event loop for each batch of accepted changes, until `stop_event`.

    `recursive` folders are watched with their subfolders, `flat` folders alone
    (for single files: their folder, since editors save by replacing the file).
    `ready` is called once every watch is in place.
    """
    groups = [(tuple(paths), deep) for paths, deep in ((recursive, True), (flat, False)) if paths]
    pending = len(groups)

    def on_group_ready() -> None:
        nonlocal pending
        pending -= 1
        if pending == 0 and ready is not None:
            ready()

    def keep(change: Change, path: str) -> bool:
        return accept(Path(path))

    signals = [ReadySignal(on_group_ready, stop_event) for _ in groups]

    async def run(paths: tuple[Path, ...], deep: bool, signal: ReadySignal) -> None:
        async for changes in awatch(
            *paths,
            watch_filter=keep,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=signal,
            recursive=deep,
        ):
            try:
                on_changes({Path(path) for _, path in changes})
            except Exception:  # one failed reload must not end the watch
                log.exception("reloading changed notebooks failed")

    async def stop_watchers_when_cancelled() -> None:
        # awatch waits for its thread shielded from cancellation, for up to its 5 s timeout;
        # setting the stop signals makes the thread return within one step instead.
        try:
            await anyio.sleep_forever()
        finally:
            for signal in signals:
                signal.set()

    if not groups:
        if ready is not None:
            ready()
        return
    async with anyio.create_task_group() as guard:
        guard.start_soon(stop_watchers_when_cancelled)
        async with anyio.create_task_group() as watchers:
            for (paths, deep), signal in zip(groups, signals, strict=True):
                watchers.start_soon(run, paths, deep, signal)
        guard.cancel_scope.cancel()
