"""The workers' meeting folder and relay secret, in process (the relay itself: tests/e2e/test_serve_http_relay.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcp_notebook.transports.affinity import RELAY_SECRET_ENV, launch_secret, worker_dir_problem


def _folder(path: Path, mode: int) -> Path:
    path.mkdir()
    path.chmod(mode)
    return path


def test_a_private_folder_is_accepted(tmp_path: Path) -> None:
    assert worker_dir_problem(_folder(tmp_path / "ok", 0o700)) is None


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o750, 0o701, 0o711])
def test_a_folder_others_may_enter_or_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = _folder(tmp_path / "open", mode)
    assert worker_dir_problem(path) == (
        f"MCP_NOTEBOOK_WORKER_DIR={path} is refused: its mode is {mode:04o}; "
        "it must be a folder of this user's with mode 0700"
    )


def test_a_symlink_to_a_private_folder_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(_folder(tmp_path / "target", 0o700))
    assert "is refused: it is a symlink;" in str(worker_dir_problem(link))


def test_a_file_and_a_missing_folder_are_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert "is refused: it is not a folder;" in str(worker_dir_problem(tmp_path / "file"))
    assert worker_dir_problem(tmp_path / "missing") == (
        f"MCP_NOTEBOOK_WORKER_DIR={tmp_path / 'missing'} cannot be used: No such file or directory"
    )


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="only root can give a folder away")
def test_another_users_folder_is_refused(tmp_path: Path) -> None:
    path = _folder(tmp_path / "theirs", 0o700)
    os.chown(path, 65534, 65534)
    assert f"is refused: it belongs to user id 65534, not to this user ({os.getuid()});" in str(
        worker_dir_problem(path)
    )


def test_the_secret_given_by_serve_is_used_and_nothing_is_written(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "workers", 0o700)
    assert launch_secret(folder, {RELAY_SECRET_ENV: "given"}) == "given"
    assert list(folder.iterdir()) == []


def test_without_one_the_workers_of_a_launch_share_a_private_secret(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "workers", 0o700)
    first = launch_secret(folder, {})
    second = launch_secret(folder, {})
    assert first == second and len(first) == 64
    (written,) = folder.iterdir()
    assert written.name == f"launch-{os.getppid()}.secret"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
