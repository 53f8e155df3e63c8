"""The bearer token of `mcp-notebook serve --http` stays out of the process list: a file or the environment.

Each way of giving the token starts a real server; the token must then be
required (401 without it, 200 with it), and only `--token` may show it in
`/proc/PID/cmdline`, with a warning on stderr that says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from e2e_processes import ACCEPT, DEADLINE, HttpServer, StdioServer, initialize_params, write_corpus

pytestmark = pytest.mark.slow

TOKEN = "file-or-environment-token-8c1f"
WARNING = "mcp-notebook: WARNING: --token is visible to every user of this machine in the process list"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_corpus(tmp_path / "prompts")
    return tmp_path / "prompts"


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


def _status(url: str, token: str | None) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, content=json.dumps(body), headers=headers, timeout=DEADLINE).status_code


def _command_line(server: HttpServer) -> str:
    return Path(f"/proc/{server.process.pid}/cmdline").read_bytes().decode().replace("\0", " ")


def _assert_guarded(server: HttpServer) -> None:
    assert _status(server.url, None) == 401
    assert _status(server.url, "wrong") == 401
    assert _status(server.url, TOKEN) == 200
    assert server.stderr_line("mcp-notebook: serving over Streamable HTTP at ").endswith("(bearer token required)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_token_file_guards_the_server_and_stays_out_of_the_process_list(folder: Path, token_file: Path) -> None:
    with HttpServer([str(folder), "--token-file", str(token_file)]) as server:
        _assert_guarded(server)
        assert TOKEN not in _command_line(server)
        assert not any("WARNING" in line for line in server.stderr_seen)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_environment_variable_guards_the_server_and_stays_out_of_the_process_list(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_TOKEN", TOKEN)
    with HttpServer([str(folder)]) as server:
        _assert_guarded(server)
        assert TOKEN not in _command_line(server)
        assert not any("WARNING" in line for line in server.stderr_seen)


def test_a_token_on_the_command_line_still_works_and_is_warned_about(folder: Path) -> None:
    with HttpServer([str(folder), "--token", TOKEN]) as server:
        assert server.stderr_line(WARNING)
        _assert_guarded(server)


def test_a_token_file_other_users_can_read_is_warned_about(folder: Path, token_file: Path) -> None:
    token_file.chmod(0o644)
    with HttpServer([str(folder), "--token-file", str(token_file)]) as server:
        assert "is readable by other users" in server.stderr_line("mcp-notebook: WARNING: the token file")
        _assert_guarded(server)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the token file"),
        ("", "must hold exactly one token"),
        ("  \n", "must hold exactly one token"),
        ("two tokens\n", "must hold exactly one token"),
    ],
)
def test_an_unusable_token_file_is_a_usage_error(
    folder: Path, tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
        path.chmod(0o600)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "serve", str(folder), "--http", "--token-file", str(path)],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert message in done.stderr


def test_giving_the_token_twice_is_a_usage_error(folder: Path, token_file: Path) -> None:
    both = ["--token-file", str(token_file), "--token", TOKEN]
    done = subprocess.run(
        [sys.executable, "-m", "mcp_notebook", "serve", str(folder), "--http", *both],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "not both" in done.stderr


def test_the_environment_token_does_not_stop_a_stdio_server(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_NOTEBOOK_TOKEN", TOKEN)  # exported for HTTP servers, say, in a shell profile
    with StdioServer([str(folder)]) as server:
        assert server.initialize("2025-11-25")["result"]["serverInfo"]["name"] == "mcp-notebook"
