"""Kernels found through connection files become HTTP servers with a bearer token; dead ones drop out."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from mcp_notebook.catalog.kernels import KernelWatcher, to_kernel_server_configs
from mcp_notebook.config import ServerConfig
from mcp_notebook.discovery import KernelConnection, remove_connection_file, write_connection_file


def _conn(kernel_id: str, notebook: str | None = None, token: str | None = "tok") -> KernelConnection:
    return KernelConnection("http://127.0.0.1:9/mcp", token, kernel_id, notebook, 1, 0.0, f"/rt/{kernel_id}.json")


def test_kernel_is_named_by_its_notebook_stem_with_a_bearer_token() -> None:
    ((name, config),) = to_kernel_server_configs([_conn("0123456789", "/w/My Analysis.ipynb")]).items()
    assert name == "My_Analysis"
    assert config == ServerConfig(
        name="My_Analysis",
        url="http://127.0.0.1:9/mcp",
        headers={"Authorization": "Bearer tok"},
        source="/rt/0123456789.json",
    )


def test_kernel_without_notebook_is_named_by_its_short_id() -> None:
    configs = to_kernel_server_configs([_conn("0123456789abcdef", token=None)])
    assert list(configs) == ["kernel-01234567"]
    assert configs["kernel-01234567"].headers is None


def test_two_kernels_of_one_notebook_are_told_apart_by_id() -> None:
    configs = to_kernel_server_configs([_conn("aaaaaaaa11", "/w/a.ipynb"), _conn("bbbbbbbb22", "/x/a.ipynb")])
    assert sorted(configs) == ["kernel-aaaaaaaa", "kernel-bbbbbbbb"]


def test_a_stem_taken_by_a_configured_server_falls_back_to_the_id() -> None:
    configs = to_kernel_server_configs([_conn("cafe0000", "/w/notebooks.ipynb")], taken={"notebooks"})
    assert list(configs) == ["kernel-cafe0000"]


async def test_watcher_reports_new_and_gone_kernels(tmp_path: Path) -> None:
    reports: list[Mapping[str, ServerConfig]] = []
    watcher = KernelWatcher(reports.append, directory=tmp_path)
    assert await watcher.scan() == {}
    path = write_connection_file(
        url="http://127.0.0.1:5/mcp", token="t", kernel_id="k1", notebook_path="/w/nb.ipynb", directory=tmp_path
    )
    assert list(await watcher.scan()) == ["nb"]
    await watcher.scan()  # nothing changed: nothing reported
    remove_connection_file(path)
    assert await watcher.scan() == {}
    assert [list(r) for r in reports] == [[], ["nb"], []]


async def test_watcher_drops_a_kernel_whose_process_died(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys; sys.stdin.read()", stdin=asyncio.subprocess.PIPE
    )
    write_connection_file(url="http://127.0.0.1:5/mcp", token=None, kernel_id="k1", pid=proc.pid, directory=tmp_path)
    watcher = KernelWatcher(lambda configs: None, directory=tmp_path)
    assert list(await watcher.scan()) == ["kernel-k1"]
    await asyncio.wait_for(proc.communicate(b""), 30)
    assert await watcher.scan() == {}


async def test_watcher_runs_in_the_background(tmp_path: Path) -> None:
    seen = asyncio.Event()

    def on_servers(configs: Mapping[str, ServerConfig]) -> None:
        if "nb" in configs:
            seen.set()

    watcher = KernelWatcher(on_servers, directory=tmp_path, interval=0.01)
    watcher.start()
    try:
        write_connection_file(
            url="http://127.0.0.1:5/mcp", token=None, kernel_id="k1", notebook_path="/w/nb.ipynb", directory=tmp_path
        )
        await asyncio.wait_for(seen.wait(), 5)
    finally:
        await watcher.aclose()


@pytest.mark.parametrize(
    ("notebook", "expected"), [("/work/renamed_kernel.ipynb", "renamed_kernel"), (None, "kernel-d991d141")]
)
def test_a_kernel_has_the_name_the_configurations_of_serve_give_it(notebook: str | None, expected: str) -> None:
    """Claude Code and VS Code (the configurations `%mcp serve` prints) and the editors name a kernel alike."""
    from mcp_notebook.ipython.client_config import client_config

    kernel_id = "d991d141-5b0e-4f5e-9a3c-000000000000"
    printed = client_config(
        url="http://127.0.0.1:9/mcp", token=None, kernel_id=kernel_id, connection_file=None, notebook=notebook
    )
    assert printed.name == expected
    assert list(to_kernel_server_configs([_conn(kernel_id, notebook)])) == [expected]
