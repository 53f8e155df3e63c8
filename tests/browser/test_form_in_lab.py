"""`%mcp form` in JupyterLab, driven in headless Chromium: suggestions while typing, pick one, render with its image."""

from __future__ import annotations

from typing import Any

import pytest
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEP = 60_000  # ms allowed for each step; the whole test takes about half a minute


def _run_all_cells(page: Any, lab: Lab) -> None:
    page.goto(f"{lab.url}/lab/tree/form_in_lab.ipynb")
    page.wait_for_function("window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=STEP)
    # Run only once the kernel is ready: a cell sent earlier can be lost while it starts.
    page.wait_for_function(
        """() => {
            const panel = window.jupyterapp.shell.currentWidget;
            const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
            return kernel && kernel.status === 'idle';
        }""",
        timeout=STEP,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_a_prompt_form_suggests_while_typing_and_renders_text_and_image_in_the_page(page: Any, lab: Lab) -> None:
    try:
        _run_all_cells(page, lab)
        page.wait_for_selector(".mcp-prompt-form", timeout=STEP)
        assert "Describe a chart" in page.inner_text(".mcp-prompt-form")

        audience = page.locator(".mcp-field-audience input")
        audience.click()
        audience.press_sequentially("e", delay=50)  # what the user types
        page.wait_for_selector(".mcp-field-audience .mcp-suggestions option", timeout=STEP)
        options = page.locator(".mcp-field-audience .mcp-suggestions option").all_inner_texts()
        assert options == ["engineers", "executives"]
        offered = page.locator(".mcp-field-audience datalist option")
        assert [offered.nth(i).get_attribute("value") for i in range(offered.count())] == options
        page.screenshot(path=str(ARTIFACTS / "form-suggestions.png"))

        page.locator(".mcp-field-audience .mcp-suggestions select").select_option("executives")
        page.wait_for_function(
            "document.querySelector('.mcp-field-audience input').value === 'executives'", timeout=STEP
        )

        page.locator(".mcp-render").click()
        page.wait_for_selector(".mcp-form-output img", timeout=STEP)
        output = page.locator(".mcp-form-output")
        page.wait_for_function(
            "document.querySelector('.mcp-form-output').innerText.includes('Describe this chart for executives')",
            timeout=STEP,
        )
        assert "the best and the worst quarter" in output.inner_text()
        image = page.locator(".mcp-form-output img").first
        assert (image.get_attribute("src") or "").startswith("data:image/png;base64,")
        assert image.evaluate("img => img.complete && img.naturalWidth > 0")
        output.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "form-rendered.png"), full_page=True)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "form-failure.png"), full_page=True)
        raise
