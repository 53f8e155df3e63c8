"""How a kernel finds the Jupyter server that started it: the `jpserver-<pid>.json` files, its parent first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_notebook.ipython.session_path import find_servers, session_notebook


def _server_file(folder: Path, pid: int, url: str = "http://127.0.0.1:1/", **extra: object) -> None:
    info = {"url": url, "token": "t", "root_dir": str(folder), "pid": pid, **extra}
    (folder / f"jpserver-{pid}.json").write_text(json.dumps(info), encoding="utf-8")


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_parent_server_comes_first_and_dead_or_malformed_files_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    _server_file(tmp_path, os.getpid(), url="http://127.0.0.1:2")  # alive, not the parent
    _server_file(tmp_path, os.getppid())  # the parent
    _server_file(tmp_path, _dead_pid())  # a server that crashed and left its file
    (tmp_path / "jpserver-1.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "nbserver-7.json").write_text("{}", encoding="utf-8")  # not a jupyter-server file
    found = find_servers(tmp_path)
    assert [info.pid for info in found] == [os.getppid(), os.getpid()]
    assert found[1].url == "http://127.0.0.1:2/"  # always ends in "/", for joining API paths

    monkeypatch.setenv("JPY_PARENT_PID", str(os.getpid()))  # what jupyter_client sets for its kernels
    assert find_servers(tmp_path)[0].pid == os.getpid()


def test_no_server_that_answers_means_the_session_is_unknown(tmp_path: Path) -> None:
    _server_file(tmp_path, os.getpid(), url="http://127.0.0.1:9/")  # nothing listens on the discard port
    assert session_notebook("3f2a", tmp_path).found is False
    assert session_notebook("3f2a", tmp_path / "missing").found is False
