"""`%mcp form` and `%mcp picker` in JupyterLab, driven in headless Chromium as a user would.

One Lab session serves both tests; each opens its own fixture notebook next to
the example notebooks it serves and runs all its cells.
"""

from __future__ import annotations

from typing import Any

import pytest
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STEP = 60_000  # ms allowed for each step; the whole test takes about half a minute


def _run_all_cells(page: Any, lab: Lab, notebook: str) -> None:
    # `reset`: a fresh workspace, so the notebook of an earlier test does not come back as the current tab.
    page.goto(f"{lab.url}/lab/tree/{notebook}?reset")
    page.wait_for_function("window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=STEP)
    # Run only once this notebook's kernel is ready: a cell sent earlier can be lost while it starts.
    page.wait_for_function(
        """(notebook) => {
            const panel = window.jupyterapp.shell.currentWidget;
            const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
            return panel.context && panel.context.path === notebook && kernel && kernel.status === 'idle';
        }""",
        arg=notebook,
        timeout=STEP,
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


def test_a_prompt_form_suggests_while_typing_and_renders_text_and_image_in_the_page(page: Any, lab: Lab) -> None:
    try:
        _run_all_cells(page, lab, "form_in_lab.ipynb")
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


def test_the_picker_finds_a_prompt_by_its_words_and_opens_its_form(page: Any, lab: Lab) -> None:
    try:
        _run_all_cells(page, lab, "picker_in_lab.ipynb")
        page.wait_for_selector(".mcp-prompt-picker .mcp-picker-list option", timeout=STEP)
        listing = page.locator(".mcp-picker-list option")

        def shown() -> list[str]:
            return [text.replace("\xa0", " ") for text in listing.all_inner_texts()]  # widgets keep spaces as nbsp

        assert sorted(shown()) == ["code_review — Review code", "describe_chart — Describe a chart"]

        search = page.locator(".mcp-picker-search input")
        search.click()
        search.press_sequentially("quarterly", delay=30)  # a word of describe_chart's description only
        page.wait_for_function("document.querySelectorAll('.mcp-picker-list option').length === 1", timeout=STEP)
        assert shown() == ["describe_chart — Describe a chart"]

        page.locator(".mcp-picker-list select").select_option(index=0)
        page.wait_for_selector(".mcp-prompt-picker .mcp-prompt-form", timeout=STEP)
        assert "examples:describe_chart" in page.inner_text(".mcp-prompt-picker .mcp-prompt-form")
        page.screenshot(path=str(ARTIFACTS / "picker.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "picker-failure.png"), full_page=True)
        raise
