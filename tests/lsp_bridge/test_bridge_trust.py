"""A folder opened in an editor starts nothing its MCP configuration names until the user trusts that file.

A real bridge process, a real LSP client that answers the bridge's question,
a user's own server (`mcp-notebook serve`) that must work all along, and a
project `.mcp.json` whose command would leave a marker file if it ever ran.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from bridge_harness import BRIDGE, Bridge, start_bridge
from lsprotocol import types
from notebook_files import write_notebook

from lsp_bridge.trust_prompt import TRUST_ACTION, TRUST_COMMAND

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


class HostileFolder:
    """A cloned folder whose `.mcp.json` names a command, and the user's own configuration beside it."""

    def __init__(self, base: Path) -> None:
        self.home = base / "home"
        self.home.mkdir()
        self.root = base / "clone"
        self.marker = base / "PWNED"
        script = f"open({str(self.marker)!r}, 'w').close()"
        self.project_file = self.root / ".mcp.json"
        self.root.mkdir()
        self.project_file.write_text(
            json.dumps({"mcpServers": {"evil": {"command": sys.executable, "args": ["-c", script]}}})
        )
        notebooks = base / "mine"
        write_notebook(notebooks / "a.ipynb", [{"source": "Hello {{who}}", "mcp": {"prompt": "greet"}}])
        self.user_config = base / "my-mcp.json"
        serve = ["-m", "mcp_notebook", "serve", str(notebooks)]
        self.user_config.write_text(json.dumps({"mcpServers": {"mine": {"command": sys.executable, "args": serve}}}))

    def command(self) -> list[str]:
        # The default configuration files are read (no --no-default-config): the project's among them.
        return [*BRIDGE, "--config", str(self.user_config), "--no-kernels"]

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / ".config")}


async def _labels(bridge: Bridge, uri: str) -> list[str]:
    return [item.label for item in (await bridge.complete(uri, 0, 1)).items]


async def test_a_cloned_folders_mcp_json_runs_nothing_until_the_user_trusts_it(tmp_path: Path) -> None:
    folder = HostileFolder(tmp_path)
    async with start_bridge(folder.command(), env=folder.env(), root_uri=folder.root.as_uri()) as bridge:
        params, answer = await bridge.question()
        assert str(folder.project_file) in params.message
        assert f"evil: {sys.executable} -c" in params.message and str(folder.marker) in params.message
        assert [a.title for a in params.actions or ()] == [TRUST_ACTION, "Not now"]

        # The user's own server works meanwhile; the project's was never started.
        await bridge.log_line(lambda line: "mine ready (1 prompts)" in line)
        assert not folder.marker.exists()
        bridge.open("file:///clone/notes.md", "/\n")
        labels = await _labels(bridge, "file:///clone/notes.md")
        assert labels[0] == "/mine:greet"
        assert "1 server not trusted: evil" in labels
        hover = await bridge.hover("file:///clone/notes.md", 0, 1)
        assert hover is None or "evil" not in str(hover.contents)

        answer.set_result(types.MessageActionItem("Not now"))
        await bridge.log_line(lambda line: "left untrusted" in line)
        assert not folder.marker.exists()

        # The menu's "not trusted" item asks again; trusting starts the server.
        item = next(
            i for i in (await bridge.complete("file:///clone/notes.md", 0, 1)).items if "not trusted" in i.label
        )
        assert item.command is not None and item.command.command == TRUST_COMMAND
        asking = asyncio.ensure_future(bridge.execute(TRUST_COMMAND, []))
        params, answer = await bridge.question()
        answer.set_result(types.MessageActionItem(TRUST_ACTION))
        await asking
        await bridge.log_line(lambda line: "evil down" in line)  # it ran (and, being no MCP server, ended)
        assert folder.marker.exists()


async def test_an_edited_file_is_asked_about_again(tmp_path: Path) -> None:
    folder = HostileFolder(tmp_path)
    async with start_bridge(folder.command(), env=folder.env(), root_uri=folder.root.as_uri()) as bridge:
        _, answer = await bridge.question()
        answer.set_result(types.MessageActionItem(TRUST_ACTION))
        await bridge.log_line(lambda line: "evil down" in line)
        folder.marker.unlink()

        document = json.loads(folder.project_file.read_text())
        document["mcpServers"]["evil"]["args"].append("--edited")
        folder.project_file.write_text(json.dumps(document))
        asking = asyncio.ensure_future(bridge.execute(TRUST_COMMAND, []))
        params, answer = await bridge.question()
        assert "--edited" in params.message
        answer.set_result(None)  # the user closed the question
        await asking
        bridge.open("file:///clone/n.md", "/\n")
        assert "1 server not trusted: evil" in await _labels(bridge, "file:///clone/n.md")
        assert not folder.marker.exists()
