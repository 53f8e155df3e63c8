"""`serve --http --workers N`: N uvicorn worker processes serving one port.

The parent binds the port before anything is indexed (a busy port is a
one-line error, not a traceback after a long scan), then starts the workers
with uvicorn's process manager; each worker builds the application from the
environment (`mcp_notebook.asgi:create_app`), indexes the folder during its
start-up and only then takes connections, so no request reaches a worker
that has nothing to serve. `on_ready` is called once every worker serves.
SIGTERM (or Ctrl-C) stops the workers, each finishing the requests in flight
within the drain timeout; a worker that dies is replaced.

The workers share nothing but the port and the folder, so they serve
handshake clients without sessions (`stateless`, set by `serve`): a session
would live in one worker while the kernel deals the client's next
connection to any of them (docs/deployment.md says why this rule, and what
handshake clients do without).

How connections reach the workers:

* on Linux (`http.port_sharing`), every worker listens on a socket of its
  own, bound to the port with `SO_REUSEPORT`, and the kernel deals new
  connections out among the sockets that listen. A shared socket let one
  worker take a whole burst of connections (32 opened at once split 30 / 2,
  and 8 went all to one): with clients that keep their connection, one
  worker served nearly everyone while the other idled. Each socket is made
  here when uvicorn starts its worker, handed to it, and closed here at
  once, so it is the worker's alone: it listens once the worker has
  indexed (uvicorn listens after the start-up), and it is gone with the
  worker, so a new connection never waits on a worker that died or is still
  indexing. The parent's own socket only holds the port (bound, never
  listening) from before anything is indexed until the last worker stops:
  `SO_REUSEPORT` lets only this user's processes join it, and no socket on
  the port has `SO_REUSEADDR`, so no other user can bind the port even
  while no worker listens (at start, or while every worker restarts);
* elsewhere, the workers share the parent's listening socket.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Final

from uvicorn.config import Config

from .http import uvicorn_config
from .limits import HttpLimits
from .uvicorn_seam import Multiprocess

__all__ = ["APP_FACTORY", "run_workers"]

APP_FACTORY: Final = "mcp_notebook.asgi:create_app"
_READY_WAIT: Final = 3600.0  # seconds a worker may take to index before it counts as failed


class _AnnouncingMultiprocess(Multiprocess):
    """uvicorn's process manager, telling its caller once every worker has started serving; with a port
    held for sharing, it hands each worker a socket of its own (module docstring)."""

    def __init__(self, config: Config, sock: socket.socket, on_ready: Callable[[], None] | None) -> None:
        self._port = sock
        self._own_sockets = not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        self._handed: list[socket.socket] = []
        super().__init__(config, [sock])
        self.on_ready = on_ready
        self.failed = False

    @property
    def sockets(self) -> list[socket.socket]:
        """What uvicorn hands the worker it is starting (it reads this once for each)."""
        if not self._own_sockets:
            return [self._port]
        self._close_handed()
        family, address = self._port.family, self._port.getsockname()
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        self._handed.append(sock)
        return [sock]

    @sockets.setter
    def sockets(self, value: list[socket.socket]) -> None:
        pass  # uvicorn's own assignment: `_port` is what it was given

    def _close_handed(self) -> None:
        """Close the copies of the sockets handed to workers already started (the workers have their own)."""
        handed, self._handed = self._handed, []
        for sock in handed:
            sock.close()

    def init_processes(self) -> None:
        super().init_processes()
        self._close_handed()
        ready = all(process.wait_until_ready(_READY_WAIT, self.should_exit) for process in self.processes)
        if ready and self.on_ready is not None:
            self.on_ready()
        elif not ready and not self.should_exit.is_set():
            self.failed = True
            self.should_exit.set()

    def keep_subprocess_alive(self) -> None:
        super().keep_subprocess_alive()
        self._close_handed()

    def restart_all(self) -> None:
        super().restart_all()
        self._close_handed()

    def handle_ttin(self) -> None:
        super().handle_ttin()
        self._close_handed()


def run_workers(sock: socket.socket, workers: int, limits: HttpLimits, on_ready: Callable[[], None] | None) -> bool:
    """Serve with `workers` processes on `sock` until stopped; False if a worker could not start.

    `sock` listening: the workers share it; bound only (`bind_socket(..., shared_port=True)`): it holds
    the port, and each worker listens on a socket of its own.
    """
    config = uvicorn_config(APP_FACTORY, limits, factory=True, workers=workers)
    manager = _AnnouncingMultiprocess(config, sock, on_ready)
    try:
        manager.run()
    finally:
        sock.close()
    return not manager.failed
