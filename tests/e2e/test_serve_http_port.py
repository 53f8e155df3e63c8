"""The port of `serve --http` is ours from the first moment: another user cannot bind it, with or without
`--workers`, while the workers index at start or while they restart.

Another user is a real process of uid 65534 (the test must run as root to make one). It tries to bind
and listen on the port, with and without `SO_REUSEADDR` / `SO_REUSEPORT`, over and over, from the moment
the server holds the port until every worker listens again; it counts the tries made while nothing
listened on the port, which is when a holder socket with `SO_REUSEADDR` let anyone in.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
import pytest
from client_harness import stop_process
from e2e_processes import DEADLINE, URL_PREFIX, write_notebook
from served_http import wait_until

from mcp_notebook.transports.http import port_sharing

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="looks into the server's sockets (Linux)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="becoming another user (uid 65534) needs root"),
]

OTHER_UID = 65534

# Imports first, as root: the interpreter's own files may be out of the other user's reach.
_TAKER = r"""
import json, os, select, socket, sys
port = int(sys.argv[1])
os.setuid(int(sys.argv[2]))
ways = {
    "plain": (),
    "SO_REUSEADDR": (socket.SO_REUSEADDR,),
    "SO_REUSEPORT": (socket.SO_REUSEPORT,),
    "both": (socket.SO_REUSEADDR, socket.SO_REUSEPORT),
}
tries = idle = 0
taken = []
print(os.getuid(), flush=True)
while True:
    ready, _, _ = select.select([sys.stdin], [], [], 0.005)
    if ready:
        if not sys.stdin.readline():
            break
        print(json.dumps({"tries": tries, "idle": idle, "taken": taken}), flush=True)
        continue
    with socket.socket() as knock:
        idle += knock.connect_ex(("127.0.0.1", port)) != 0  # refused: nothing listens on the port
    for name, options in ways.items():
        tries += 1
        with socket.socket() as sock:
            for option in options:
                sock.setsockopt(socket.SOL_SOCKET, option, 1)
            try:
                sock.bind(("127.0.0.1", port))
                sock.listen(8)
            except OSError:
                continue
            taken.append(name)  # then closed at once: the server's clients must not hang on it
"""


class _Taker:
    """The other user's process, trying to take `port` until it is stopped."""

    def __init__(self, port: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _TAKER, str(port), str(OTHER_UID)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == str(OTHER_UID)

    def report(self) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("report\n")
        self.process.stdin.flush()
        report: dict[str, Any] = json.loads(self.process.stdout.readline())
        return report

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=DEADLINE) == 0
        assert self.process.stdout is not None
        self.process.stdout.close()


@contextmanager
def _taking(port: int) -> Iterator[_Taker]:
    taker = _Taker(port)
    try:
        yield taker
    finally:
        taker.stop()


_libc = ctypes.CDLL(None, use_errno=True)
_PIDFD_GETFD = 438  # the same number on every Linux architecture


def _holds_port(pid: int, port: int) -> bool:
    """Whether process `pid` has a socket bound to `port` that is no mere probe (listening, or `SO_REUSEPORT`).

    A socket bound but not listening shows in no table of `/proc/net`: each one is copied out of the
    process (`pidfd_getfd`) and asked.
    """
    try:
        pidfd = os.pidfd_open(pid)
        names = os.listdir(f"/proc/{pid}/fd")
    except (ProcessLookupError, FileNotFoundError):
        return False
    try:
        for name in names:
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except FileNotFoundError:
                continue
            copy = _libc.syscall(_PIDFD_GETFD, pidfd, int(name), 0)
            if copy < 0:
                if ctypes.get_errno() in (errno.ENOSYS, errno.EPERM):  # a kernel before 5.6, or a sandbox
                    pytest.skip("this test cannot copy a descriptor out of the server's process (pidfd_getfd)")
                continue
            with socket.socket(fileno=copy) as sock:
                if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.getsockname()[1] != port:
                    continue
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) or sock.getsockopt(
                    socket.SOL_SOCKET, socket.SO_REUSEPORT
                ):
                    return True
        return False
    finally:
        os.close(pidfd)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Server:
    """`serve --http --port PORT --workers N`, started without waiting for it to serve."""

    def __init__(self, folder: Path, port: int, workers: str, log: Path) -> None:
        self.port = port
        self.log = log
        with log.open("w") as stderr:
            argv = ["serve", str(folder), "--http", "--port", str(port), "--workers", workers]
            self.process = subprocess.Popen(
                [sys.executable, "-m", "mcp_notebook", *argv],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )

    def wait_serving(self, timeout: float) -> None:
        """Until the `MCP_NOTEBOOK_URL=` line (every worker serves), within `timeout`."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            line = self.process.stdout.readline() if ready else None
            if line is None or line == "":
                raise AssertionError(f"the server did not serve ({self.process.poll()}): {self.log.read_text()}")
            if line.startswith(URL_PREFIX):
                return

    def workers(self) -> list[psutil.Process]:
        """The worker processes (uvicorn spawns them; the parent's other child is multiprocessing's tracker)."""
        found = []
        for child in psutil.Process(self.process.pid).children():
            try:
                if "spawn_main" in " ".join(child.cmdline()):
                    found.append(child)
            except psutil.Error:  # one that died and is not reaped yet
                continue
        return found

    def listening_workers(self) -> set[int]:
        listening = set()
        for worker in self.workers():
            try:
                connections = worker.net_connections(kind="tcp")
            except psutil.NoSuchProcess:
                continue
            if any(c.status == psutil.CONN_LISTEN and c.laddr.port == self.port for c in connections):
                listening.add(worker.pid)
        return listening

    def stop(self) -> int:
        workers = self.workers()
        code = stop_process(self.process)
        for worker in psutil.wait_procs(workers, timeout=DEADLINE)[1]:
            worker.kill()
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough notebooks that each worker takes a while to index them."""
    path = tmp_path_factory.mktemp("port") / "prompts"
    for index in range(400):
        write_notebook(path / f"n{index}.ipynb", [(f"Prompt {index} about {{{{topic}}}}.", {"prompt": f"p{index}"})])
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_no_other_user_can_take_the_port_while_the_server_starts_or_its_workers_restart(
    folder: Path, tmp_path: Path, workers: str
) -> None:
    if workers == "2" and not port_sharing():
        pytest.skip("the workers share one listening socket here")
    server = _Server(folder, _free_port(), workers, tmp_path / "stderr")
    try:
        # The other user begins as soon as the port is held, long before any worker listens.
        wait_until(lambda: _holds_port(server.process.pid, server.port), "the server to hold its port")
        with _taking(server.port) as taker:
            server.wait_serving(timeout=120)
            at_start = taker.report()
            assert at_start["taken"] == [], at_start
            if workers == "1":
                return  # one process listens from the first moment: there is no restart
            # Nothing listened while the workers indexed: the tries then are the ones that count.
            assert at_start["idle"] > 0, at_start
            before = {worker.pid for worker in server.workers()}
            for worker in server.workers():
                worker.kill()
            wait_until(
                lambda: len(listening := server.listening_workers()) == 2 and not listening & before,
                "both workers to be replaced and listening",
                timeout=120,
            )
            restarted = taker.report()
            assert restarted["taken"] == [], restarted
            assert restarted["idle"] > at_start["idle"], restarted
    finally:
        assert server.stop() == 0
