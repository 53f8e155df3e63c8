"""The 401 of `mcp-notebook serve --http` says whether the token was missing or wrong, and how the server got its own.

A real server for each way of giving the token (`--token-file`, the
environment, `--token`, and `--token-file` with workers, which read their
settings from the environment): the 401's JSON-RPC error message is checked
word for word, as a client shows it.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from e2e_processes import ACCEPT, DEADLINE, HttpServer, initialize_params, write_corpus

pytestmark = pytest.mark.slow

TOKEN = "refusal-token-5d2a"
BEARER = "send the header 'Authorization: Bearer <token>' with"


def _refusal(url: str, authorization: str | None) -> tuple[int, str, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if authorization is not None:
        headers["Authorization"] = authorization
    response = httpx2.post(url, content=json.dumps(body), headers=headers, timeout=DEADLINE)
    error = response.json()["error"]
    return response.status_code, error["message"], error["data"]


@pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "workers"])
def test_a_token_file_server_names_its_file_and_tells_missing_from_wrong(tmp_path: Path, workers: int) -> None:
    write_corpus(tmp_path / "prompts")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    where = f"the token in the file this server was started with (--token-file {token_file})"
    with HttpServer([str(tmp_path / "prompts"), "--token-file", str(token_file), "--workers", str(workers)]) as server:
        assert _refusal(server.url, None) == (
            401,
            f"No bearer token was sent: {BEARER} {where}",
            {"reason": "missing token"},
        )
        assert _refusal(server.url, "Bearer guess") == (
            401,
            f"The bearer token sent does not match this server's: {BEARER} {where}",
            {"reason": "wrong token"},
        )


def test_an_environment_token_server_names_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_corpus(tmp_path / "prompts")
    monkeypatch.setenv("MCP_NOTEBOOK_TOKEN", TOKEN)
    with HttpServer([str(tmp_path / "prompts")]) as server:
        status, message, _ = _refusal(server.url, "token guess")
    assert (status, message) == (
        401,
        f"The bearer token sent does not match this server's: {BEARER} "
        "the token in $MCP_NOTEBOOK_TOKEN, which this server was started with",
    )


def test_a_command_line_token_server_names_the_option(tmp_path: Path) -> None:
    write_corpus(tmp_path / "prompts")
    with HttpServer([str(tmp_path / "prompts"), "--token", TOKEN]) as server:
        status, message, _ = _refusal(server.url, None)
    assert (status, message) == (
        401,
        f"No bearer token was sent: {BEARER} the token given to this server's --token option",
    )
