"""A kernel started in a cloned folder runs nothing that folder's `.mcp.json` names until the user trusts it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from kernel_harness import RealKernel

pytestmark = pytest.mark.slow


def test_mcp_in_a_kernel_starts_a_project_server_only_after_mcp_trust(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "clone"
    root.mkdir()
    marker = tmp_path / "PWNED"
    command = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": command}}), encoding="utf-8")

    with RealKernel(tmp_path / "kernel", cwd=root, env={"HOME": str(home), "XDG_CONFIG_HOME": None}) as kernel:
        kernel.execute("%load_ext mcp_notebook")
        listed = kernel.execute("%mcp servers")
        shown = listed.text + json.dumps(listed.displays)
        # Said once, with the exact command, and how to accept; the table lists the server as not trusted.
        assert listed.text.count("not trusted:") == 1 and "%mcp trust starts them" in listed.text
        assert str(marker) in listed.text and str(root / ".mcp.json") in listed.text
        assert "not trusted" in json.dumps(listed.displays)
        assert "evil" in shown

        refused = kernel.execute("%mcp prompts evil", check=False)
        assert refused.error is not None
        assert "which you have not trusted" in refused.error["evalue"] and "%mcp trust" in refused.error["evalue"]
        assert not marker.exists()

        accepted = kernel.execute("%mcp trust")
        assert f"Trusted {root / '.mcp.json'}" in accepted.text
        kernel.execute("%mcp prompts evil", check=False)  # now it starts (and, being no MCP server, fails)
        assert marker.exists()
