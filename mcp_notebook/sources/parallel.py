"""Building a large folder's notebooks in several processes at a server's start.

A first scan of thousands of notebooks is pure Python work, bound to one core
by the interpreter lock. On Linux, when the process has no other thread yet
(a server's start), the notebooks to build are shared out: a pool of forked
processes (`concurrent.futures.ProcessPoolExecutor`) builds a share, a few
notebooks at a time, and sends back what the persistent index would store (a
compact listing and the pickled messages, `stored.py`), while this process
builds its own share as usual, then restores what the pool sent as it
arrives. What the pool sends is restored exactly as an index entry is, so
both kinds of notebook serve the same prompts.

A frame of built notebooks (a megabyte or so) goes through a file the child
writes; only its name goes through the pool. Through the pool's own pipe it
would be read by the pool's thread in this process, 64 KiB each time that
thread gets the interpreter lock back from this busy process (up to the
switch interval, 5 ms), while the child waits on the full pipe instead of
building.

Anything the pool cannot do (a notebook that fails to load, a process that
dies) is simply left to this process, which loads it the ordinary way and
reports it as always. The pool forks all its processes at once, before its
own thread starts, and only when no other thread runs, where a child could
inherit a lock held by one of them.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["MIN_NOTEBOOKS", "Built", "SharedBuild", "can_fork", "worker_count"]

# A stored notebook as a child built it: (stamp with ctime, digest of the file, listing, pickled body).
Built = tuple[tuple[int, int, int, int], bytes, bytes, bytes]

MIN_NOTEBOOKS = 128  # below this, a fork costs more than it saves
_MAX_WORKERS = 3
_OWN_WEIGHT, _CHILD_WEIGHT = 11, 9  # how notebooks are dealt out between this process and each child
_FRAME = 64  # notebooks a child builds and sends at a time

_build: Callable[[str], Built | None] | None = None  # in a child: what builds a notebook (inherited by the fork)


def can_fork() -> bool:
    """Whether this process may fork children here: on Linux, with no other thread running."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def worker_count(notebooks: int) -> int:
    """How many children should build `notebooks` notebooks alongside this process (0: build here alone)."""
    if notebooks < MIN_NOTEBOOKS or not can_fork():
        return 0
    return max(0, min(len(os.sched_getaffinity(0)) - 1, _MAX_WORKERS))


def _adopt(build: Callable[[str], Built | None]) -> None:
    global _build
    _build = build


def _build_frame(keys: Sequence[str], into: str) -> str:
    """In a child: each notebook of `keys` built (None where it could not be: this process loads it), pickled
    into a new file of the folder `into`, whose path is returned."""
    build = _build
    results: list[tuple[str, Built | None]] = []
    for key in keys:
        try:
            results.append((key, build(key) if build is not None else None))
        except Exception:
            results.append((key, None))
    fd, path = tempfile.mkstemp(dir=into)
    with os.fdopen(fd, "wb") as out:
        pickle.dump(results, out, protocol=pickle.HIGHEST_PROTOCOL)
    return path


class SharedBuild:
    """A pool building its share of `keys` with `build`, started at once; this process keeps the first share.

    `mine(key)` tells whether this process builds `key` itself; `get(key)` is what the pool built for it
    (None when it could not: then this process loads it). The pool builds in frames of `_FRAME` notebooks,
    and `get` waits only for the frame that holds its notebook, so this process restores the first frames
    while the pool builds the last. A `busy` process (one with other work to do meanwhile) keeps a smaller share.
    """

    def __init__(
        self, keys: Sequence[str], build: Callable[[str], Built | None], workers: int, *, busy: bool = False
    ) -> None:
        # Dealt out in turn, this process taking a little more: the pool also turns its notebooks into
        # their stored form, which this process then restores.
        weights = [_CHILD_WEIGHT if busy else _OWN_WEIGHT] + [_OWN_WEIGHT if busy else _CHILD_WEIGHT] * workers
        # Interleaved, so that even a few notebooks are shared: share s takes its turns evenly spaced.
        turns = [s for _, s in sorted(((k + 0.5) / w, s) for s, w in enumerate(weights) for k in range(w))]
        mine: list[str] = []
        theirs: list[str] = []
        for position, key in enumerate(keys):
            (mine if turns[position % len(turns)] == 0 else theirs).append(key)
        self._mine = set(mine)
        self._frames: dict[str, Future[str]] = {}
        self._built: dict[str, Built | None] = {}
        self._folder = tempfile.mkdtemp(prefix="mcp-notebook-build-")
        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=_adopt, initargs=(build,)
        )
        try:
            for start in range(0, len(theirs), _FRAME):
                frame = theirs[start : start + _FRAME]
                future = self._pool.submit(_build_frame, frame, self._folder)
                self._frames.update(dict.fromkeys(frame, future))
        except BaseException:
            self.close()
            raise

    def mine(self, key: str) -> bool:
        return key in self._mine

    def get(self, key: str) -> Built | None:
        future = self._frames.pop(key, None)
        if future is not None and key not in self._built:
            try:
                path = future.result()
                with open(path, "rb") as frame:
                    self._built.update(pickle.load(frame))
                os.unlink(path)
            except Exception:  # a child died, or its frame did not come back: its notebooks are loaded here
                pass
        return self._built.pop(key, None)

    def close(self) -> None:
        """Let go of frames not asked for, end the pool and reap its processes."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._folder, ignore_errors=True)
