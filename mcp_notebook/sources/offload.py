"""Building a large notebook in a Python process of its own, so that the server's own interpreter stays free.

Parsing a notebook's JSON is one call into C that holds the interpreter lock
for its whole duration: for a 60 MB notebook, hundreds of milliseconds during
which no other thread of the server runs, its event loop included, even when
the reload runs in a worker thread. A notebook at least `MIN_BYTES` large is
therefore read, parsed and built by a helper process, which sends back what
the persistent index would store (`loading.build_stored`): a compact listing
and the pickled messages, restored here exactly as an index entry is.

The helper is started when first needed (a new interpreter, never a fork:
a server has threads), then kept for the next large notebook, and ends when
`close` is called or this process's end closes its pipe. Anything it cannot do
(a notebook whose build fails other than for its file, a helper that cannot
start or dies) is left to the caller, which builds the notebook itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import IO, Any

from ..exceptions import NotebookFormatError
from .loading import build_stored, failure_reason
from .parallel import Built

__all__ = ["MIN_BYTES", "BuildProcess", "Outcome", "serve"]

log = logging.getLogger(__name__)

MIN_BYTES = 1_000_000  # below this a notebook parses within tens of milliseconds: built where it is asked
_HEADER = struct.Struct("!Q")
_CLOSE_SECONDS = 5.0

# What the helper sends back for one notebook: its stored form, or why its file is not a notebook.
Outcome = Built | str


def _write_frame(out: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


def _read_exactly(source: IO[bytes], size: int) -> bytes | None:
    chunks: list[bytes] = []
    while size:
        chunk = source.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(source: IO[bytes]) -> Any:
    header = _read_exactly(source, _HEADER.size)
    if header is None:
        raise EOFError("the notebook builder closed its pipe")
    data = _read_exactly(source, _HEADER.unpack(header)[0])
    if data is None:
        raise EOFError("the notebook builder closed its pipe")
    return pickle.loads(data)


def _outcome(root: str, key: str) -> Outcome | None:
    try:
        built = build_stored(Path(root), key)
    except NotebookFormatError as error:
        return failure_reason(error)
    except Exception:  # built again by the server, which logs why
        return None
    return built


def serve() -> None:
    """The helper's main loop: a (root, key) request on stdin, its `Outcome` (or None) on stdout, until EOF."""
    # Ctrl-C in a terminal reaches the whole process group: the helper leaves when its pipe closes instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    sys.stdout = sys.stderr  # nothing printed by accident reaches the answers
    with requests, answers:
        while True:
            try:
                root, key = _read_frame(requests)
            except EOFError:
                return
            _write_frame(answers, _outcome(root, key))


def _end(process: subprocess.Popen[bytes]) -> None:
    """Close the helper's pipes, so that it leaves, and reap it."""
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    try:
        process.wait(_CLOSE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class BuildProcess:
    """The helper process building large notebooks, one at a time, started at the first `build`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._closed = False
        self._ending: dict[int, weakref.finalize[Any, Any]] = {}  # so that a helper never outlives its owner

    def build(self, root: Path, key: str) -> Outcome | None:
        """Notebook `key` of `root` as the helper built it; None when the caller must build it itself."""
        with self._lock:
            if self._closed:
                return None
            process = self._process or self._start()
            if process is None or process.stdin is None or process.stdout is None:
                return None
            try:
                _write_frame(process.stdin, (str(root), key))
                answer: Outcome | None = _read_frame(process.stdout)
            except (OSError, EOFError, pickle.UnpicklingError):
                log.warning("the notebook builder process ended; %s is built in this process", key)
                self._stop()
                return None
            return answer

    def _start(self) -> subprocess.Popen[bytes] | None:
        # Isolated (no current folder on its path, where a `json.py` could shadow the library), with the
        # modules this process finds first: the package itself, then this process's own path.
        path = [str(Path(__file__).resolve().parents[2]), *(entry for entry in sys.path if entry)]
        code = f"import sys; sys.path[:0] = {path!r}; from mcp_notebook.sources.offload import serve; serve()"
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True
            )
        except (OSError, ValueError) as error:
            log.warning("no notebook builder process (%s): large notebooks are built in this process", error)
            self._closed = True
            return None
        self._ending[self._process.pid] = weakref.finalize(self, _end, self._process)
        return self._process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            self._ending.pop(process.pid)()

    def close(self) -> None:
        """End the helper (it ends with its pipe); a later `build` is left to the caller."""
        with self._lock:
            self._closed = True
            self._stop()
