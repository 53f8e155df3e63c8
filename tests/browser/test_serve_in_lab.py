"""What `%mcp serve` shows in JupyterLab: a short summary, each client's configuration folded, Copy buttons."""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, run_all_cells
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUMMARIES = [
    "Token: never shown here (cell outputs are saved in the notebook); this command prints it",
    "Claude Code",
    "VS Code (.vscode/mcp.json)",
    "Cursor (~/.cursor/mcp.json; set MCP_NOTEBOOK_KERNEL_TOKEN to the token in Cursor's environment)",
    "Clients that only speak stdio",
    "Connection file (for editors and mcp-notebook connect)",
]


def test_serve_shows_a_summary_with_folded_client_configurations_to_copy(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/serve_in_lab.ipynb?reset", "serve_in_lab.ipynb")
        report = page.locator(".jp-OutputArea-output .mcp-serve")
        report.wait_for(timeout=STEP)
        # The output's script adds one Copy button per block: JupyterLab ran it (the output is trusted).
        page.wait_for_function("document.querySelectorAll('.mcp-serve button.mcp-copy').length === 6", timeout=STEP)
        assert report.locator("summary").all_inner_texts() == SUMMARIES
        assert report.locator("details[open]").count() == 0
        shown = report.inner_text()
        assert shown.startswith("MCP server of this kernel at http://127.0.0.1:")
        # The notebook's section tagged skill:tidy-table is served as a skill: said among what is served.
        assert (
            "Serving 1 prompt from a %%prompt cell, the notebook serve_in_lab.ipynb, "
            "1 skill (skill://tidy-table/SKILL.md)." in shown
        )
        assert "1 skill:" not in shown  # not among the warnings
        assert "the notebook " in shown and "serve_in_lab.ipynb" in shown  # found through the sessions API
        assert "claude mcp add" not in shown  # folded away until asked for
        page.screenshot(path=str(ARTIFACTS / "serve-folded.png"), full_page=True)
        report.screenshot(path=str(ARTIFACTS / "serve-folded-output.png"))

        claude = report.locator("details").nth(1)
        claude.locator("summary").click()
        line = claude.locator("pre").inner_text()
        # The kernel is named after its notebook, as the editor bridge names it.
        assert line.startswith("token=$(") and " && claude mcp add --transport http serve_in_lab " in line
        assert claude.locator("pre").is_visible()
        claude.locator("button.mcp-copy").click()
        page.wait_for_function(
            "(d) => d.querySelector('button.mcp-copy').textContent === 'Copied'",
            arg=claude.element_handle(),
            timeout=STEP,
        )
        assert page.evaluate("navigator.clipboard.readText()") == line
        report.screenshot(path=str(ARTIFACTS / "serve-claude-open.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "serve-failure.png"), full_page=True)
        raise
