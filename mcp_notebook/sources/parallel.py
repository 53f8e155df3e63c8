"""Building a large folder's notebooks in several processes at a server's start.

A first scan of thousands of notebooks is pure Python work, bound to one core
by the interpreter lock. On Linux, when the process has no other thread yet
(a server's start), the notebooks to build are shared out: forked children
each build their share and send back what the persistent index would store
(a compact listing and the pickled messages, `stored.py`), a few notebooks at
a time, while this process builds its own share as usual, then restores what
the children sent as it arrives. What a child sends is restored exactly as an
index entry is, so both kinds of notebook serve the same prompts.

Anything a child cannot do (a notebook that fails to load, a child that dies)
is simply left to this process, which loads it the ordinary way and reports
it as always. Forking is never done with other threads running, where a
child could inherit a lock held by one of them.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["MIN_NOTEBOOKS", "Built", "SharedBuild", "can_fork", "worker_count"]

# A stored notebook as a child built it: (stamp with ctime, digest of the file, listing, pickled body).
Built = tuple[tuple[int, int, int, int], bytes, bytes, bytes]

MIN_NOTEBOOKS = 128  # below this, a fork costs more than it saves
_MAX_WORKERS = 3
_OWN_WEIGHT, _CHILD_WEIGHT = 11, 9  # how notebooks are dealt out between this process and each child
_FRAME = 64  # notebooks a child sends at a time


def can_fork() -> bool:
    """Whether this process may fork children here: on Linux, with no other thread running."""
    linux = sys.platform.startswith("linux") and hasattr(os, "fork") and hasattr(os, "memfd_create")
    return linux and threading.active_count() == 1


def worker_count(notebooks: int) -> int:
    """How many children should build `notebooks` notebooks alongside this process (0: build here alone)."""
    if notebooks < MIN_NOTEBOOKS or not can_fork():
        return 0
    return max(0, min(len(os.sched_getaffinity(0)) - 1, _MAX_WORKERS))


class SharedBuild:
    """Children building their shares of `keys` with `build`, started at once; this process keeps the first share.

    `mine(key)` tells whether this process builds `key` itself; `get(key)` is what a child built for it
    (None when the child could not: then this process loads it). A child sends what it built in frames
    of `_FRAME` notebooks as it goes, and `get` waits only for the frame that holds its notebook, so this
    process restores the first frames while the children build the last (it used to wait for all of a
    child's share, then restore it all: a fifth of a cold start at 100,000 prompts). A `busy` process
    (one with other work to do meanwhile) keeps a smaller share.
    """

    def __init__(
        self, keys: Sequence[str], build: Callable[[str], Built | None], workers: int, *, busy: bool = False
    ) -> None:
        # Dealt out in turn, this process taking a little more: a child also turns its notebooks into
        # their stored form, which this process then restores.
        weights = [_CHILD_WEIGHT if busy else _OWN_WEIGHT] + [_OWN_WEIGHT if busy else _CHILD_WEIGHT] * workers
        # Interleaved, so that even a few notebooks are shared: share s takes its turns evenly spaced.
        turns = [s for _, s in sorted(((k + 0.5) / w, s) for s, w in enumerate(weights) for k in range(w))]
        shares: list[list[str]] = [[] for _ in range(workers + 1)]
        for position, key in enumerate(keys):
            shares[turns[position % len(turns)]].append(key)
        self._mine = set(shares[0])
        self._children: list[_Child] = []
        self._owner: dict[str, _Child] = {}
        self._built: dict[str, Built | None] = {}
        try:
            for share in shares[1:]:
                child = self._fork(share, build)
                self._children.append(child)
                self._owner.update(dict.fromkeys(share, child))
        except BaseException:
            self.close()
            raise

    def _fork(self, keys: Sequence[str], build: Callable[[str], Built | None]) -> _Child:
        # The frames go to a file in memory, which never makes the child wait for this process to read
        # (a pipe would, once full, while this process imports or builds); one byte on the pipe says
        # each frame is whole, and the pipe's end says the child is done.
        frames = os.memfd_create("mcp-notebook-build", os.MFD_CLOEXEC)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: build, send, and leave without running anything of the parent's
            status = 1
            try:
                os.close(read)
                for other in self._children:
                    other.close_files()
                for start in range(0, len(keys), _FRAME):
                    results: list[tuple[str, Built | None]] = []
                    for key in keys[start : start + _FRAME]:
                        try:
                            results.append((key, build(key)))
                        except Exception:
                            results.append((key, None))
                    frame = pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)
                    _write_all(frames, len(frame).to_bytes(8, "little") + frame)
                    os.write(write, b"\x01")
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        os.set_blocking(read, False)
        return _Child(pid, read, frames)

    def mine(self, key: str) -> bool:
        return key in self._mine

    def get(self, key: str) -> Built | None:
        child = self._owner.get(key)
        while key not in self._built and child is not None and child.open:
            self._take(child, child.receive())
        return self._built.get(key)

    def _take(self, child: _Child, frames: list[bytes]) -> None:
        for frame in frames:
            try:
                results: Any = pickle.loads(frame)
                self._built.update(results)
            except Exception:  # its notebooks are loaded here
                continue
        if not child.open:
            child.reap()

    def close(self) -> None:
        """End children still running (after an error here) and reap them."""
        children, self._children = self._children, []
        for child in children:
            child.end()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Child:
    """A child of a shared build: the frames it wrote (an 8-byte length, then a pickle), one byte on its pipe each."""

    __slots__ = ("_at", "frames", "open", "pid", "read")

    def __init__(self, pid: int, read: int, frames: int) -> None:
        self.pid = pid
        self.read = read
        self.frames = frames
        self.open = True  # its pipe has not ended yet
        self._at = 0  # where the next frame starts in `frames`

    def receive(self) -> list[bytes]:
        """The frames that are whole, waiting for at least one; none once the child has ended."""
        while self.open:
            select.select([self.read], [], [])
            try:
                ready = os.read(self.read, 1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                ready = b""
            if not ready:
                self.open = False  # done, or gone: a frame it did not finish was never announced
                return []
            return [self._frame() for _ in ready]
        return []

    def _frame(self) -> bytes:
        size = int.from_bytes(os.pread(self.frames, 8, self._at), "little")
        frame = os.pread(self.frames, size, self._at + 8)
        self._at += 8 + size
        return frame

    def close_files(self) -> None:
        for fd in (self.read, self.frames):
            with contextlib.suppress(OSError):
                os.close(fd)

    def reap(self) -> None:
        self.close_files()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        self.pid = 0

    def end(self) -> None:
        """The child is ended if it still runs, and reaped."""
        if self.pid == 0:
            return
        self.open = False
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        self.reap()
