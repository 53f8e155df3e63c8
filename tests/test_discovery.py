"""Kernel connection files: written atomically and privately, listed newest first, stale ones skipped."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_notebook.discovery import (
    KernelConnection,
    connection_file_name,
    is_process_alive,
    latest_kernel_connection,
    list_kernel_connections,
    read_connection_file,
    remove_connection_file,
    runtime_dir,
    write_connection_file,
)


@pytest.fixture
def dead_pid() -> int:
    """The id of a process that has finished."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def test_connection_file_name_embeds_the_kernel_id() -> None:
    assert connection_file_name("3f2a-11") == "mcp-notebook-kernel-3f2a-11.json"


@pytest.mark.parametrize("bad", ["", "a/b", "..", "a\\b"])
def test_connection_file_name_refuses_ids_that_would_escape_the_directory(bad: str) -> None:
    with pytest.raises(ValueError):
        connection_file_name(bad)


def test_runtime_dir_follows_the_environment_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "rt"))
    assert runtime_dir() == tmp_path / "rt"


def test_runtime_dir_defaults_to_jupyters_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JUPYTER_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    assert runtime_dir() == tmp_path / "data" / "runtime"


def test_written_file_round_trips_and_is_private(tmp_path: Path) -> None:
    path = write_connection_file(
        url="http://127.0.0.1:5000/mcp",
        token="s3cret",
        kernel_id="abcdef0123",
        notebook_path="/nb/analysis.ipynb",
        created=100.0,
        directory=tmp_path,
    )
    assert path == tmp_path / "mcp-notebook-kernel-abcdef0123.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_connection_file(path) == KernelConnection(
        url="http://127.0.0.1:5000/mcp",
        token="s3cret",
        kernel_id="abcdef0123",
        notebook_path="/nb/analysis.ipynb",
        pid=os.getpid(),
        created=100.0,
        path=str(path),
    )
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_rewriting_replaces_the_previous_file(tmp_path: Path) -> None:
    write_connection_file(url="http://127.0.0.1:1/mcp", token=None, kernel_id="k", directory=tmp_path)
    path = write_connection_file(url="http://127.0.0.1:2/mcp", token=None, kernel_id="k", directory=tmp_path)
    connection = read_connection_file(path)
    assert connection is not None and connection.url == "http://127.0.0.1:2/mcp"


def test_write_creates_a_missing_directory(tmp_path: Path) -> None:
    path = write_connection_file(
        url="http://127.0.0.1:1/mcp", token=None, kernel_id="k", directory=tmp_path / "a" / "b"
    )
    assert path.exists()


def test_list_is_newest_first(tmp_path: Path) -> None:
    for kid, created in [("old", 1.0), ("new", 3.0), ("mid", 2.0)]:
        write_connection_file(
            url=f"http://127.0.0.1/{kid}", token="t", kernel_id=kid, created=created, directory=tmp_path
        )
    assert [c.kernel_id for c in list_kernel_connections(tmp_path)] == ["new", "mid", "old"]
    latest = latest_kernel_connection(tmp_path)
    assert latest is not None and latest.kernel_id == "new"


def test_list_skips_stale_files_of_dead_processes(tmp_path: Path, dead_pid: int) -> None:
    write_connection_file(url="http://127.0.0.1/a", token=None, kernel_id="alive", directory=tmp_path)
    stale = write_connection_file(
        url="http://127.0.0.1/b", token=None, kernel_id="dead", pid=dead_pid, directory=tmp_path
    )
    assert [c.kernel_id for c in list_kernel_connections(tmp_path)] == ["alive"]
    assert stale.exists()  # listing alone never deletes


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[1, 2]",
        json.dumps({"url": "http://x", "kernel_id": "k", "created": 1.0}),  # no pid
        json.dumps({"url": "http://x", "kernel_id": "k", "pid": True, "created": 1.0}),
        json.dumps({"url": 5, "kernel_id": "k", "pid": 1, "created": 1.0}),
        json.dumps({"url": "http://x", "kernel_id": "k", "pid": 1, "created": 1.0, "token": 7}),
        json.dumps({"url": "http://x", "kernel_id": "", "pid": 1, "created": 1.0}),
    ],
)
def test_list_skips_malformed_files(tmp_path: Path, content: str) -> None:
    (tmp_path / "mcp-notebook-kernel-bad.json").write_text(content)
    write_connection_file(url="http://127.0.0.1/a", token=None, kernel_id="good", directory=tmp_path)
    assert [c.kernel_id for c in list_kernel_connections(tmp_path)] == ["good"]


def test_list_ignores_other_jupyter_files(tmp_path: Path) -> None:
    (tmp_path / "kernel-123.json").write_text(json.dumps({"shell_port": 1}))
    assert list_kernel_connections(tmp_path) == []


def test_missing_directory_means_no_kernels(tmp_path: Path) -> None:
    assert list_kernel_connections(tmp_path / "nope") == []
    assert latest_kernel_connection(tmp_path / "nope") is None


def test_remove_is_idempotent(tmp_path: Path) -> None:
    path = write_connection_file(url="http://127.0.0.1/a", token=None, kernel_id="k", directory=tmp_path)
    remove_connection_file(path)
    remove_connection_file(path)
    assert not path.exists()


def test_process_liveness(dead_pid: int) -> None:
    assert is_process_alive(os.getpid())
    assert not is_process_alive(dead_pid)
    assert not is_process_alive(0)


def test_short_id_is_the_first_eight_characters() -> None:
    conn = KernelConnection("u", None, "0123456789abcdef", None, 1, 0.0, "p")
    assert conn.short_id == "01234567"
