"""A project MCP configuration in the Jupyter root, met in JupyterLab: a dialog asks, and nothing runs before.

Lab serves a root whose `.mcp.json` names a command that would leave a
marker file. Opening a Markdown file starts the bridge through jupyter-lsp;
JupyterLab shows the bridge's question as a dialog listing the command. "Not
now" leaves it unstarted (the `/` menu says which server is not trusted);
"Trust and start", asked again once the page is reloaded, starts it.

Screenshots: test-artifacts/browser/jupyterlab-trust-*.png (copies in docs/images/).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_steps import STEP
from lab_harness import ARTIFACTS, Lab, running_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

pytest.importorskip("jupyterlab_lsp", reason="jupyterlab-lsp is not installed (run .ci/browser-setup.sh)")

NOTES = "slash_notes.md"


@pytest.fixture(scope="module")
def cloned_lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, Path]]:
    base = tmp_path_factory.mktemp("trust-lab")
    config = base / "config"
    config.mkdir()
    enabled = {"ServerApp": {"jpserver_extensions": {"mcp_notebook": True}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(enabled), encoding="utf-8")
    marker = base / "PWNED"
    with running_lab(base) as lab:
        command = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}
        (lab.root / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": command}}), encoding="utf-8")
        yield lab, marker


def wait_for_file(path: Path, seconds: float = STEP / 1000) -> None:
    """Until `path` exists (another process writes it), with a deadline."""
    import threading
    import time

    deadline, tick = time.monotonic() + seconds, threading.Event()
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        tick.wait(0.05)


def dialog(page: Any) -> Any:
    found = page.locator(".jp-Dialog", has_text="would start")
    found.wait_for(timeout=STEP)
    return found


def test_a_roots_mcp_json_is_asked_about_in_a_dialog_and_runs_only_once_trusted(
    page: Any, cloned_lab: tuple[Lab, Path]
) -> None:
    lab, marker = cloned_lab
    try:
        page.goto(f"{lab.url}/lab/tree/{NOTES}?reset")
        asked = dialog(page)
        text = asked.inner_text()
        assert str(lab.root / ".mcp.json") in text and str(marker) in text
        page.screenshot(
            path=str(ARTIFACTS / "jupyterlab-trust-dialog.png"), clip=asked.locator(".jp-Dialog-content").bounding_box()
        )
        asked.get_by_role("button", name="Not now").click()
        asked.wait_for(state="detached", timeout=STEP)
        assert not marker.exists()

        editor = page.locator(".jp-FileEditor .cm-content")
        editor.click()
        page.keyboard.press("Control+End")
        page.keyboard.type("\n/")
        page.keyboard.press("Tab")
        item = page.locator(".jp-Completer-item", has_text="1 server not trusted: evil")
        item.first.wait_for(timeout=STEP)
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-trust-menu.png"))
        assert not marker.exists()

        assert "reload the page to be asked again" in item.first.inner_text()
        page.keyboard.press("Escape")
        page.reload()  # a new bridge, which asks again
        dialog(page).get_by_role("button", name="Trust and start").click()
        wait_for_file(marker)  # written by the command, once started
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "jupyterlab-trust-failure.png"), full_page=True)
        raise
