"""Skills as `/` commands in a real LSP client, from a real FastMCP 4.2 skills server behind the bridge."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from bridge_harness import BRIDGE, Bridge, single_text_edit, start_bridge
from client_harness import SKILL_FOLDERS, SKILLS_SERVER
from lsprotocol import types

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

PDF = SKILL_FOLDERS / "pdf-processing"
CLASH_SERVER = Path(__file__).with_name("skill_clash_server.py")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def bridge(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Bridge]:
    root = tmp_path_factory.mktemp("skills-bridge")
    shutil.copytree(SKILL_FOLDERS / "git-workflow", root / "skills" / "git-workflow")
    # `--prompt` adds a prompt `hello`; `git-workflow` is also a prompt's name on the second server.
    servers = {
        "shop": {"command": sys.executable, "args": [str(SKILLS_SERVER), "--prompt"]},
        "clash": {
            "command": sys.executable,
            "args": [str(Path(__file__).with_name("skill_clash_server.py")), str(root / "skills")],
        },
    }
    config = root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    command = [*BRIDGE, "--config", str(config), "--no-default-config", "--runtime-dir", str(root / "runtime")]
    async with start_bridge(command) as bridge:
        await bridge.log_line(lambda line: "shop ready (1 prompts, 2 skills)" in line)
        await bridge.log_line(lambda line: "clash ready (1 prompts, 1 skills)" in line)
        yield bridge


async def test_skills_are_slash_commands_beside_prompts(bridge: Bridge) -> None:
    uri = "file:///w/menu.md"
    bridge.open(uri, "/pdf\n/\n")
    (pdf,) = (await bridge.complete(uri, 0, 4)).items
    assert pdf.label == "/shop:pdf-processing"
    assert pdf.kind == types.CompletionItemKind.Module
    assert pdf.detail == "Skill: Extract, fill, and assemble PDF documents"
    labels = [item.label for item in (await bridge.complete(uri, 1, 1)).items]
    # The clashing server's skill `git-workflow` yields to its prompt of that name.
    assert {"/shop:hello", "/shop:git-workflow", "/shop:pdf-processing", "/clash:git-workflow"} <= set(labels)
    assert "/clash:git-workflow.skill" in labels


async def test_rendering_a_skill_inserts_its_instructions_under_its_origin(bridge: Bridge) -> None:
    uri = "file:///w/render.md"
    bridge.open(uri, "# Notes\n/pdf-processing\n")
    result = await bridge.execute("mcpNotebook.renderPrompt", [uri, 1])
    assert result["applied"] is True and result["error"] is None
    (params,) = bridge.edits[-1:]
    edit = single_text_edit(params.edit)
    assert edit.range == types.Range(types.Position(1, 0), types.Position(1, 15))
    head, body = edit.new_text.split("\n\n", 1)
    assert head == (
        "> Skill `pdf-processing` from MCP server `shop` (skill://pdf-processing/SKILL.md). Relative paths below "
        "resolve against skill://pdf-processing/; its files: references/FORMS.md, scripts/extract.py."
    )
    assert body == (PDF / "SKILL.md").read_text().split("---\n", 2)[2].strip()


async def test_a_skill_and_a_prompt_of_one_name_are_both_reachable(bridge: Bridge) -> None:
    uri = "file:///w/clash.md"
    bridge.open(uri, "/clash:git-workflow\n/clash:git-workflow.skill\n")
    prompt = await bridge.execute("mcpNotebook.renderPrompt", [uri, 0])
    assert prompt["text"] == "The clash server's own git-workflow prompt."
    skill = await bridge.execute("mcpNotebook.renderPrompt", [uri, 1])
    assert skill["text"].startswith("> Skill `git-workflow` from MCP server `clash`")
