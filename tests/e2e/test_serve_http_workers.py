"""Scaling out: `serve --http --workers 2`, the ASGI factory under `uvicorn --workers 2`, restarts, draining.

Every request that matters goes over a new connection, so consecutive
requests land on either worker: nothing may depend on which one answers.
The workers share no sessions, so handshake clients are served without one
(docs/deployment.md, "--workers N"): the SDK's clients of both eras and raw
clients of every handshake revision are checked against real workers here.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import psutil
import pytest
from e2e_checks import EXPECTED_NAMES
from e2e_processes import (
    ACCEPT,
    DEADLINE,
    HANDSHAKE_REVISIONS,
    MODERN,
    RawHttpSession,
    add_prompt,
    modern_meta,
    write_corpus,
    write_notebook,
)
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from served_http import ServedHttp, wait_until

from mcp_notebook.transports.http import port_sharing

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("workers") / "prompts"
    write_corpus(path)
    return path


@pytest.fixture(scope="module")
def workers(folder: Path) -> Iterator[ServedHttp]:
    with ServedHttp([folder], "--workers", "2", "--page-size", "1") as server:
        yield server


def _modern(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> tuple[str, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": modern_meta()}}
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        "Connection": "close",  # a new connection for every request
    }
    if method == "prompts/get":
        headers["Mcp-Name"] = str(params and params.get("name"))
    return json.dumps(body), headers


async def _fresh_request(
    url: str, method: str, params: dict[str, Any] | None = None, *, status: int = 200
) -> dict[str, Any]:
    body, headers = _modern(method, params)
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, content=body, headers=headers, timeout=DEADLINE)
    assert response.status_code == status, response.text
    reply: dict[str, Any] = response.json()
    return reply


async def _page_through(url: str, cursor: str | None = None) -> tuple[list[str], list[str]]:
    """Every prompt name from `cursor` on, each page over a new connection; and the cursors seen."""
    names: list[str] = []
    cursors: list[str] = []
    while True:
        reply = await _fresh_request(url, "prompts/list", {"cursor": cursor} if cursor else None)
        assert "result" in reply, reply
        names += [prompt["name"] for prompt in reply["result"]["prompts"]]
        cursor = reply["result"].get("nextCursor")
        if cursor is None:
            return names, cursors
        cursors.append(cursor)


def test_two_workers_are_two_processes_on_one_port(workers: ServedHttp) -> None:
    children = [c for c in psutil.Process(workers.process.pid).children() if "mcp_notebook" in " ".join(c.cmdline())]
    assert len(children) >= 2 or len(psutil.Process(workers.process.pid).children()) >= 2
    assert workers.line_with("by 2 workers")
    # Each worker indexes the folder itself; the first one reports it, once for all.
    assert workers.count_lines_with("5 prompts from 3 notebooks") == 1


async def test_a_listing_pages_over_new_connections_to_either_worker(workers: ServedHttp) -> None:
    names, cursors = await _page_through(workers.url)
    assert names == EXPECTED_NAMES
    assert len(cursors) == 4


async def test_two_hundred_gets_over_new_connections_have_no_errors(workers: ServedHttp) -> None:
    failures: list[str] = []
    limiter = anyio.Semaphore(8)

    async def get(index: int) -> None:
        async with limiter:
            reply = await _fresh_request(
                workers.url, "prompts/get", {"name": "greet", "arguments": {"who": f"n{index}"}}
            )
            text = reply.get("result", {}).get("messages", [{}])[0].get("content", {}).get("text", "")
            if f"Greet n{index}" not in text:
                failures.append(json.dumps(reply)[:200])

    async with anyio.create_task_group() as group:
        for index in range(200):
            group.start_soon(get, index)
    assert failures == []


async def test_every_listen_stream_on_any_worker_hears_of_a_save(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--workers", "2") as server:
        async with AsyncExitStack() as stack:
            subscriptions = []
            for _ in range(6):  # each client its own connection, so the streams spread over the workers
                client = await stack.enter_async_context(Client(server.url, mode="auto"))
                subscriptions.append(await stack.enter_async_context(client.listen(prompts_list_changed=True)))
            add_prompt(folder, "fresh")
            with anyio.fail_after(DEADLINE):
                for subscription in subscriptions:
                    await subscription.__anext__()
        names, _ = await _page_through(server.url)
        assert "fresh" in names


def _new_connection_each_time() -> httpx2.AsyncClient:
    """An HTTP client that opens a new connection for every request, so the kernel deals each to any worker."""
    return httpx2.AsyncClient(headers={"Connection": "close"}, timeout=DEADLINE)


async def _listed(client: Client) -> list[str]:
    """Every prompt name, page by page (`--page-size 1`: each page a request of its own)."""
    names: list[str] = []
    cursor: str | None = None
    while True:
        page = await client.list_prompts(cursor=cursor, cache_mode="refresh")
        names += [prompt.name for prompt in page.prompts]
        if (cursor := page.next_cursor) is None:
            return names


# The SDK's client speaks the handshake at its newest revision ("legacy") and 2026-07-28 (pinned, or found by
# "auto"); every request, the handshake's included, goes over a new connection to either worker.
SDK_MODES = {"legacy": "2025-11-25", MODERN: MODERN, "auto": MODERN}


@pytest.mark.parametrize("mode", sorted(SDK_MODES))
async def test_the_sdk_client_of_each_era_works_with_two_workers(workers: ServedHttp, mode: str) -> None:
    async with (
        _new_connection_each_time() as http,
        Client(streamable_http_client(workers.url, http_client=http), mode=mode) as client,
    ):
        assert client.protocol_version == SDK_MODES[mode]
        for round_ in range(4):
            assert await _listed(client) == EXPECTED_NAMES
            got = await client.get_prompt("greet", {"who": f"n{round_}"})
            content = got.messages[0].content
            assert isinstance(content, types.TextContent) and f"Greet n{round_} warmly." in content.text
            completion = await client.complete(
                types.PromptReference(type="ref/prompt", name="greet"), {"name": "style", "value": "wi"}
            )
            assert completion.completion.values == ["wittily"]


@pytest.mark.parametrize("revision", HANDSHAKE_REVISIONS)
async def test_handshake_clients_of_every_revision_get_no_session_and_either_worker_answers(
    workers: ServedHttp, revision: str
) -> None:
    async with _new_connection_each_time() as http:
        session = RawHttpSession(http, workers.url, revision)
        opened = await session.open()
        assert opened is not None and opened["result"]["protocolVersion"] == revision
        assert session.session_id is None  # nothing for a later request to find on one worker only
        for index in range(10):
            reply = await session.request("prompts/get", {"name": "greet", "arguments": {"who": f"n{index}"}})
            assert f"Greet n{index} warmly." in reply["result"]["messages"][0]["content"]["text"], reply


async def test_an_ask_argument_is_asked_for_across_workers_at_2026_07_28(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    arguments = [{"name": "code", "ask": "Paste the code to review"}]
    write_notebook(folder / "review.ipynb", [("Review:\n{{code}}", {"prompt": "review", "arguments": arguments})])
    asked: list[str] = []

    async def answer(_: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"code": "x = 1"})

    with ServedHttp([folder], "--workers", "2") as server:
        for _ in range(4):  # the question and the retry that answers it each reach either worker
            async with (
                _new_connection_each_time() as http,
                Client(
                    streamable_http_client(server.url, http_client=http),
                    mode=MODERN,
                    elicitation_callback=answer,
                ) as client,
            ):
                got = await client.get_prompt("review")
            content = got.messages[0].content
            assert isinstance(content, types.TextContent) and content.text == "Review:\nx = 1"
    assert asked == ["Paste the code to review"] * 4


async def test_a_cursor_from_one_run_is_accepted_by_a_restarted_run(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write_corpus(folder)
    with ServedHttp([folder], "--workers", "2", "--page-size", "2") as first:
        reply = await _fresh_request(first.url, "prompts/list")
        cursor = reply["result"]["nextCursor"]
        assert first.terminate() == 0
    with ServedHttp([folder], "--page-size", "2") as second:
        names, _ = await _page_through(second.url, cursor)
        assert names == EXPECTED_NAMES[2:]
        forged = await _fresh_request(second.url, "prompts/list", {"cursor": cursor[:-2] + "AA"}, status=400)
        assert forged["error"]["code"] == -32602
    add_prompt(folder, "later")
    with ServedHttp([folder], "--page-size", "2") as third:
        stale = await _fresh_request(third.url, "prompts/list", {"cursor": cursor}, status=400)
        assert stale["error"]["code"] == -32602


def test_a_busy_port_is_one_line_and_nothing_is_indexed(workers: ServedHttp, folder: Path) -> None:
    for extra in ([], ["--workers", "2"]):
        run = subprocess.run(
            [sys.executable, "-m", "mcp_notebook", "serve", str(folder), "--http", "--port", str(workers.port), *extra],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert run.returncode == 2
        assert run.stderr.strip().splitlines() == [
            f"mcp-notebook: cannot listen on 127.0.0.1:{workers.port}: Address already in use"
        ]


def _workers(server: ServedHttp) -> list[psutil.Process]:
    """The worker processes (uvicorn spawns them; the parent's other child is multiprocessing's tracker)."""
    return [
        child for child in psutil.Process(server.process.pid).children() if "spawn_main" in " ".join(child.cmdline())
    ]


def _worker_of_each_connection(server: ServedHttp) -> list[int]:
    """The worker process (pid) holding each established connection to the server's port."""
    owners: list[int] = []
    for child in _workers(server):
        for connection in child.net_connections(kind="tcp"):
            if connection.status == psutil.CONN_ESTABLISHED and connection.laddr.port == server.port:
                owners.append(child.pid)
    return owners


def _plain_get(port: int) -> bytes:
    body, headers = _modern("prompts/list")
    headers["Connection"] = "keep-alive"
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n{body}".encode()


@pytest.mark.skipif(not port_sharing(), reason="only Linux deals connections out among the workers' sockets")
def test_connections_opened_at_once_are_dealt_out_to_both_workers(workers: ServedHttp) -> None:
    # With one socket shared by the workers, whichever woke first could take most of a burst while it
    # was busy (32 split 30 / 2 under the benchmark's load): kept connections then wait on one worker.
    clients = [socket.socket() for _ in range(32)]
    try:
        for client in clients:  # all at once, as a burst of clients does: every handshake before any accept
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", workers.port))
        for client in clients:
            select.select([], [client], [], DEADLINE)
            client.setblocking(True)
            client.settimeout(DEADLINE)
        for client in clients:
            client.sendall(_plain_get(workers.port))
        for client in clients:
            assert client.recv(65536).startswith(b"HTTP/1.1 200")  # each connection is accepted and served
        owners = _worker_of_each_connection(workers)
    finally:
        for client in clients:
            client.close()
    assert len(owners) == 32 and len(set(owners)) == 2
    # Dealt out by a hash of each connection's addresses: fewer than 6 of 32 on one worker is a chance
    # of about 1 in 25,000.
    assert min(owners.count(pid) for pid in set(owners)) >= 6, owners


def test_new_connections_never_wait_on_a_worker_that_died(folder: Path) -> None:
    with ServedHttp([folder], "--workers", "2") as server:
        victim = _workers(server)[0]
        victim.kill()
        victim.wait(timeout=DEADLINE)
        # Every new connection is answered at once by the live worker, then by both once the new one has
        # indexed: none is dealt to the dead worker's socket, which went with it.
        for _ in range(40):
            with socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE) as client:
                client.settimeout(5)
                client.sendall(_plain_get(server.port))
                assert client.recv(65536).startswith(b"HTTP/1.1 200")
        wait_until(lambda: len(_workers(server)) == 2, "the worker to be replaced")
        assert server.terminate() == 0


def _refuses_new_connections(port: int) -> bool:
    """Whether the server no longer takes connections: refused, or reset while it closes its listening socket."""
    try:
        probe = socket.create_connection(("127.0.0.1", port), timeout=1)
    except (ConnectionRefusedError, ConnectionResetError, ConnectionAbortedError):
        return True
    except TimeoutError:
        return False  # a loaded machine: ask again
    try:
        probe.settimeout(1)
        # Accepted by the kernel before the listening socket closed: the server ends it unanswered.
        probe.sendall(b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return probe.recv(65536) == b""
    except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError):
        return True
    except TimeoutError:
        return False
    finally:
        probe.close()


def test_sigterm_drains_a_request_in_flight_and_exits_0(folder: Path) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "prompts/list", "params": {"_meta": modern_meta()}})
    with ServedHttp([folder], "--drain-timeout", "15") as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE)
        try:
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
                f"Accept: {ACCEPT}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Method: prompts/list\r\n"
                f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
            )
            sock.sendall(head.encode())
            # "100 Continue" comes once the application asks for the body: the request is in flight.
            assert sock.recv(65536).startswith(b"HTTP/1.1 100")
            server.process.send_signal(15)
            wait_until(lambda: _refuses_new_connections(server.port), "the server to stop accepting")
            sock.sendall(body.encode())
            reply = sock.recv(65536)
        finally:
            sock.close()
        assert reply.startswith(b"HTTP/1.1 200"), reply
        assert server.process.wait(timeout=DEADLINE) == 0


def test_sigterm_stops_every_worker_and_exits_0(folder: Path) -> None:
    with ServedHttp([folder], "--workers", "2") as server:
        children = psutil.Process(server.process.pid).children(recursive=True)
        assert server.terminate() == 0
        _, alive = psutil.wait_procs(children, timeout=DEADLINE)
        assert alive == []


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigterm_closes_the_notebook_index_of_every_worker(folder: Path, tmp_path: Path, workers: str) -> None:
    cache = tmp_path / "cache"
    with ServedHttp([folder], "--workers", workers, "--cache-dir", str(cache)) as server:
        assert (cache / "notebook-index.sqlite3").exists()
        assert server.terminate() == 0
    # The last connection to close folds the write-ahead log into the file and removes it.
    assert not (cache / "notebook-index.sqlite3-wal").exists()


def _free_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


_SERVERS = {
    "uvicorn": ["-m", "uvicorn", "--factory", "mcp_notebook.asgi:create_app", "--workers", "2", "--fd", "{fd}"],
    "gunicorn": ["-m", "gunicorn", "-w", "2", "-k", "uvicorn.workers.UvicornWorker", "-b", "fd://{fd}"],
    "hypercorn": ["-m", "hypercorn", "--workers", "2", "-b", "fd://{fd}"],
}


def _start_asgi_server(name: str, folder: Path, **variables: str) -> tuple[subprocess.Popen[bytes], int]:
    """The factory under `name` with 2 workers, on a socket bound here (no port race)."""
    sock = _free_socket()
    port = int(sock.getsockname()[1])
    env = {**os.environ, "MCP_NOTEBOOK_PATHS": str(folder), "MCP_NOTEBOOK_PAGE_SIZE": "1", **variables}
    argv = [part.format(fd=sock.fileno()) for part in _SERVERS[name]]
    if name != "uvicorn":
        argv.append("mcp_notebook.asgi:create_app()")
    process = subprocess.Popen(
        [sys.executable, *argv],
        env=env,
        pass_fds=[sock.fileno()],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sock.close()
    return process, port


@pytest.mark.parametrize("server", ["uvicorn", "gunicorn", "hypercorn"])
async def test_the_asgi_factory_runs_under_a_process_manager_with_two_workers(folder: Path, server: str) -> None:
    pytest.importorskip(server)
    # The processes share no sessions, so handshake clients are served without any (docs/deployment.md).
    process, port = _start_asgi_server(server, folder, MCP_NOTEBOOK_STATELESS="1")
    url = f"http://127.0.0.1:{port}/mcp"
    try:

        def ready() -> bool:
            try:
                return httpx2.get(f"http://127.0.0.1:{port}/ready", timeout=2).status_code == 200
            except httpx2.HTTPError:
                return False

        wait_until(ready, "the workers to be ready")
        names, _ = await _page_through(url)
        assert names == EXPECTED_NAMES
        for _ in range(4):
            async with Client(url, mode="legacy") as client:
                for _ in range(3):
                    assert [p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts][:1] == ["greet"]
        foreign = httpx2.get(f"http://127.0.0.1:{port}/ready", headers={"Host": "evil.example"}, timeout=DEADLINE)
        assert foreign.status_code == 421
    finally:
        process.terminate()
        assert process.wait(timeout=DEADLINE) == 0
