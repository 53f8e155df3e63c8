"""`serve --http --workers N`: N uvicorn worker processes sharing one listening socket.

The parent binds the socket before anything is indexed (a busy port is a
one-line error, not a traceback after a long scan), then starts the workers
with uvicorn's process manager; each worker builds the application from the
environment (`mcp_notebook.asgi:create_app`), indexes the folder during its
start-up and only then takes connections from the shared socket, so no
request reaches a worker that has nothing to serve. `on_ready` is called
once every worker serves. SIGTERM (or Ctrl-C) stops the workers, each
finishing the requests in flight within the drain timeout; a worker that
dies is replaced. The workers relay each other's sessions' requests with a
secret made here for this launch (`affinity.py`).
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable
from typing import Final

from uvicorn.config import Config

from .affinity import RELAY_SECRET_ENV
from .http import uvicorn_config
from .limits import HttpLimits
from .uvicorn_seam import Multiprocess

__all__ = ["APP_FACTORY", "run_workers"]

APP_FACTORY: Final = "mcp_notebook.asgi:create_app"
_READY_WAIT: Final = 3600.0  # seconds a worker may take to index before it counts as failed


class _AnnouncingMultiprocess(Multiprocess):
    """uvicorn's process manager, telling its caller once every worker has started serving."""

    def __init__(self, config: Config, sockets: list[socket.socket], on_ready: Callable[[], None] | None) -> None:
        super().__init__(config, sockets)
        self.on_ready = on_ready
        self.failed = False

    def init_processes(self) -> None:
        super().init_processes()
        ready = all(process.wait_until_ready(_READY_WAIT, self.should_exit) for process in self.processes)
        if ready and self.on_ready is not None:
            self.on_ready()
        elif not ready and not self.should_exit.is_set():
            self.failed = True
            self.should_exit.set()


def run_workers(sock: socket.socket, workers: int, limits: HttpLimits, on_ready: Callable[[], None] | None) -> bool:
    """Serve with `workers` processes on `sock` until stopped; False if a worker could not start."""
    # The relay secret of this launch: the workers inherit it, and it is never written anywhere.
    os.environ[RELAY_SECRET_ENV] = secrets.token_hex(32)
    config = uvicorn_config(APP_FACTORY, limits, factory=True, workers=workers)
    manager = _AnnouncingMultiprocess(config, [sock], on_ready)
    try:
        manager.run()
    finally:
        sock.close()
    return not manager.failed
