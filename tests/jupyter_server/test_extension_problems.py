"""What the extension says when it cannot serve, while the Jupyter server goes on serving everything else."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest
from e2e_processes import ACCEPT, initialize_params, write_corpus
from jupyter_harness import JupyterServer

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures"

CASES = [
    pytest.param(
        ["--ServerApp.contents_manager_class=elsewhere_contents.ElsewhereContentsManager"],
        "MCP prompts are not served: the contents manager elsewhere_contents.ElsewhereContentsManager does not keep "
        "notebooks in files; MCP prompts need a file-backed root",
        503,
        id="contents-not-in-files",
    ),
    pytest.param(
        ["--MCPNotebook.root=no-such-folder"],
        "MCP prompts are not served: MCPNotebook.root names no folder: ",
        503,
        id="missing-folder",
    ),
    pytest.param(
        ["--MCPNotebook.root=../outside"],
        "MCP prompts are not served: MCPNotebook.root must be a folder inside the server's root directory, "
        "not '../outside'",
        503,
        id="folder-outside-the-root",
    ),
    pytest.param(
        ["--MCPNotebook.root=/etc"],
        "MCP prompts are not served: MCPNotebook.root must be a folder inside the server's root directory, not '/etc'",
        503,
        id="absolute-folder",
    ),
    pytest.param(
        ["--MCPNotebook.page_size=0"],
        "MCP prompts are not served: MCPNotebook.page_size must be at least 1, got 0",
        503,
        id="page-size-zero",
    ),
    pytest.param(
        ["--MCPNotebook.poll=1e-300"],
        "MCP prompts are not served: MCPNotebook.poll must be at least 0.1 seconds, got 1e-300",
        503,
        id="poll-too-often",
    ),
    pytest.param(
        ["--MCPNotebook.poll=nan"],
        "MCP prompts are not served: MCPNotebook.poll must be a finite number of seconds, got nan",
        503,
        id="poll-nan",
    ),
]


@pytest.mark.parametrize(("args", "logged", "status"), CASES)
async def test_a_server_that_cannot_serve_prompts_says_why_and_keeps_serving(
    tmp_path: Path, args: list[str], logged: str, status: int
) -> None:
    root = tmp_path / "notebooks"
    write_corpus(root)
    env = {"PYTHONPATH": str(FIXTURES)}
    with JupyterServer(root, tmp_path, args=args, env=env, wait_for_mcp=False) as jupyter:
        jupyter.wait_for_line(re.escape(logged))
        address = jupyter.wait_for_line(r"http://127\.0\.0\.1:\d+/\?token=").split("http://", 1)[1].split("/")[0]
        base = f"http://{address}/"
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params("2025-11-25")}
        headers = {"Content-Type": "application/json", "Accept": ACCEPT, **jupyter.auth()}
        async with httpx2.AsyncClient() as http:
            refused = await http.post(f"{base}mcp", json=body, headers=headers)
            status_page = await http.get(f"{base}api/status", headers=jupyter.auth())
    assert refused.status_code == status
    assert logged.removeprefix("MCP prompts are not served: ") in refused.json()["message"]
    assert status_page.status_code == 200  # the rest of the Jupyter server is unaffected
