"""Building a large folder's notebooks in several processes at a server's start.

A first scan of thousands of notebooks is pure Python work, bound to one core
by the interpreter lock. On Linux, when the process has no other thread yet
(a server's start), the notebooks to build are shared out: forked children
each build their share and send back what the persistent index would store
(a compact listing and the pickled messages, `stored.py`), while this process
builds its own share as usual. What a child sends is restored exactly as an
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


def can_fork() -> bool:
    """Whether this process may fork children here: on Linux, with no other thread running."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def worker_count(notebooks: int) -> int:
    """How many children should build `notebooks` notebooks alongside this process (0: build here alone)."""
    if notebooks < MIN_NOTEBOOKS or not can_fork():
        return 0
    return max(0, min(len(os.sched_getaffinity(0)) - 1, _MAX_WORKERS))


class SharedBuild:
    """Children building their shares of `keys` with `build`, started at once; this process keeps the first share.

    `mine(key)` tells whether this process builds `key` itself; `get(key)` is what a child built for it
    (None when the child could not: then this process loads it). The first `get` waits for every child.
    A `busy` process (one with other work to do meanwhile) keeps a smaller share.
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
        self._children: list[tuple[int, int]] = []  # (pid, read end of its pipe)
        self._built: dict[str, Built | None] | None = None
        try:
            for share in shares[1:]:
                self._children.append(self._fork(share, build))
        except BaseException:
            self.close()
            raise

    def _fork(self, keys: Sequence[str], build: Callable[[str], Built | None]) -> tuple[int, int]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: build, send, and leave without running anything of the parent's
            status = 1
            try:
                os.close(read)
                for _, other in self._children:
                    os.close(other)
                results: list[tuple[str, Built | None]] = []
                for key in keys:
                    try:
                        results.append((key, build(key)))
                    except Exception:
                        results.append((key, None))
                with os.fdopen(write, "wb") as out:
                    pickle.dump(results, out, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(write)
        return pid, read

    def mine(self, key: str) -> bool:
        return key in self._mine

    def get(self, key: str) -> Built | None:
        if self._built is None:
            self._built = self._collect()
        return self._built.get(key)

    def _collect(self) -> dict[str, Built | None]:
        built: dict[str, Built | None] = {}
        children, self._children = self._children, []
        for pid, read in children:
            chunks: list[bytes] = []
            with contextlib.suppress(OSError):
                while chunk := os.read(read, 1 << 20):
                    chunks.append(chunk)
            os.close(read)
            _, status = os.waitpid(pid, 0)
            if status != 0:
                continue  # its notebooks are loaded here
            try:
                results: Any = pickle.loads(b"".join(chunks))
                built.update(results)
            except Exception:
                continue
        return built

    def close(self) -> None:
        """End children still running (after an error here) and reap them."""
        children, self._children = self._children, []
        for pid, read in children:
            with contextlib.suppress(OSError):
                os.close(read)  # a child writing to it gets a broken pipe and leaves
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
