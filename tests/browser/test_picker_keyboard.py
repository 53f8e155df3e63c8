"""The prompt picker and its forms used from the keyboard in JupyterLab, with the keys kept out of the notebook.

In headless Chromium: ↑/↓ in the search box move a highlight over the listed
prompts without opening one, Enter opens the highlighted prompt's form (or
the only one a search leaves), Escape goes back to the search box, and none
of these keys reaches JupyterLab (the notebook's active cell does not move,
no cell goes into edit mode). In a form, with `sec` typed and only `security`
suggested, Enter takes `security`, and the list is gone once the form renders.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, active_suggestion, run_all_cells, shown_suggestions, wait_for_focus, wait_for_value
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SEARCH = ".mcp-picker-search input"


def notebook_state(page: Any) -> dict[str, Any]:
    """Where JupyterLab's notebook is: its active cell and its mode ("command" or "edit")."""
    state: dict[str, Any] = page.evaluate(
        "(() => { const nb = window.jupyterapp.shell.currentWidget.content;"
        " return {cell: nb.activeCellIndex, mode: nb.mode}; })()"
    )
    return state


def highlighted(page: Any) -> list[str]:
    """The picker's highlighted prompts (their option labels), across every server's list."""
    found: list[str] = page.evaluate(
        "Array.from(document.querySelectorAll('.mcp-picker-list select'))"
        ".filter((s) => s.selectedIndex >= 0).map((s) => s.options[s.selectedIndex].textContent.split(/\\s/)[0])"
    )
    return found


def open_forms(page: Any) -> int:
    count: int = page.evaluate("document.querySelectorAll('.mcp-prompt-picker .mcp-prompt-form').length")
    return count


def test_the_picker_is_driven_by_the_keyboard_and_its_keys_stay_out_of_the_notebook(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/picker_in_lab.ipynb?reset", "picker_in_lab.ipynb")
        page.wait_for_selector(".mcp-prompt-picker .mcp-picker-list option", timeout=STEP)
        page.wait_for_function("document.querySelectorAll('.mcp-picker-list option').length === 2", timeout=STEP)
        page.wait_for_selector(".mcp-prompt-picker[data-lm-suppress-shortcuts]", timeout=STEP)
        page.locator(SEARCH).click()
        before = notebook_state(page)
        assert before["mode"] == "command"  # where JupyterLab's ↑ and Enter shortcuts would apply

        page.keyboard.press("ArrowDown")
        assert highlighted(page) == ["code_review"]
        page.keyboard.press("ArrowDown")
        assert highlighted(page) == ["describe_chart"]
        page.keyboard.press("ArrowUp")
        assert highlighted(page) == ["code_review"]
        assert open_forms(page) == 0  # moving opens nothing
        wait_for_focus(page, SEARCH)
        assert notebook_state(page) == before  # ↑ did not move the notebook's active cell
        page.screenshot(path=str(ARTIFACTS / "picker-keyboard-highlight.png"))

        page.keyboard.press("Enter")
        page.wait_for_selector(".mcp-prompt-picker .mcp-prompt-form", timeout=STEP)
        assert "examples:code_review" in page.inner_text(".mcp-prompt-picker .mcp-prompt-form")
        assert notebook_state(page) == before  # Enter put no cell into edit mode

        # In a list, the keys stay there too.
        page.locator(".mcp-picker-list select").first.focus()
        page.keyboard.press("ArrowUp")
        page.keyboard.press("Escape")
        wait_for_focus(page, SEARCH)
        assert highlighted(page) == []
        assert notebook_state(page) == before

        # A search that leaves one prompt: Enter opens it.
        page.keyboard.type("quarterly")  # a word of describe_chart's description only
        page.wait_for_function("document.querySelectorAll('.mcp-picker-list option').length === 1", timeout=STEP)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "document.querySelector('.mcp-prompt-picker .mcp-prompt-form') && document.querySelector("
            "'.mcp-prompt-picker .mcp-prompt-form').innerText.includes('examples:describe_chart')",
            timeout=STEP,
        )
        assert notebook_state(page) == before
        page.screenshot(path=str(ARTIFACTS / "picker-keyboard-opened.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "picker-keyboard-failure.png"), full_page=True)
        raise


CODE, FOCUS = ".mcp-field-code input", ".mcp-field-focus input"


def test_enter_takes_the_only_suggestion_and_the_list_is_gone_after_rendering(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/form_keyboard_in_lab.ipynb?reset", "form_keyboard_in_lab.ipynb")
        page.wait_for_selector(f"{FOCUS}[data-mcp-combobox]", timeout=STEP)
        page.locator(CODE).click()
        page.keyboard.type("print(1)")
        before = notebook_state(page)

        page.locator(FOCUS).click()
        page.keyboard.press("Control+A")
        page.keyboard.type("sec")
        page.wait_for_function(
            "(() => { const o = document.querySelectorAll('.mcp-combobox-list .mcp-combobox-option');"
            " return o.length === 1 && o[0].textContent === 'security'; })()",
            timeout=STEP,
        )
        assert active_suggestion(page) == "security"  # the only match is highlighted
        page.screenshot(path=str(ARTIFACTS / "form-enter-suggestion.png"))
        page.keyboard.press("Enter")  # takes it
        wait_for_value(page, FOCUS, "security")
        assert shown_suggestions(page) == []

        page.keyboard.press("Enter")  # the last field: renders
        page.wait_for_function(
            "document.querySelector('.mcp-form-output') && "
            "document.querySelector('.mcp-form-output').innerText.includes('security')",
            timeout=STEP,
        )
        assert "focusing on sec " not in page.inner_text(".mcp-form-output")
        assert shown_suggestions(page) == []  # no list left over the result
        assert notebook_state(page) == before  # Enter stayed in the form
        page.screenshot(path=str(ARTIFACTS / "form-enter-rendered.png"), full_page=True)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "form-enter-failure.png"), full_page=True)
        raise
