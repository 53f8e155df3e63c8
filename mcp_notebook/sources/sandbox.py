"""Reading a file inside the served folder so that no symlink, swap or special file can lead out of it.

A path is resolved once (symlinks that stay inside the folder are allowed),
checked to lie inside the folder, and then opened by walking the resolved
path from the folder one component at a time with `O_NOFOLLOW`: a component
swapped for a symlink between the check and the open makes the open fail
instead of following it. The file itself is looked at (`lstat`) before it is
opened, so a FIFO, socket or device is refused without ever being opened
(opening a FIFO would block), and the opened file must be the very file
that was looked at. Systems without `dir_fd` support open the resolved path
and compare the opened file's identity with the checked one instead.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileRefusal", "SandboxedFile", "look_inside", "read_inside", "resolve_inside"]

_WALK = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# Never block on a special file swapped in after the look, never make a terminal ours.
_FILE_FLAGS = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_FOLDER_FLAGS = os.O_RDONLY | _CLOEXEC | _NOFOLLOW | _DIRECTORY


class FileRefusal(Exception):
    """Why a file inside the served folder cannot be read; the message names no server path.

    `kind` is "outside" (a symlink leads out of the folder), "missing" (no such
    file, a symlink loop, a name too long, a NUL character), "special" (not a
    regular file), "changed" (swapped while being opened), "too-large" or
    "unreadable".
    """

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class SandboxedFile:
    """The bytes of a file read inside the served folder, and the identity of the file they came from."""

    data: bytes
    resolved: str  # posix path relative to the folder, symlinks resolved
    stamp: tuple[int, int, int]  # (mtime_ns, size, inode) of the opened file
    ctime_ns: int = 0  # its status-change time: with the stamp, what a persistent index compares


def resolve_inside(root: Path, relative: str) -> str:
    """`relative` (posix) with every symlink resolved, relative to `root` (resolved, absolute).

    Raises `FileRefusal` when a symlink leads outside `root` or the path holds a NUL.
    """
    if "\x00" in relative:
        raise FileRefusal("missing", "the path holds a NUL character")
    try:
        resolved = os.path.realpath(os.path.join(root, relative))
    except (OSError, ValueError) as error:
        raise FileRefusal("missing", _reason(error)) from None
    if os.path.commonpath([root, resolved]) != str(root):
        raise FileRefusal("outside", "a symlink leads outside the served folder")
    return Path(resolved).relative_to(root).as_posix()


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError):
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return "no such file"
        if error.errno == errno.ELOOP:
            return "a symlink loop (or a symlink swapped in while it was opened)"
        if error.errno == errno.ENAMETOOLONG:
            return "the name is too long"
        return error.strerror or type(error).__name__
    return "not a valid path"


def _kind(error: OSError) -> str:
    return "missing" if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG) else "unreadable"


def _open_walking(root: Path, resolved: str, *, open_file: bool = True) -> tuple[int, os.stat_result]:
    """Open `resolved` (no symlinks in it) from `root` with O_NOFOLLOW at every step; the fd and its lstat.

    With `open_file=False` the file is only looked at, and the fd is -1.
    """
    parts = [part for part in resolved.split("/") if part not in ("", ".")]
    if not parts:
        raise FileRefusal("missing", "it is a folder")
    folder = os.open(root, _FOLDER_FLAGS)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=folder)
            os.close(folder)
            folder = inner
        looked = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        _check_regular(looked)
        return (os.open(parts[-1], _FILE_FLAGS, dir_fd=folder) if open_file else -1), looked
    finally:
        os.close(folder)


def _open_comparing(root: Path, resolved: str) -> tuple[int, os.stat_result]:
    """Without `dir_fd`: open the resolved path, then require the opened file to be the checked one."""
    path = os.path.join(root, resolved)
    looked = os.stat(path, follow_symlinks=False)
    _check_regular(looked)
    return os.open(path, _FILE_FLAGS), looked


def _check_regular(looked: os.stat_result) -> None:
    if stat.S_ISREG(looked.st_mode):
        return
    if stat.S_ISDIR(looked.st_mode):
        raise FileRefusal("missing", "it is a folder")
    if stat.S_ISLNK(looked.st_mode):
        raise FileRefusal("changed", "a symlink was swapped in while it was being opened")
    raise FileRefusal("special", "it is not a regular file (a FIFO, socket or device), so it is never opened")


def look_inside(root: Path, resolved: str) -> tuple[int, int, int, int]:
    """(mtime_ns, size, inode, ctime_ns) of the regular file at `resolved` inside `root`, found as
    `read_inside` would find it (no symlink followed, nothing special), without opening it."""
    if "\x00" in resolved or resolved.startswith("/") or ".." in resolved.split("/"):
        raise FileRefusal("missing", "not a path resolved inside the served folder")
    try:
        if _WALK:
            _, looked = _open_walking(root, resolved, open_file=False)
        else:
            looked = os.stat(os.path.join(root, resolved), follow_symlinks=False)
            _check_regular(looked)
    except OSError as error:
        raise FileRefusal(_kind(error), _reason(error)) from None
    return (looked.st_mtime_ns, looked.st_size, looked.st_ino, looked.st_ctime_ns)


def read_inside(root: Path, resolved: str, *, limit: int) -> SandboxedFile:
    """The bytes of the file at `resolved` (from `resolve_inside`) inside `root` (resolved, absolute).

    Raises `FileRefusal` for a file missing, special, over `limit` bytes, or
    swapped (for a symlink, say) since it was resolved.
    """
    if "\x00" in resolved or resolved.startswith("/") or ".." in resolved.split("/"):
        raise FileRefusal("missing", "not a path resolved inside the served folder")
    try:
        fd, looked = (_open_walking if _WALK else _open_comparing)(root, resolved)
    except OSError as error:
        raise FileRefusal(_kind(error), _reason(error)) from None
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (looked.st_dev, looked.st_ino) or not stat.S_ISREG(opened.st_mode):
            raise FileRefusal("changed", "the file was replaced while it was being opened")
        if opened.st_size > limit:
            raise FileRefusal("too-large", f"it is {opened.st_size} bytes; the limit is {limit}")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while being read
            raise FileRefusal("too-large", f"it is over {limit} bytes (the limit)")
    except OSError as error:
        raise FileRefusal("unreadable", _reason(error)) from None
    finally:
        os.close(fd)
    return SandboxedFile(
        b"".join(chunks), resolved, (opened.st_mtime_ns, opened.st_size, opened.st_ino), opened.st_ctime_ns
    )
