"""Watching by looking, where inotify is blind (network file systems) or when asked to (`--poll SECONDS`).

inotify reports what this machine's kernel does to a file. A save made on
another machine that shares the volume (NFS, CIFS/SMB, FUSE file systems such
as sshfs or a bucket mount, and the like) never passes through this kernel,
so it is never reported, and a replica would serve its old prompts forever.
`blind_file_system` tells such folders by their file system type (from
`/proc/self/mountinfo`, a text file: no `statfs` through ctypes at start).

There the watched folders are looked at every `interval` seconds instead: one
timer for all of them, and each look is a walk of the folder trees in a worker
thread (never on the event loop) comparing every wanted file's modification
time, size, inode and change time with the last look's (what the notebook index
compares): a rewrite that keeps the size and sets the modification time back
still changes the change time. Nothing runs between two looks.

A walk is not a snapshot: a file renamed from a folder already walked into one
not walked yet is seen twice, and a file written while it is looked at is seen
half written. So a look that found changes is taken again at once, up to
`SETTLE_LOOKS` times, until two looks agree; only then are the changes passed
on, and clients are told once, of what is really there.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import anyio

from ..worker_threads import run_off_loop
from .inotify import Change

__all__ = [
    "DEFAULT_POLL_SECONDS",
    "SETTLE_LOOKS",
    "Look",
    "blind_file_system",
    "changes_between",
    "file_system_type",
    "look",
    "mount_table",
    "poll_paths",
]

DEFAULT_POLL_SECONDS: Final = 2.0
"""How often a folder on a network file system is looked at, unless `--poll` says otherwise."""
SETTLE_LOOKS: Final = 4
"""At most this many looks in a row until two agree; a folder written without pause is reported as last seen."""

# File systems whose files other machines change without this kernel knowing: inotify misses those writes.
_BLIND_TYPES: Final = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "afs",
        "ceph",
        "glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "ocfs2",
        "gfs2",
        "virtiofs",
        "vboxsf",
        "vmhgfs",
        "prl_fs",
        "davfs",
        "ncpfs",
        "coda",
    }
)
_MOUNTINFO: Final = "/proc/self/mountinfo"

# mtime_ns, size, inode, ctime_ns (of the file, or of a symlink's target), symlink's inode: what the notebook
# index compares (`index.Stamp`), so that a rewrite keeping the size and the modification time is seen too.
Stamp = tuple[int, int, int, int, int]
Look = dict[str, Stamp]


def mount_table() -> str | None:
    """This process's mount table (Linux), or None where there is none."""
    try:
        with open(_MOUNTINFO, encoding="utf-8", errors="surrogateescape") as file:
            return file.read()
    except OSError:
        return None


_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescaped(field: str) -> str:
    """A mountinfo field with its octal escapes (`\\040` for a space) undone."""
    return _OCTAL_ESCAPE.sub(lambda escape: chr(int(escape[1], 8)), field)


def file_system_type(path: Path, mountinfo: str | None = None) -> str | None:
    """The type of the file system `path` is on (`ext4`, `nfs4`, `fuse.sshfs`, …), or None where unknown.

    Read from `mountinfo` (by default this process's `/proc/self/mountinfo`): the
    mount whose mount point is the longest prefix of the resolved path, the later
    one where two share a mount point (it hides the earlier).
    """
    if mountinfo is None:
        mountinfo = mount_table()
        if mountinfo is None:
            return None
    real = os.path.realpath(path)
    best: tuple[int, str] | None = None
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        try:
            mount_point = _unescaped(fields[4])
            fs_type = fields[fields.index("-", 6) + 1]
        except (IndexError, ValueError):
            continue
        inside = real == mount_point or real.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= best[0]):
            best = (len(mount_point), fs_type)
    return best[1] if best is not None else None


def blind_file_system(path: Path, mountinfo: str | None = None) -> str | None:
    """The type of `path`'s file system when inotify misses changes other machines make there, else None.

    `fuseblk` (a FUSE driver for a local disk, such as NTFS) is not blind: only this machine writes it.
    """
    fs_type = file_system_type(path, mountinfo)
    if fs_type is None:
        return None
    if fs_type in _BLIND_TYPES or fs_type == "fuse" or fs_type.startswith("fuse."):
        return fs_type
    return None


def _stamp(status: os.stat_result) -> tuple[int, int, int, int]:
    return (status.st_mtime_ns, status.st_size, status.st_ino, status.st_ctime_ns)


def look(folders: Sequence[tuple[Path, bool]], wanted: Callable[[str], bool], descend: Callable[[str], bool]) -> Look:
    """The stamp of every wanted file in `folders` (with their subfolders when the flag says so), by path.

    `wanted(name)` picks files and `descend(name)` subfolders by name alone, so a
    look costs a directory read per folder and a `stat` per wanted file. A
    symlink's stamp is its target's plus its own inode, so retargeting it counts.
    A stamp is what the notebook index compares (`index.Stamp`): the change time
    too, which no write can set back.
    """
    found: Look = {}
    for folder, deep in folders:
        pending = [os.fspath(folder)]
        while pending:
            current = pending.pop()
            try:
                with os.scandir(current) as entries:
                    for entry in entries:
                        name = entry.name
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                if deep and descend(name):
                                    pending.append(entry.path)
                                continue
                            if not wanted(name):
                                continue
                            own = entry.stat(follow_symlinks=False)
                            if stat.S_ISLNK(own.st_mode):
                                try:
                                    target = os.stat(entry.path)
                                    found[entry.path] = (*_stamp(target), own.st_ino)
                                except OSError:  # dangling: still a change when it appears or goes
                                    found[entry.path] = (-1, -1, -1, -1, own.st_ino)
                            else:
                                found[entry.path] = (*_stamp(own), 0)
                        except OSError:
                            continue  # gone between the listing and the look: the next look says so
            except OSError:
                continue  # the folder is gone (its files are reported deleted) or cannot be read
    return found


def changes_between(before: Look, after: Look) -> set[tuple[Change, str]]:
    """What happened between two looks, as the inotify watch reports it."""
    found: set[tuple[Change, str]] = set()
    for path, stamp in after.items():
        previous = before.get(path)
        if previous is None:
            found.add((Change.added, path))
        elif previous != stamp:
            found.add((Change.modified, path))
    found.update((Change.deleted, path) for path in before.keys() - after.keys())
    return found


async def poll_paths(
    folders: Sequence[tuple[Path, bool]],
    *,
    interval: float,
    on_changes: Callable[[set[tuple[Change, str]]], object],
    wanted: Callable[[str], bool],
    descend: Callable[[str], bool],
    ready: Callable[[Look], None],
    stop_event: anyio.Event | None = None,
) -> None:
    """Look at `folders` every `interval` seconds and pass what changed to `on_changes`, until `stop_event`.

    `ready(first)` is called with the first look once it is taken: a change after it is found by the
    next look, and a change before it only by that first look.
    """

    async def looked() -> Look:
        return await run_off_loop(look, folders, wanted, descend)

    async def settled(now: Look) -> Look:
        for _ in range(SETTLE_LOOKS - 1):
            again = await looked()
            if again == now:
                break
            now = again
        return now

    last = await looked()
    ready(last)
    while True:
        if stop_event is None:
            await anyio.sleep(interval)
        else:
            with anyio.move_on_after(interval):
                await stop_event.wait()
            if stop_event.is_set():
                return
        now = await looked()
        if now != last:
            now = await settled(now)
        changed = changes_between(last, now)
        last = now
        if changed:
            on_changes(changed)
