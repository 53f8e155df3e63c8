"""`%mcp form` and `%mcp picker` in JupyterLab, driven in headless Chromium as a user would.

One Lab session serves both tests; each opens its own fixture notebook next to
the example notebooks it serves and runs all its cells.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, check_describe_chart_form, run_all_cells
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_prompt_form_suggests_while_typing_and_renders_text_and_image_in_the_page(page: Any, lab: Lab) -> None:
    try:
        # `reset`: a fresh workspace, so the notebook of an earlier test does not come back as the current tab.
        run_all_cells(page, f"{lab.url}/lab/tree/form_in_lab.ipynb?reset", "form_in_lab.ipynb")
        check_describe_chart_form(page, shots="form")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "form-failure.png"), full_page=True)
        raise


def test_the_picker_finds_a_prompt_by_its_words_and_opens_its_form(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/picker_in_lab.ipynb?reset", "picker_in_lab.ipynb")
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
