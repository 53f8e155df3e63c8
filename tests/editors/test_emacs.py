"""examples/editors/emacs/mcp-notebook.el in Debian's Emacs with eglot, in batch mode, against the real bridge."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from editors_harness import EMACS, EXAMPLES, gone, make_project, require

pytestmark = pytest.mark.slow

DRIVE = Path(__file__).with_name("emacs_drive.el")


def test_eglot_offers_the_prompts_renders_a_line_and_stops_the_bridge(tmp_path: Path) -> None:
    emacs = require(EMACS, "Emacs")
    project = make_project(tmp_path)
    document = project.root / "notes.txt"
    document.write_text("\n")
    out = tmp_path / "drive.json"
    env = {
        **project.env(),
        "DRIVE_OUT": str(out),
        "DRIVE_FILE": str(document),
        "MCPNB_CONFIG": str(EXAMPLES / "emacs" / "mcp-notebook.el"),
    }
    # -q: no init file, but the site start-up that puts Debian's eglot on the load path.
    subprocess.run([emacs, "--batch", "-q", "-l", str(DRIVE)], env=env, cwd=project.root, timeout=180, check=False)
    result = json.loads(out.read_text())
    assert "error" not in result, result
    assert result["mode"] == "text-mode"
    assert result["commands"] == ["/nb:greet", "/nb:summarize"]
    assert result["arguments"] == ["name="]
    assert result["rendered"] == "# Notes\nHello Ada, nice to meet you.\n\nand more\nthe end\n"
    # eglot-shutdown, then Emacs exited: the bridge and the server it started are gone.
    started = time.monotonic()

    def left() -> list[psutil.Process]:
        return [p for p in _ours(project.root) if not gone(p)]

    while left() and time.monotonic() - started < 2.0:
        time.sleep(0.02)  # other processes' ends: there is no event to wait on
    assert left() == []
    assert not psutil.pid_exists(result["bridge"]) or gone(psutil.Process(result["bridge"]))


def _ours(root: Path) -> list[psutil.Process]:
    """Processes whose command line names this project (the notebook server serving its prompts)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(str(root) in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found
