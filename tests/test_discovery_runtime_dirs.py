"""Kernels in a runtime directory of their own are found by clients that do not share the kernel's environment.

A real kernel runs with `JUPYTER_RUNTIME_DIR` set to a folder no client would
look in; `mcp-notebook connect --latest`, the editor bridge's kernel watcher
and the connect line `%mcp serve` prints all run without that variable.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import RealKernel
from mcp import Client, StdioServerParameters

from mcp_notebook.catalog.kernels import KernelWatcher
from mcp_notebook.config import ServerConfig
from mcp_notebook.discovery import (
    default_runtime_dir,
    list_kernel_connections,
    register_connection_file,
    remove_connection_file,
    state_dir,
    write_connection_file,
)

DEADLINE = 60.0
MCP_NOTEBOOK = str(Path(sys.executable).with_name("mcp-notebook"))


def test_a_connection_file_outside_the_default_directory_is_found_through_its_pointer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    custom = tmp_path / "custom-runtime"
    path = write_connection_file(url="http://127.0.0.1:1/mcp", token="t", kernel_id="k1", directory=custom)
    pointer = register_connection_file(path)
    assert pointer is not None and pointer.parent == state_dir() / "kernels"
    assert [c.kernel_id for c in list_kernel_connections()] == ["k1"]
    assert list_kernel_connections(tmp_path / "elsewhere") == []  # a named directory is only that directory
    remove_connection_file(path)
    assert not pointer.exists()
    assert list_kernel_connections() == []


def test_a_file_in_the_default_directory_needs_no_pointer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    path = write_connection_file(url="http://127.0.0.1:1/mcp", token="t", kernel_id="k2")
    assert path.parent == default_runtime_dir()
    assert register_connection_file(path) is None
    assert [c.kernel_id for c in list_kernel_connections()] == ["k2"]


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        json.dumps({"connection_file": "relative/mcp-notebook-kernel-x.json"}),
        json.dumps({"connection_file": "/etc/passwd"}),
        json.dumps({"connection_file": 7}),
        json.dumps(["a list"]),
    ],
)
def test_a_pointer_that_names_anything_but_its_own_connection_file_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    folder = state_dir() / "kernels"
    folder.mkdir(parents=True)
    (folder / "mcp-notebook-kernel-x.json").write_text(content, encoding="utf-8")
    assert list_kernel_connections(prune=True) == []


def test_a_pointer_to_a_file_that_is_gone_is_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    path = write_connection_file(url="http://127.0.0.1:1/mcp", token="t", kernel_id="k3", directory=tmp_path / "rt")
    pointer = register_connection_file(path)
    path.unlink()  # the kernel's folder was wiped without it stopping
    assert list_kernel_connections(prune=True) == []
    assert pointer is not None and not pointer.exists()


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    base = tmp_path_factory.mktemp("custom-runtime")
    custom = base / "somewhere" / "runtime"
    with RealKernel(base, env={"JUPYTER_RUNTIME_DIR": str(custom)}) as kernel:
        kernel.runtime_dir = custom
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("%%prompt kr_hello\nHello from a kernel in its own runtime directory.")
        yield kernel


def _client_env(kernel: RealKernel) -> dict[str, str]:
    """A shell of the same user (same data and state directories) that never heard of the kernel's runtime dir."""
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_RUNTIME_DIR"}
    env["JUPYTER_DATA_DIR"] = str(kernel.base / "data")
    env["MCP_NOTEBOOK_STATE_DIR"] = str(kernel.base / "state")
    return env


@pytest.mark.slow
async def test_connect_latest_finds_a_kernel_in_a_custom_runtime_directory(kernel: RealKernel) -> None:
    kernel.execute("%mcp serve")
    try:
        connection = kernel.connection()
        env = _client_env(kernel)
        shown = subprocess.run(  # noqa: ASYNC221 (a short command; nothing else runs on this loop meanwhile)
            [MCP_NOTEBOOK, "connect", "--latest", "--print-token"],
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
            stdin=subprocess.DEVNULL,
        )
        assert (shown.returncode, shown.stdout) == (0, f"{connection.token}\n"), shown.stderr
        params = StdioServerParameters(command=MCP_NOTEBOOK, args=["connect", "--latest"], env=env)
        async with Client(params) as client:
            names = [p.name for p in (await client.list_prompts()).prompts]
        assert names[0] == "kr_hello"
    finally:
        kernel.execute("%mcp stop")
    assert not any((kernel.base / "state" / "kernels").iterdir())  # stopping removed the pointer


@pytest.mark.slow
def test_the_printed_connect_line_names_the_runtime_directory_and_works_from_a_bare_shell(kernel: RealKernel) -> None:
    [shown] = kernel.execute("%mcp serve").displays  # the summary; its text form holds every line
    printed = shown["text/plain"]
    try:
        [line] = [ln for ln in printed.splitlines() if ln.startswith("Clients that only speak stdio: ")]
        command = shlex.split(line.removeprefix("Clients that only speak stdio: "))
        assert command[-2:] == ["--runtime-dir", str(kernel.runtime_dir)]
        env = {k: v for k, v in _client_env(kernel).items() if k not in ("JUPYTER_DATA_DIR", "PATH", "VIRTUAL_ENV")}
        env["MCP_NOTEBOOK_STATE_DIR"] = str(kernel.base / "no-pointers-here")
        shown = subprocess.run(
            [*command, "--print-token"],
            capture_output=True,
            text=True,
            env=env,
            timeout=DEADLINE,
            stdin=subprocess.DEVNULL,
        )
        assert (shown.returncode, shown.stdout) == (0, f"{kernel.connection().token}\n"), shown.stderr
    finally:
        kernel.execute("%mcp stop")


@pytest.mark.slow
async def test_the_editor_bridge_finds_a_kernel_in_a_custom_runtime_directory(
    kernel: RealKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel.execute("%mcp serve")
    try:
        for name, value in _client_env(kernel).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
        seen: list[dict[str, ServerConfig]] = []
        watcher = KernelWatcher(lambda servers: seen.append(dict(servers)))
        configs = await watcher.scan()
        connection = kernel.connection()
        assert [c.url for c in configs.values()] == [connection.url]
        assert seen == [configs]
    finally:
        kernel.execute("%mcp stop")
