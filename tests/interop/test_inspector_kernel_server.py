"""MCP Inspector v2 against a real kernel's `%mcp serve`, holding the token the printed configuration gets.

A client with the kernel's token must simply be served (never sent into
OAuth discovery); one without it learns from the 401 where the kernel's token
is, and the OAuth metadata paths answer 404, not 401.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from interop_harness import InteropTools, run_tool
from kernel_harness import RealKernel

pytestmark = [pytest.mark.interop, pytest.mark.slow]

MCP_NOTEBOOK = str(Path(sys.executable).with_name("mcp-notebook"))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKernel]:
    with RealKernel(tmp_path_factory.mktemp("insp-kernel")) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        kernel.execute("%%prompt ki_hello --arg who\nHello {{who}}.")
        kernel.execute("%mcp serve")
        yield kernel


def _inspector(tools: InteropTools, home: Path, *args: str) -> tuple[int, str, str]:
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "TMPDIR": str(home / "tmp"), "MCP_INSPECTOR_SECRET_STORE": "memory"}
    argv = [tools.node, tools.inspector_bin / "mcp-inspector", "--cli", "-q", "--format", "json", *args]
    run = run_tool(argv, env=env, timeout=90)
    return run.returncode, run.stdout, run.stderr


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_inspector_with_the_kernels_token_is_served_without_oauth(
    kernel: RealKernel, tools: InteropTools, tmp_path: Path, era: str
) -> None:
    connection = kernel.connection()
    where = ["--kernel", connection.kernel_id, "--runtime-dir", str(kernel.runtime_dir)]
    token = subprocess.run(
        [MCP_NOTEBOOK, "connect", *where, "--print-token"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    code, out, err = _inspector(
        tools,
        tmp_path,
        *("--protocol-era", era, "--transport", "http", "--server-url", connection.url),
        *("--header", f"Authorization: Bearer {token}", "--method", "prompts/list"),
    )
    assert code == 0, err
    assert "auth_required" not in err and "OAuth" not in err
    prompts = json.loads(out)["result"]["prompts"]
    assert prompts[0]["name"] == "ki_hello"


async def test_without_the_token_the_401_names_the_kernels_token_and_oauth_metadata_is_not_found(
    kernel: RealKernel,
) -> None:
    connection = kernel.connection()
    origin = connection.url.removesuffix("/mcp")
    async with httpx2.AsyncClient() as http:
        refused = await http.post(
            connection.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        metadata = [
            (await http.get(f"{origin}{path}")).status_code
            for path in (
                "/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-authorization-server",
            )
        ]
    assert refused.status_code == 401
    assert "resource_metadata" not in refused.headers["www-authenticate"]
    message = refused.json()["error"]["message"]
    assert "mcp-notebook serve --token" not in message
    assert "this kernel's MCP server" in message and f"--kernel {connection.kernel_id} --print-token" in message
    assert metadata == [404, 404, 404]
