"""A notebook's kernel follows JupyterLab's rename-on-first-save, driven through a real Jupyter server.

JupyterLab makes a new notebook as "Untitled.ipynb" (contents API), starts
its kernel in a session (sessions API), and on the first save renames the
file (PATCH /api/contents) and then the session (PATCH /api/sessions). The
kernel was started with `JPY_SESSION_NAME=…/Untitled.ipynb`, which never
changes: the kernel's server must ask the sessions API, and follow.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_harness import JupyterServer
from kernel_harness import KERNEL_DEADLINE
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_notebook.catalog.kernels import to_kernel_server_configs
from mcp_notebook.discovery import KernelConnection, list_kernel_connections

pytestmark = pytest.mark.slow

FOLLOW_DEADLINE = 60.0  # seconds for a rename to reach the kernel's clients (it takes about 2 s)


def _notebook(*prompts: str) -> dict[str, Any]:
    cells = [
        {"cell_type": "markdown", "metadata": {"mcp": {"prompt": name}}, "source": f"Prompt {name} of the notebook."}
        for name in prompts
    ]
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


class Api:
    """Jupyter's REST API, as JupyterLab calls it."""

    def __init__(self, server: JupyterServer) -> None:
        self.http = httpx2.Client(base_url=server.base, headers=server.auth(), timeout=KERNEL_DEADLINE)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        answer = self.http.request(method, path, json=body)
        assert answer.status_code < 300, f"{method} {path}: {answer.status_code} {answer.text}"
        return answer.json() if answer.content else None

    def close(self) -> None:
        self.http.close()


def _execute(client: BlockingKernelClient, code: str) -> list[dict[str, Any]]:
    """Run a cell as the notebook's front end does; its iopub messages up to idle (fails when it raised)."""
    msg_id = client.execute(code)
    messages: list[dict[str, Any]] = []
    while True:
        message = client.get_iopub_msg(timeout=KERNEL_DEADLINE)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        assert message["msg_type"] != "error", message["content"]
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return messages


@pytest.fixture
def jupyter(tmp_path: Path) -> Iterator[tuple[JupyterServer, Path, Path]]:
    root = tmp_path / "notebooks"
    root.mkdir()
    with JupyterServer(root, tmp_path) as server:
        yield server, root, tmp_path / "runtime"


def _connection(runtime: Path) -> KernelConnection:
    [connection] = list_kernel_connections(runtime)
    return connection


class Changes:
    """Counts a client's `notifications/prompts/list_changed`; `after(n)` waits for one past the n-th."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/prompts/list_changed":
            self.count += 1
            self._changed.set()
            self._changed = anyio.Event()

    async def after(self, seen: int) -> None:
        while self.count <= seen:
            await self._changed.wait()


@asynccontextmanager
async def connected(connection: KernelConnection, changes: Changes | None = None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {connection.token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(
            streamable_http_client(connection.url, http_client=http), mode="legacy", message_handler=changes
        ) as client,
    ):
        yield client


async def _names(client: Client) -> set[str]:
    return {prompt.name for prompt in (await client.list_prompts(cache_mode="refresh")).prompts}


async def test_the_kernel_follows_its_notebook_through_jupyterlabs_rename_on_first_save(
    jupyter: tuple[JupyterServer, Path, Path],
) -> None:
    server, root, runtime = jupyter
    api = Api(server)
    try:
        await _rename_on_first_save(api, root, runtime)
    finally:
        api.close()


async def _rename_on_first_save(api: Api, root: Path, runtime: Path) -> None:
    created = api.call("POST", "api/contents", {"type": "notebook"})
    assert created["path"] == "Untitled.ipynb"
    content = {"type": "notebook", "format": "json", "content": _notebook("kr_own")}
    api.call("PUT", "api/contents/Untitled.ipynb", content)
    session = api.call(
        "POST",
        "api/sessions",
        {"path": "Untitled.ipynb", "name": "Untitled.ipynb", "type": "notebook", "kernel": {"name": "python3"}},
    )
    client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{session['kernel']['id']}.json"))
    client.load_connection_file()
    # No heartbeat: a kernel still starting on a busy machine does not beat yet, and would count as dead.
    client.start_channels(hb=False)
    try:
        client.wait_for_ready(timeout=KERNEL_DEADLINE)
        _execute(client, "%load_ext mcp_notebook")
        _execute(client, "%mcp serve")
        first = _connection(runtime)
        assert first.kernel_id == session["kernel"]["id"]
        assert first.notebook_path == str(root / "Untitled.ipynb")
        changes = Changes()
        async with connected(first, changes) as watching:
            assert "kr_own" in await _names(watching)
            # JupyterLab's first save: the rename dialog, then the file and the session are renamed, then saved.
            api.call("PATCH", "api/contents/Untitled.ipynb", {"path": "analysis.ipynb"})
            api.call("PATCH", f"api/sessions/{session['id']}", {"path": "analysis.ipynb", "name": "analysis.ipynb"})
            saved = {"type": "notebook", "format": "json", "content": _notebook("kr_own", "kr_saved")}
            api.call("PUT", "api/contents/analysis.ipynb", saved)

            async def followed() -> bool:
                if _connection(runtime).notebook_path != str(root / "analysis.ipynb"):
                    return False
                return {"kr_own", "kr_saved"} <= await _names(watching)

            with anyio.fail_after(FOLLOW_DEADLINE):
                while True:
                    seen = changes.count
                    if await followed():
                        break
                    await changes.after(seen)
        renamed = _connection(runtime)
        assert (renamed.url, renamed.token, renamed.created) == (first.url, first.token, first.created)
        assert list(to_kernel_server_configs([renamed])) == ["analysis"]  # how editors name the kernel

        # A serve after the rename finds the notebook by its new name (JPY_SESSION_NAME still says Untitled).
        _execute(client, "%mcp stop")
        shown = _execute(client, "%mcp serve")
        [report] = [m["content"]["data"] for m in shown if m["msg_type"] == "display_data"]
        assert "the notebook analysis.ipynb." in report["text/plain"]  # by name: the report is saved in the cell
        assert str(root / "analysis.ipynb") not in report["text/plain"]
        again = _connection(runtime)
        assert again.notebook_path == str(root / "analysis.ipynb")
        async with connected(again) as later:
            assert {"kr_own", "kr_saved"} <= await _names(later)
        _execute(client, "%mcp stop")
    finally:
        client.stop_channels()
        api.call("DELETE", f"api/sessions/{session['id']}")
