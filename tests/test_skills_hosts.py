"""Every host serves skills through the one service (stdio and HTTP: tests/e2e/test_serve_skills.py and the
conformance runs; the kernel: tests/ipython/test_kernel_skills.py): the ASGI factory under uvicorn, the Jupyter
Server extension's host, each with the setting that turns skills off."""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_notebook.service import ServiceSettings

pytestmark = pytest.mark.slow  # real server processes

DEADLINE = 60.0
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SKILLS = "io.modelcontextprotocol/skills"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "skills-hosts-test", "version": "0"},
}
LISTENING = re.compile(r"Uvicorn running on (http://\S+)")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    served = tmp_path / "served"
    shutil.copytree(EXAMPLES / "skills", served)
    return served


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()


def modern(url: str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**(params or {}), "_meta": META}}
    reply: dict[str, Any] = httpx2.post(url, json=body, headers=headers, timeout=DEADLINE).json()
    return reply


@pytest.mark.parametrize("skills", ["1", "0"])
def test_the_asgi_factory_under_uvicorn_serves_skills_as_its_variable_says(folder: Path, skills: str) -> None:
    env = {**os.environ, "MCP_NOTEBOOK_PATHS": str(folder), "MCP_NOTEBOOK_CACHE": "0", "MCP_NOTEBOOK_SKILLS": skills}
    code = "import uvicorn; uvicorn.run('mcp_notebook.asgi:create_app', factory=True, host='127.0.0.1', port=0)"
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    try:
        url = None
        for line in process.stderr:
            match = LISTENING.search(line)
            if match:
                url = match.group(1).rstrip("/") + "/mcp"
                break
        assert url is not None, "uvicorn never said where it listens"
        discovered = modern(url, "server/discover")["result"]["capabilities"]
        listed = modern(url, "skills/list")
    finally:
        process.terminate()
        process.communicate(timeout=DEADLINE)
    if skills == "1":
        assert discovered["extensions"][SKILLS] == {"directoryRead": True}
        assert [e["uri"] for e in listed["result"]["skills"]] == ["skill://code-review/SKILL.md"]
    else:
        assert SKILLS not in (discovered.get("extensions") or {})
        assert listed["error"]["code"] == -32601


@pytest.mark.parametrize("skills", [True, False])
async def test_the_jupyter_server_host_serves_skills_as_its_traitlet_says(folder: Path, skills: bool) -> None:
    from mcp_notebook.jupyter.host import NotebookHost

    host = NotebookHost(ServiceSettings(paths=(str(folder),), cache=False, skills=skills))
    host.start(lambda _: None)
    assert await host.wait_ready() is None
    try:
        server = host.service.server
        methods = server.answers.methods
        if skills:
            assert server.extensions[SKILLS] == {"directoryRead": True}
            page = await server.answers.answer("skills/list", {}, MODERN)
            assert b'"uri":"skill://code-review/SKILL.md"' in page
            assert b'"cacheScope":"private"' in page  # the Jupyter server's answers are per user
        else:
            assert SKILLS not in server.extensions and "skills/list" not in methods
    finally:
        await host.stop()
