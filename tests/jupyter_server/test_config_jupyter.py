"""`mcp-notebook config --jupyter URL`: client configuration for a Jupyter server's MCP endpoint."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mcp_notebook.cli import main

TOKEN = "0123456789abcdef-secret"


def blocks_of(out: str) -> dict[str, Any]:
    """Each `# title` block of the output: the JSON ones parsed, the others as text."""
    found: dict[str, Any] = {}
    for chunk in out.strip().split("\n\n"):
        title, _, body = chunk.partition("\n")
        found[title] = json.loads(body) if body.startswith("{") else body
    return found


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://127.0.0.1:8888/lab?token=abc", "http://127.0.0.1:8888/mcp"),
        ("http://127.0.0.1:8888/", "http://127.0.0.1:8888/mcp"),
        ("http://127.0.0.1:8888", "http://127.0.0.1:8888/mcp"),
        ("http://localhost:8888/lab/tree/a/b.ipynb#cell", "http://localhost:8888/mcp"),
        ("http://[::1]:8888/tree?token=x&other=1", "http://[::1]:8888/mcp"),
        ("http://127.0.0.1:8888/notebooks/x.ipynb", "http://127.0.0.1:8888/mcp"),
        ("http://127.0.0.1:8888/mcp", "http://127.0.0.1:8888/mcp"),
        ("https://jupyter.example.org/base/url/lab", "https://jupyter.example.org/base/url/mcp"),
        ("https://hub.example.org/user/alice/", "https://hub.example.org/user/alice/mcp"),
        ("https://hub.example.org/user/alice/lab/tree/prompts", "https://hub.example.org/user/alice/mcp"),
        ("https://hub.example.org/user/alice/mcp?token=t", "https://hub.example.org/user/alice/mcp"),
        ("  http://127.0.0.1:8888/api/contents  ", "http://127.0.0.1:8888/mcp"),
    ],
)
def test_any_url_of_the_server_gives_its_mcp_endpoint(
    url: str, endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "--jupyter", url]) == 0
    captured = capsys.readouterr()
    blocks = blocks_of(captured.out)
    assert blocks["# Claude Code: .mcp.json"]["mcpServers"]["jupyter"]["url"] == endpoint
    assert blocks["# Cursor: .cursor/mcp.json"]["mcpServers"]["jupyter"]["url"] == endpoint
    assert f"MCP endpoint: {endpoint}" in captured.err


@pytest.mark.parametrize(
    "url",
    ["ftp://127.0.0.1/", "127.0.0.1:8888", "javascript:alert(1)", "http://", "https://hub.example.org/hub/home", ""],
)
def test_what_is_not_a_jupyter_server_url_is_refused_clearly(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--jupyter", url]) == 2
    err = capsys.readouterr().err
    assert "--jupyter needs the http(s) URL of a Jupyter server" in err or "JupyterHub's own page" in err


def test_the_token_in_the_url_stays_out_of_the_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--jupyter", f"http://127.0.0.1:8888/lab?token={TOKEN}", "--name", "team"]) == 0
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    blocks = blocks_of(captured.out)
    claude = blocks["# Claude Code (writes .mcp.json)"]
    assert claude == (
        "claude mcp add --transport http --scope project team http://127.0.0.1:8888/mcp "
        "--header 'Authorization: token ${JUPYTER_TOKEN}'"
    )
    assert blocks["# Claude Code: .mcp.json"]["mcpServers"]["team"] == {
        "type": "http",
        "url": "http://127.0.0.1:8888/mcp",
        "headers": {"Authorization": "token ${JUPYTER_TOKEN}"},
    }
    vscode = blocks["# VS Code: .vscode/mcp.json (asks for the token once, keeps it secret)"]
    assert vscode["inputs"] == [
        {"type": "promptString", "id": "jupyter-token", "description": "Jupyter token", "password": True}
    ]
    assert vscode["servers"]["team"]["headers"] == {"Authorization": "token ${input:jupyter-token}"}
    assert blocks["# Cursor: .cursor/mcp.json"]["mcpServers"]["team"]["headers"] == {
        "Authorization": "token ${env:JUPYTER_TOKEN}"
    }
    assert "export JUPYTER_TOKEN=<the token after ?token= in the URL>" in captured.err


@pytest.mark.parametrize("source", ["url", "environment"])
def test_embed_token_writes_the_token_when_asked(
    source: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "http://127.0.0.1:8888/lab"
    if source == "url":
        url += f"?token={TOKEN}"
        monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    else:
        monkeypatch.setenv("JUPYTER_TOKEN", TOKEN)
    assert main(["config", "--jupyter", url, "--embed-token"]) == 0
    captured = capsys.readouterr()
    blocks = blocks_of(captured.out)
    assert blocks["# Claude Code: .mcp.json"]["mcpServers"]["jupyter"]["headers"] == {"Authorization": f"token {TOKEN}"}
    assert re.search(r"VS Code", captured.out) and "inputs" not in captured.out
    assert "keep such files out of version control" in captured.err


def test_embed_token_without_a_token_says_where_to_put_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    assert main(["config", "--jupyter", "http://127.0.0.1:8888/", "--embed-token"]) == 2
    assert "--embed-token needs a token: in the URL (?token=...) or in $JUPYTER_TOKEN" in capsys.readouterr().err


def test_config_without_paths_or_jupyter_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 2
    assert "config needs notebook files or folders, or --jupyter URL" in capsys.readouterr().err
