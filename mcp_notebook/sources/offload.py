"""Building a large notebook in a Python process of its own, so that the server's own interpreter stays free.

Parsing a notebook's JSON is one call into C that holds the interpreter lock
for its whole duration: for a 60 MB notebook, hundreds of milliseconds during
which no other thread of the server runs, its event loop included, even when
the reload runs in a worker thread. A notebook at least `MIN_BYTES` large is
therefore read, parsed and built by a helper process, which sends back what
the persistent index would store (`loading.build_stored`): a compact listing
and the pickled messages, restored here exactly as an index entry is.

The helper is a one-process `concurrent.futures.ProcessPoolExecutor`, started
when first needed (a new interpreter, never a fork: a server has threads),
then kept for the next large notebook, and ended by `close` (or with this
process). Anything it cannot do (a notebook whose build fails other than for
its file, a helper that cannot start or dies) is left to the caller, which
builds the notebook itself.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from concurrent.futures import BrokenExecutor, ProcessPoolExecutor
from pathlib import Path

from ..exceptions import NotebookFormatError
from .loading import build_stored, failure_reason
from .parallel import Built

__all__ = ["MIN_BYTES", "BuildProcess", "Outcome"]

log = logging.getLogger(__name__)

MIN_BYTES = 1_000_000  # below this a notebook parses within tens of milliseconds: built where it is asked

# What the helper sends back for one notebook: its stored form, or why its file is not a notebook.
Outcome = Built | str


def _outcome(root: str, key: str, skills: bool) -> Outcome | None:
    """In the helper: notebook `key` of `root` built (with `skills`, its skills too), or why its file is no
    notebook; None to build it there."""
    try:
        built = build_stored(Path(root), key, skills=skills)
    except NotebookFormatError as error:
        return failure_reason(error)
    except Exception:  # built again by the server, which logs why
        return None
    return built


def _ignore_interrupts() -> None:
    # Ctrl-C in a terminal reaches the whole process group: the helper leaves when the server ends it instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class BuildProcess:
    """The helper process building large notebooks, one at a time, started at the first `build`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._pid: int | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The helper's process id while it runs (None before the first large notebook and after it ended)."""
        return self._pid

    def build(self, root: Path, key: str, *, skills: bool = False) -> Outcome | None:
        """Notebook `key` of `root` as the helper built it (with `skills`, the skills it declares too); None when
        the caller must build it itself."""
        with self._lock:
            if self._closed:
                return None
            pool = self._pool or self._start()
            if pool is None:
                return None
            try:
                return pool.submit(_outcome, str(root), key, skills).result()
            except (BrokenExecutor, OSError):
                log.warning("the notebook builder process ended; %s is built in this process", key)
                self._stop()
                return None

    def _start(self) -> ProcessPoolExecutor | None:
        # Started as multiprocessing starts any spawned child: this interpreter with this process's flags,
        # then this process's module path.
        pool = ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts
        )
        try:
            self._pid = pool.submit(os.getpid).result()  # started now, and known by its id
        except (BrokenExecutor, OSError, ValueError) as error:
            pool.shutdown(wait=True, cancel_futures=True)
            log.warning("no notebook builder process (%s): large notebooks are built in this process", error)
            self._closed = True
            return None
        self._pool = pool
        return pool

    def _stop(self) -> None:
        pool, self._pool, self._pid = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """End the helper; a later `build` is left to the caller."""
        with self._lock:
            self._closed = True
            self._stop()
