"""A `var[pandas.DataFrame]` argument in JupyterLab: the picker's form takes the suggestion `sales`, the model
gets the table.

In headless Chromium, the kernel publishes `explain` (`df:var[pandas.DataFrame]`)
and serves it; the picker lists it under "this kernel", its form suggests
the kernel's DataFrames, and the rendered conversation shows `sales` as a
table of its own (tabulate is not installed), between the two halves of the
sentence, not the word "sales". The flag of `magic.time` is a checkbox.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, run_all_cells, wait_for_focus, wait_for_suggestions, wait_for_value
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DF, STYLE = ".mcp-field-df input", ".mcp-field-style input"


def test_the_picker_form_sends_the_dataframe_a_var_argument_names_as_a_table(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/variables_in_lab.ipynb?reset", "variables_in_lab.ipynb")
        page.wait_for_function(
            "Array.from(document.querySelectorAll('.mcp-picker-list option'))"
            ".some((o) => o.textContent.startsWith('explain'))",
            timeout=STEP,
        )
        index = page.evaluate(
            "Array.from(document.querySelector('.mcp-picker-list select').options)"
            ".findIndex((o) => o.textContent.startsWith('explain'))"
        )
        page.locator(".mcp-picker-list select").first.select_option(index=index)
        page.wait_for_selector(f"{DF}[data-mcp-combobox]", timeout=STEP)

        page.locator(DF).click()
        page.keyboard.type("s")
        wait_for_suggestions(page, ["sales"])  # the kernel's DataFrames
        page.keyboard.press("Enter")  # takes the suggestion
        wait_for_value(page, DF, "sales")
        page.keyboard.press("Enter")  # on to `style`
        wait_for_focus(page, STYLE)
        page.keyboard.press("Enter")  # renders from the last field
        page.wait_for_selector(".mcp-form-output table", timeout=STEP)

        output = page.locator(".mcp-form-output")
        cells = output.locator("table td").all_inner_texts()
        assert cells == ["north", "120.5", "south", "98.0"]
        assert output.locator("table th").all_inner_texts() == ["region", "revenue"]
        paragraphs = [p.strip() for p in output.locator("p").all_inner_texts()]
        assert "Explain the columns and the data quality of" in paragraphs
        assert ", in a short answer." in paragraphs
        assert "quality of sales" not in output.inner_text()
        output.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "variable-argument-table.png"))

        # A magic's flag is a checkbox, its note the option's help.
        page.locator(".mcp-picker-search input").fill("magic.time")
        page.wait_for_function(
            "Array.from(document.querySelectorAll('.mcp-picker-list option'))"
            ".some((o) => o.textContent.startsWith('magic.time\u00a0') || o.textContent.startsWith('magic.time '))",
            timeout=STEP,
        )
        index = page.evaluate(
            "Array.from(document.querySelector('.mcp-picker-list select').options)"
            ".findIndex((o) => /^magic\\.time\\s/.test(o.textContent))"
        )
        page.locator(".mcp-picker-list select").first.select_option(index=index)
        flag = page.locator(".mcp-field-no_raise_error")
        flag.locator("input[type=checkbox]").wait_for(timeout=STEP)
        assert "--no-raise-error: If given, don't re-raise exceptions" in flag.inner_text()
        assert "true to pass it" not in flag.inner_text()
        flag.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "magic-flag-checkbox.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "variable-argument-failure.png"), full_page=True)
        raise
