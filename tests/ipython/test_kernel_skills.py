"""The in-kernel host (`%mcp serve`) serves its notebook's skills (a section tagged `skill:NAME`), like every host."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from kernel_server_harness import Kernel, isolate_runtime_dir, running_kernel

pytestmark = pytest.mark.slow  # a real HTTP server (in this process)

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "kernel-skills-test", "version": "0"},
}


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    isolate_runtime_dir(tmp_path, monkeypatch)
    monkeypatch.setenv("MCP_NOTEBOOK_CACHE", "0")
    with running_kernel() as kernel:
        yield kernel


def post(url: str, token: str | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
        **({"Authorization": f"Bearer {token}"} if token else {}),
    }
    if "uri" in params and method == "resources/read":
        headers["Mcp-Name"] = params["uri"]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
    reply: dict[str, Any] = httpx2.post(url, json=body, headers=headers, timeout=20).json()
    return reply


def test_the_kernels_notebook_serves_its_tagged_section_as_a_skill(
    kernel: Kernel, notebook_factory: Callable[..., Path]
) -> None:
    path = notebook_factory(
        "analysis.ipynb",
        [
            {"source": "# Tidy\n\nTidy a table before plotting it.", "tags": ["skill:tidy-table"]},
            {"source": "Summarise {{topic}}.", "mcp": {"prompt": "ks_skills"}},
        ],
    )
    server = kernel.serve("--notebook", str(path))
    assert server.url is not None
    report = server.describe()  # what `%mcp serve` shows: the skill among what is served, not as a warning
    assert report.served.endswith(", 1 skill (skill://tidy-table/SKILL.md).")
    assert not any("tidy-table" in warning for warning in report.warnings)
    listed = post(server.url, server.token, "skills/list", {})["result"]
    (entry,) = listed["skills"]
    assert entry["uri"] == "skill://tidy-table/SKILL.md"
    assert entry["frontmatter"] == {"name": "tidy-table", "description": "Tidy a table before plotting it."}
    text = post(server.url, server.token, "resources/read", {"uri": entry["uri"]})["result"]["contents"][0]["text"]
    assert "sha256:" + hashlib.sha256(text.encode()).hexdigest() == entry["resources"][0]["digest"]
    kernel.stop()
