"""The relay between workers is no side door: its folder, its sockets, its secret and its bodies.

Real `serve --http --workers 2` processes and real `uvicorn --factory ... --workers 2`; a worker's socket is
spoken to directly, as another local process would.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import psutil
import pytest
from e2e_processes import ACCEPT, DEADLINE, RawHttpSession, initialize_params, write_corpus
from served_http import ServedHttp, Uvicorn, wait_until

pytestmark = pytest.mark.slow

NOBODY = 65534


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("relay") / "prompts"
    write_corpus(path)
    return path


def _private_dir(path: Path) -> Path:
    path.mkdir()
    path.chmod(0o700)
    return path


# --- the folder -----------------------------------------------------------------------------------------------------


def _bad_folders(tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    open_to_all.chmod(0o777)
    yield "mode 0777", open_to_all, "its mode is 0777"
    readable = tmp_path / "readable"
    readable.mkdir()
    readable.chmod(0o750)
    yield "mode 0750", readable, "its mode is 0750"
    target = _private_dir(tmp_path / "target")
    link = tmp_path / "link"
    link.symlink_to(target)
    yield "a symlink", link, "it is a symlink"
    if os.getuid() == 0:  # only root can make a folder that belongs to someone else
        theirs = _private_dir(tmp_path / "theirs")
        os.chown(theirs, NOBODY, NOBODY)
        yield "another user's", theirs, f"it belongs to user id {NOBODY}, not to this user (0)"


@pytest.mark.parametrize("case", ["mode 0777", "mode 0750", "a symlink", "another user's"])
def test_a_worker_folder_that_is_not_private_is_refused_with_one_line(folder: Path, tmp_path: Path, case: str) -> None:
    found = {name: (path, reason) for name, path, reason in _bad_folders(tmp_path)}
    if case not in found:
        pytest.skip("needs root to give a folder to another user")
    path, reason = found[case]
    server = Uvicorn(folder, worker_dir=path)
    try:
        server.process.wait(timeout=DEADLINE * 2)  # it stops: a worker that cannot start is not restarted
        lines = server.stderr_lines()
        ours = [line for line in lines if line.startswith("mcp-notebook:")]
        assert any("failed to start, stopping the parent process" in line for line in lines), lines
    finally:
        server.close()
    expected = (
        f"mcp-notebook: MCP_NOTEBOOK_WORKER_DIR={path} is refused: {reason}; "
        "it must be a folder of this user's with mode 0700"
    )
    assert ours and set(ours) == {expected}, ours
    assert not list(path.glob("*.sock"))


# --- the sockets and the secret -------------------------------------------------------------------------------------


@pytest.fixture
def uvicorn_workers(folder: Path, tmp_path: Path) -> Iterator[tuple[Uvicorn, Path]]:
    meeting = _private_dir(tmp_path / "workers")
    server = Uvicorn(folder, worker_dir=meeting, umask=0)  # even with umask 000
    try:
        server.wait_ready()
        wait_until(lambda: len(list(meeting.glob("*.sock"))) == 2, "both worker sockets")
        yield server, meeting
    finally:
        server.close()


def test_worker_sockets_are_0600_even_with_umask_000(uvicorn_workers: tuple[Uvicorn, Path]) -> None:
    _, meeting = uvicorn_workers
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in meeting.glob("*.sock")}
    assert set(modes.values()) == {0o600}, modes


def _initialize_on_socket(path: Path, headers: dict[str, str]) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-06-18")}
    transport = httpx2.HTTPTransport(uds=str(path))
    with httpx2.Client(transport=transport, timeout=DEADLINE) as client:
        sent = {"Content-Type": "application/json", "Accept": ACCEPT, "Host": "127.0.0.1", **headers}
        return client.post("http://worker/mcp", content=json.dumps(body), headers=sent)


@pytest.mark.parametrize(
    "headers",
    [{}, {"X-Mcp-Notebook-Relay": "guess"}, {"X-Mcp-Notebook-Relay": ""}],
    ids=["no secret", "a guessed secret", "an empty secret"],
)
def test_a_local_process_on_a_worker_socket_gets_nothing_without_the_secret(
    uvicorn_workers: tuple[Uvicorn, Path], headers: dict[str, str]
) -> None:
    _, meeting = uvicorn_workers
    for path in meeting.glob("*.sock"):
        response = _initialize_on_socket(path, headers)
        assert response.status_code == 403, response.text
        assert "mcp-session-id" not in response.headers
        assert response.json()["error"]["message"] == (
            "Refused: this socket serves the other workers of this server only"
        )


async def test_sessions_are_still_relayed_between_uvicorn_workers(uvicorn_workers: tuple[Uvicorn, Path]) -> None:
    server, _ = uvicorn_workers
    async with httpx2.AsyncClient() as http:
        session = RawHttpSession(http, server.url, "2025-06-18")
        await session.open()
    for _ in range(8):  # new connections: either worker answers, relaying to the session's own
        async with httpx2.AsyncClient() as http:
            again = RawHttpSession(http, server.url, "2025-06-18", headers={"Connection": "close"})
            again.session_id = session.session_id
            reply = await again.request("prompts/list")
            assert len(reply["result"]["prompts"]) == 5


def test_the_secret_of_serve_workers_is_in_no_file(folder: Path, tmp_path: Path) -> None:
    with ServedHttp([folder], "--workers", "2", "--no-cache", env={"TMPDIR": str(tmp_path)}) as server:
        workers = psutil.Process(server.process.pid).children(recursive=True)
        meeting = next(tmp_path.glob("mcp-notebook-workers-*"), None)
        assert meeting is not None
        wait_until(lambda: len(list(meeting.glob("*.sock"))) == 2, "both worker sockets")
        # Besides the sockets, only the empty claim of the worker that prints the start summary.
        others = [path for path in meeting.iterdir() if path.suffix != ".sock"]
        assert [path.name for path in others] == ["start-reported"] and others[0].stat().st_size == 0
        assert stat.S_IMODE(meeting.stat().st_mode) == 0o700
        for path in meeting.glob("*.sock"):
            assert _initialize_on_socket(path, {}).status_code == 403
        assert len(workers) >= 2


# --- relayed bodies -------------------------------------------------------------------------------------------------


def _chunked_delete(port: int, session_id: str, megabytes: int) -> bytes:
    """A chunked DELETE naming `session_id` with `megabytes` MiB of body; the answer (or b'' if none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
        head = (
            f"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session_id}\r\n"
            "MCP-Protocol-Version: 2025-06-18\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        sock.sendall(head.encode())
        chunk = b"%x\r\n%s\r\n" % (1024 * 1024, b"x" * (1024 * 1024))
        try:
            for _ in range(megabytes):
                sock.sendall(chunk)
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the end: the answer is waiting
        received = bytearray()
        try:
            while b"\r\n\r\n" not in received and (data := sock.recv(65536)):
                received.extend(data)
        except ConnectionResetError:
            pass
        return bytes(received)


async def test_a_huge_body_naming_a_siblings_session_is_refused_not_buffered(folder: Path) -> None:
    with ServedHttp([folder], "--workers", "2", "--no-cache") as server:
        workers = psutil.Process(server.process.pid).children(recursive=True)
        async with httpx2.AsyncClient() as http:
            session = RawHttpSession(http, server.url, "2025-06-18")
            await session.open()
            assert session.session_id is not None
            before = sum(worker.memory_info().rss for worker in workers)
            started = time.monotonic()
            for _ in range(4):  # new connections, so some land on the worker that relays
                answer = _chunked_delete(server.port, session.session_id, 64)
                assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
            assert time.monotonic() - started < DEADLINE * 2
            grown = sum(worker.memory_info().rss for worker in workers) - before
            assert grown < 48 * 1024 * 1024, f"the workers grew by {grown / 1e6:.0f} MB"
            # The session is untouched: the DELETE never reached it.
            reply = await session.request("prompts/list")
            assert len(reply["result"]["prompts"]) == 5
