"""The shipped deployment, for real: examples/deploy/nginx.conf in front of three replicas, on loopback.

nginx (Debian's, from `.ci/deploy-setup.sh`) runs as a normal process on a copy
of the shipped nginx.conf in which only the addresses and ports are replaced;
the three replicas run the command of the shipped compose.yaml, with the
folder, the address and the port replaced (and a name each, to tell them
apart). Through nginx:

* a real client's handshake session sticks to the replica that opened it
  (every request, and its GET stream, reaches that replica: any other one
  would answer 404 for a session it does not have);
* stateless (2026-07-28) requests are spread over every replica;
* a save is announced by every replica, to the sessions each one holds.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest
import yaml
from client_harness import ChangeWatcher, stop_process
from e2e_processes import ACCEPT, DEADLINE, MODERN, add_prompt, modern_meta, write_corpus
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from served_http import ServedHttp, wait_until

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "examples" / "deploy"
MARKER = ROOT / "test-artifacts" / "deploy-setup.txt"
TOKEN = "a-test-token-for-the-deploy-example"
REPLICAS = 3


def _nginx() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        reason = MARKER.read_text().strip() if MARKER.exists() else "nginx is not installed"
        pytest.skip(f"{reason} (bash .ci/deploy-setup.sh installs it)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _replica_command(folder: Path, port: int, name: str) -> list[str]:
    """The shipped compose.yaml's command for a replica, serving `folder` on 127.0.0.1:`port`."""
    shipped = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["x-replica"]["command"]
    assert shipped[:2] == ["mcp-notebook", "serve"]
    replaced = {"/prompts": str(folder), "0.0.0.0": "127.0.0.1", "8765": str(port), "localhost": "127.0.0.1"}
    return [sys.executable, "-m", "mcp_notebook", *(replaced.get(a, a) for a in shipped[1:]), "--name", name]


def _nginx_conf(ports: list[int], listen: int) -> str:
    """The shipped nginx.conf with the replicas' and its own addresses replaced, and nothing else."""
    text = (DEPLOY / "nginx.conf").read_text()
    for index, port in enumerate(ports, start=1):
        shipped = f"server mcp-notebook-{index}:8765;"
        assert shipped in text
        text = text.replace(shipped, f"server 127.0.0.1:{port};")
    assert "listen 8765;" in text
    return text.replace("listen 8765;", f"listen 127.0.0.1:{listen};")


@dataclass
class Deployment:
    url: str  # through nginx
    folder: Path
    names: tuple[str, ...]  # of the replicas, as each one's serverInfo says
    replica_urls: tuple[str, ...]  # each replica's own, past nginx


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    nginx = _nginx()
    scratch = tmp_path_factory.mktemp("deploy")
    folder = scratch / "prompts"
    write_corpus(folder)
    names = tuple(f"replica-{index}" for index in range(1, REPLICAS + 1))
    with ExitStack() as stack:
        replicas = [
            stack.enter_context(
                ServedHttp([], command=_replica_command(folder, _free_port(), name), env={"MCP_NOTEBOOK_TOKEN": TOKEN})
            )
            for name in names
        ]
        listen = _free_port()
        prefix = scratch / "nginx"
        prefix.mkdir()
        conf = prefix / "nginx.conf"
        conf.write_text(_nginx_conf([replica.port for replica in replicas], listen))
        directives = f"daemon off; master_process on; pid {prefix}/nginx.pid; error_log {prefix}/error.log;"
        process = subprocess.Popen(
            [nginx, "-c", str(conf), "-p", str(prefix), "-g", directives],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        stack.callback(stop_process, process, timeout=DEADLINE)
        wait_until(lambda: _accepts(listen) or process.poll() is not None, "nginx listens")
        log = prefix / "error.log"
        assert process.poll() is None, log.read_text() if log.exists() else "nginx exited"
        urls = tuple(replica.url for replica in replicas)
        yield Deployment(f"http://127.0.0.1:{listen}/mcp", folder, names, urls)


def _authorized() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=DEADLINE)


async def _stateless_server_name(url: str) -> str:
    """Which replica answers a 2026-07-28 `server/discover` sent over a new connection (no session)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "server/discover",
        "Connection": "close",
    }
    async with _authorized() as http:
        response = await http.post(url, content=json.dumps(body), headers=headers)
    assert response.status_code == 200, response.text
    name: str = response.json()["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    return name


async def test_stateless_requests_are_served_by_every_replica(deployment: Deployment) -> None:
    answered = [await _stateless_server_name(deployment.url) for _ in range(4 * REPLICAS)]
    assert set(answered) == set(deployment.names), answered


async def test_a_real_clients_handshake_session_sticks_to_the_replica_that_opened_it(deployment: Deployment) -> None:
    async with AsyncExitStack() as stack:
        opened: list[tuple[str, Client, ChangeWatcher]] = []
        for client_address in range(2, 2 + 4 * REPLICAS):  # clients on 127.0.0.2, .3, …: sessions on every replica
            watcher = ChangeWatcher()
            source = httpx2.AsyncHTTPTransport(local_address=f"127.0.0.{client_address}")
            http = await stack.enter_async_context(
                httpx2.AsyncClient(transport=source, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=DEADLINE)
            )
            transport = streamable_http_client(deployment.url, http_client=http)
            client = await stack.enter_async_context(Client(transport, mode="legacy", message_handler=watcher))
            assert client.server_info is not None
            opened.append((client.server_info.name, client, watcher))
        assert len({name for name, _, _ in opened}) > 1  # spread, so sticking is not a matter of there being one
        for _, client, _ in opened:
            for _ in range(5):  # each request carries the session id: any other replica would answer 404
                listed = await client.list_prompts(cache_mode="bypass")
                assert "greet" in {prompt.name for prompt in listed.prompts}
        add_prompt(deployment.folder, "from_a_session")
        with anyio.fail_after(DEADLINE):  # over each session's GET stream, from the replica holding it
            for _, _, watcher in opened:
                await watcher.changed.wait()
        for _, client, _ in opened:
            listed = await client.list_prompts(cache_mode="bypass")
            assert "from_a_session" in {prompt.name for prompt in listed.prompts}


async def test_a_save_is_announced_by_every_replica(deployment: Deployment) -> None:
    async with AsyncExitStack() as stack:
        streams = []
        for url in deployment.replica_urls:
            http = await stack.enter_async_context(_authorized())
            client = await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))
            streams.append(await stack.enter_async_context(client.listen(prompts_list_changed=True)))
        add_prompt(deployment.folder, "to_every_replica")
        with anyio.fail_after(DEADLINE):
            for stream in streams:
                await stream.__anext__()
    for url in deployment.replica_urls:
        async with _authorized() as http, Client(streamable_http_client(url, http_client=http)) as client:
            assert "to_every_replica" in {p.name for p in (await client.list_prompts(cache_mode="bypass")).prompts}
