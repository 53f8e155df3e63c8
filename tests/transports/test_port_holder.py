"""The socket that holds the port of `serve --http --workers N` (Linux): nothing joins it without `SO_REUSEPORT`.

The other-user case is in `tests/e2e/test_serve_http_port.py` (it needs root); here the same rule on
sockets of this process: `SO_REUSEADDR` alone, which anyone may set, never gets the port.
"""

from __future__ import annotations

import socket

import pytest

from mcp_notebook.transports.http import bind_socket, port_sharing

pytestmark = pytest.mark.skipif(not port_sharing(), reason="the port is shared by the workers only on Linux")


def test_a_socket_with_so_reuseaddr_cannot_bind_the_held_port() -> None:
    with bind_socket("127.0.0.1", 0, shared_port=True) as holder:
        port = holder.getsockname()[1]
        assert not holder.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with pytest.raises(OSError, match="in use"):
                other.bind(("127.0.0.1", port))


def test_a_worker_socket_binds_the_held_port_and_listens() -> None:
    with bind_socket("127.0.0.1", 0, shared_port=True) as holder, socket.socket() as worker:
        worker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        worker.bind(holder.getsockname())
        worker.listen(8)
        with socket.create_connection(holder.getsockname(), timeout=5):
            accepted, _ = worker.accept()
            accepted.close()


def test_a_port_still_closing_after_a_server_without_so_reuseport_is_one_line_that_says_what_to_do() -> None:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port), timeout=5)
        accepted, _ = listener.accept()
        accepted.close()  # the server's side closes first, so it keeps the port in TIME_WAIT
        assert client.recv(1) == b""
        client.close()
    with pytest.raises(OSError, match="still closing from a server that just stopped; try again within a minute"):
        bind_socket("127.0.0.1", port, shared_port=True).close()
