"""Changes under a folder from Linux inotify, read on the event loop: no thread, no polling, no timer while idle.

`watchfiles` wakes every few milliseconds to look for changes and for its
stop signal; a server that sits idle for hours should not. Here the event
loop waits on one inotify descriptor like on any socket, so an idle watch
costs nothing until the kernel has an event for it.

`changes(folder, recursive=...)` yields batches of `(Change, path)` as
`watchfiles.awatch` does: the first batch is empty, right after every watch
is in place (so a caller can look at what happened meanwhile); then one batch
per burst of events (a save: write, then rename over the file), gathered
until the folder has been quiet for `QUIET_MS` or `DEBOUNCE_MS` have passed.

Every folder below a recursive one has its own watch, and a folder that
appears (created, moved in) gets one at once and is reported as added, so
whatever was put inside it before its watch was in place is looked at too.
The folder itself is also followed from its parent: deleted, moved away or
replaced, it is reported deleted (the caller looks again which folder that
path now is). An overflowing event queue reports the folder itself changed.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import struct
import sys
from collections.abc import AsyncGenerator
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio

if TYPE_CHECKING:
    import ctypes

__all__ = ["DEBOUNCE_MS", "QUIET_MS", "Change", "changes", "inotify_supported"]


class Change(IntEnum):
    """What happened to a path: the values of `watchfiles.Change`, so the two compare equal.

    Defined here so that watching on Linux does not import watchfiles (a tenth of a
    second of a server's start on a busy machine) only for its enum.
    """

    added = 1
    modified = 2
    deleted = 3


QUIET_MS: Final = 5
"""A burst ends once the folder has been quiet this long (a save's write and rename come well within it)."""
DEBOUNCE_MS: Final = 50
"""A burst is cut after this long even if events keep coming (a large copy)."""

_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW, _IGNORED, _ISDIR = 0x4000, 0x8000, 0x40000000
_ONLYDIR, _DONT_FOLLOW, _EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
_ENTRIES: Final = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
_FOLDER_MASK: Final = (
    _ENTRIES | _MODIFY | _ATTRIB | _CLOSE_WRITE | _DELETE_SELF | _MOVE_SELF | _ONLYDIR | _DONT_FOLLOW | _EXCL_UNLINK
)
_PARENT_MASK: Final = _ENTRIES | _ONLYDIR | _EXCL_UNLINK
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL-padded
_READ_SIZE = 1 << 16

log = logging.getLogger(__name__)


def inotify_supported() -> bool:
    """Whether this system has inotify (Linux)."""
    return sys.platform.startswith("linux") and _libc() is not None


@functools.cache
def _libc() -> ctypes.CDLL | None:
    import ctypes  # only where there may be inotify: ctypes takes milliseconds to import

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def _unwatchable(path: Path, error: OSError) -> None:
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return  # gone again already, or not a folder: its parent's events say what happened
    hint = " (raise fs.inotify.max_user_watches)" if error.errno == errno.ENOSPC else ""
    log.warning("changes in %s are not followed: %s%s", path, error.strerror, hint)


def _errno() -> int:
    import ctypes

    code: int = ctypes.get_errno()
    return code


class _Watches:
    """One inotify descriptor and what each of its watches looks at."""

    def __init__(self, folder: Path, recursive: bool) -> None:
        libc = _libc()
        if libc is None:
            raise OSError(errno.ENOSYS, "inotify is not available")
        self._libc = libc
        self.folder = folder
        self.recursive = recursive
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(_errno(), "inotify_init1 failed")
        self._paths: dict[int, Path] = {}
        self._parent_wd: int | None = None

    def close(self) -> None:
        os.close(self.fd)

    def _add(self, path: Path, mask: int) -> int:
        wd: int = self._libc.inotify_add_watch(self.fd, os.fsencode(path), mask)
        if wd < 0:
            code = _errno()
            raise OSError(code, os.strerror(code), str(path))
        return wd

    def start(self) -> None:
        """Watch the folder (and every folder below it when recursive), and its entry in its parent."""
        if self.folder.parent != self.folder:
            try:
                self._parent_wd = self._add(self.folder.parent, _PARENT_MASK)
            except OSError:
                self._parent_wd = None  # the parent is gone too: the folder's own events still tell
        self._paths[self._add(self.folder, _FOLDER_MASK)] = self.folder
        if self.recursive:
            self._add_below(self.folder)

    def _add_below(self, folder: Path) -> list[Path]:
        added: list[Path] = []
        for parent, subfolders, _ in os.walk(folder):
            for name in subfolders:
                path = Path(parent, name)
                try:
                    self._paths[self._add(path, _FOLDER_MASK)] = path
                except OSError as error:
                    _unwatchable(path, error)
                    continue
                added.append(path)
        return added

    def _forget_below(self, folder: Path) -> None:
        for wd, path in list(self._paths.items()):
            if path != self.folder and path.is_relative_to(folder):
                del self._paths[wd]
                self._libc.inotify_rm_watch(self.fd, wd)  # the folder moved away: stop following it

    def read(self) -> set[tuple[Change, str]]:
        """The changes the events waiting on the descriptor stand for (none when there are none)."""
        found: set[tuple[Change, str]] = set()
        while True:
            try:
                data = os.read(self.fd, _READ_SIZE)
            except BlockingIOError:
                return found
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, _, length = _HEADER.unpack_from(data, offset)
                raw = data[offset + _HEADER.size : offset + _HEADER.size + length].rstrip(b"\0")
                offset += _HEADER.size + length
                self._event(wd, mask, os.fsdecode(raw), found)

    def _event(self, wd: int, mask: int, name: str, found: set[tuple[Change, str]]) -> None:
        if mask & _Q_OVERFLOW:
            found.add((Change.modified, str(self.folder)))  # events were lost: look at everything again
            return
        if wd == self._parent_wd:
            if name == self.folder.name and mask & _ENTRIES:
                found.add((Change.deleted, str(self.folder)))  # the folder's entry changed: the caller looks again
            return
        if mask & _IGNORED:
            self._paths.pop(wd, None)
            return
        folder = self._paths.get(wd)
        if folder is None:
            return
        if mask & (_DELETE_SELF | _MOVE_SELF):
            if folder == self.folder:
                found.add((Change.deleted, str(folder)))
            return
        path = folder / name
        if mask & (_CREATE | _MOVED_TO):
            found.add((Change.added, str(path)))
            if mask & _ISDIR and self.recursive:
                try:
                    self._paths[self._add(path, _FOLDER_MASK)] = path
                except OSError as error:
                    _unwatchable(path, error)
                    return
                self._add_below(path)  # what is already inside is found by the caller's look at the folder
        elif mask & (_DELETE | _MOVED_FROM):
            found.add((Change.deleted, str(path)))
            if mask & _ISDIR and mask & _MOVED_FROM:
                self._forget_below(path)
        elif mask & (_MODIFY | _CLOSE_WRITE | _ATTRIB):
            found.add((Change.modified, str(path)))


async def changes(folder: Path, *, recursive: bool) -> AsyncGenerator[set[tuple[Change, str]], None]:
    """Batches of changes under `folder` (module docstring); the first, empty, once the watches are in place.

    Raises `OSError` when `folder` cannot be watched (it vanished meanwhile).
    """
    watches = _Watches(folder, recursive)
    try:
        watches.start()
        yield set()
        while True:
            await anyio.wait_readable(watches.fd)
            batch = watches.read()
            with anyio.move_on_after(DEBOUNCE_MS / 1000):
                while True:
                    with anyio.move_on_after(QUIET_MS / 1000) as quiet:
                        await anyio.wait_readable(watches.fd)
                    if quiet.cancelled_caught:
                        break
                    batch |= watches.read()
            batch |= watches.read()
            if batch:
                yield batch
    finally:
        watches.close()
