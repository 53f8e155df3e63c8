"""MCP Inspector v2 lists, renders and completes prompts of `mcp-notebook serve` over stdio, in both eras.

`mcp-inspector --cli` runs one method per process (`--protocol-era legacy` speaks the handshake revisions,
`modern` speaks 2026-07-28); completion needs the bundled `mcpdo` daemon, which a test starts privately and
always stops.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from interop_harness import FIXTURES, TOOLS, CompatRecorder, InteropTools, ToolRun, run_tool, server_command

pytestmark = [pytest.mark.interop, pytest.mark.slow]

SERVER = server_command("serve", str(FIXTURES / "clients.ipynb"))
PROMPTS = ["greet", "summarize", "review_code", "explain_plot", "read_notes"]
ERAS = {"legacy": "2025-11-25", "modern": "2026-07-28"}


@dataclass(frozen=True)
class Inspector:
    """How to run the inspector's CLIs with a private, writable home (catalog, daemon socket, no keychain)."""

    tools: InteropTools
    env: dict[str, str]

    @property
    def version(self) -> str:
        return self.tools.package_version(TOOLS / "insp", "@modelcontextprotocol/inspector")

    def cli(self, era: str, *method: str) -> ToolRun:
        """`mcp-inspector --cli` against a fresh `mcp-notebook serve` process."""
        argv: list[str | Path] = [self.tools.node, self.tools.inspector_bin / "mcp-inspector", "--cli", "-q"]
        argv += ["--format", "json", "--protocol-era", era, *SERVER, *method]
        return run_tool(argv, env=self.env, timeout=60)

    def result(self, era: str, *method: str) -> Any:
        run = self.cli(era, *method)
        assert run.returncode == 0, run.describe()
        return json.loads(run.stdout)["result"]

    def mcpdo(self, *args: str) -> ToolRun:
        return run_tool([self.tools.node, self.tools.inspector_bin / "mcpdo", *args], env=self.env, timeout=60)


@pytest.fixture(scope="module")
def inspector(tools: InteropTools, tmp_path_factory: pytest.TempPathFactory) -> Inspector:
    home = tmp_path_factory.mktemp("insp")
    (home / "tmp").mkdir()
    env = {"HOME": str(home), "TMPDIR": str(home / "tmp"), "MCP_INSPECTOR_SECRET_STORE": "memory"}
    return Inspector(tools, env)


def _describe(compat: CompatRecorder, inspector: Inspector, era: str, check: str) -> None:
    compat.describe(
        client=f"MCP Inspector {inspector.version} CLI (--protocol-era {era})",
        protocol=ERAS[era],
        transport="stdio",
        check=check,
    )


@pytest.mark.parametrize("era", list(ERAS))
def test_inspector_negotiates_the_revision_of_its_era(era: str, inspector: Inspector, compat: CompatRecorder) -> None:
    _describe(compat, inspector, era, "initialize / server/discover")
    result = inspector.result(era, "--method", "initialize")
    assert result["protocolVersion"] == ERAS[era]
    assert result["serverInfo"]["name"] == "mcp-notebook"
    assert "prompts" in result["capabilities"]


@pytest.mark.parametrize("era", list(ERAS))
def test_inspector_lists_every_prompt_with_its_arguments(
    era: str, inspector: Inspector, compat: CompatRecorder
) -> None:
    _describe(compat, inspector, era, "prompts/list")
    prompts = inspector.result(era, "--method", "prompts/list")["prompts"]
    assert [p["name"] for p in prompts] == PROMPTS
    greet = prompts[0]
    assert greet["title"] == "Greet someone"
    assert greet["description"] == "Greets a person in a programming language"
    assert [a["name"] for a in greet["arguments"]] == ["name", "lang"]


@pytest.mark.parametrize("era", list(ERAS))
def test_inspector_renders_a_prompt_with_arguments(era: str, inspector: Inspector, compat: CompatRecorder) -> None:
    _describe(compat, inspector, era, "prompts/get")
    args = ["--method", "prompts/get", "--prompt-name", "greet", "--prompt-args", "name=Ada", "lang=rust"]
    result = inspector.result(era, *args)
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Say hello to Ada in rust."}}]


@pytest.mark.parametrize("era", list(ERAS))
def test_inspector_renders_a_code_cell_with_its_image_output(
    era: str, inspector: Inspector, compat: CompatRecorder
) -> None:
    _describe(compat, inspector, era, "prompts/get with an image")
    result = inspector.result(era, "--method", "prompts/get", "--prompt-name", "explain_plot")
    blocks = [m["content"] for m in result["messages"]]
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert "plt.plot([1, 2, 3])" in blocks[0]["text"]
    assert blocks[1]["mimeType"] == "image/png"
    assert blocks[1]["data"].startswith("iVBORw0KGgo")  # PNG signature, base64


@pytest.mark.parametrize("era", list(ERAS))
def test_inspector_reports_an_unknown_prompt_as_an_error(
    era: str, inspector: Inspector, compat: CompatRecorder
) -> None:
    _describe(compat, inspector, era, "prompts/get of an unknown prompt fails")
    run = inspector.cli(era, "--method", "prompts/get", "--prompt-name", "no_such_prompt")
    assert run.returncode == 1, run.describe()
    # The CLI hides the JSON-RPC code; the server's message must reach the user.
    assert "no_such_prompt" in json.loads(run.stderr.strip().splitlines()[-1])["error"]["message"]


@pytest.fixture
def mcpdo_daemon(inspector: Inspector) -> Iterator[Inspector]:
    """A private mcpdo daemon for this test; stopped (with its connections) whatever happens."""
    exports = inspector.mcpdo("private")
    assert exports.returncode == 0, exports.describe()
    env = dict(inspector.env)
    for line in exports.stdout.splitlines():  # export NAME='value'
        name, _, value = line.removeprefix("export ").partition("=")
        env[name.strip()] = value.strip().strip("'")
    private = Inspector(inspector.tools, env)
    try:
        yield private
    finally:
        stopped = private.mcpdo("daemon", "stop")
        status = private.mcpdo("daemon", "status")
        assert "not running" in status.stdout + status.stderr, stopped.describe() + status.describe()


@pytest.mark.parametrize("era", list(ERAS))
def test_mcpdo_completes_a_prompt_argument(era: str, mcpdo_daemon: Inspector, compat: CompatRecorder) -> None:
    compat.describe(
        client=f"MCP Inspector {mcpdo_daemon.version} mcpdo (--era {era})",
        protocol=ERAS[era],
        transport="stdio",
        check="completion/complete",
    )
    connection = f"nb-{era}"
    connect = mcpdo_daemon.mcpdo("connect", "--connection", connection, "--era", era, "--", *SERVER)
    assert connect.returncode == 0, connect.describe()
    show = mcpdo_daemon.mcpdo("--format", "json", "connections/show", connection)
    assert json.loads(show.stdout)["protocolVersion"] == ERAS[era], show.describe()
    complete = mcpdo_daemon.mcpdo(
        "--format", "json", "--connection", connection, "prompts/complete",
        "--complete-ref-type", "ref/prompt", "--complete-ref", "greet",
        "--complete-arg-name", "lang", "--complete-arg-value", "r",
    )  # fmt: skip
    assert complete.returncode == 0, complete.describe()
    assert json.loads(complete.stdout) == {"values": ["rust", "ruby"], "total": 2, "hasMore": False}
    disconnect = mcpdo_daemon.mcpdo("--connection", connection, "disconnect", connection)
    assert disconnect.returncode == 0, disconnect.describe()
