"""A prompt form used from the keyboard in JupyterLab: suggestions on focus, ↑/↓, Enter, defaults filled.

The form of `code_review` (a required `code`, a `language` and a `focus` with
defaults and static completions) is filled in with the keyboard only, in
headless Chromium: Enter goes from field to field and renders from the last,
the suggestions open as an overlay on focus and narrow as you type, and the
form's layout does not move while they come and go. Escape gives the focus
back to the notebook, and Tab comes back into the form, field after field.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import (
    STEP,
    active_suggestion,
    run_all_cells,
    shown_suggestions,
    wait_for_focus,
    wait_for_suggestions,
    wait_for_value,
)
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LANGUAGES = ["Python", "JavaScript", "TypeScript", "Rust", "Go", "SQL"]
FOCUSES = ["bugs", "style", "performance", "security", "tests"]
CODE, LANGUAGE, FOCUS = (f".mcp-field-{name} input" for name in ("code", "language", "focus"))


def box(page: Any, selector: str) -> dict[str, float]:
    found: dict[str, float] = page.locator(selector).bounding_box()
    return found


def test_a_form_is_filled_in_and_rendered_with_the_keyboard_alone(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/form_keyboard_in_lab.ipynb?reset", "form_keyboard_in_lab.ipynb")
        page.wait_for_selector(f"{FOCUS}[data-mcp-combobox]", timeout=STEP)

        # The defaults are there before the user does anything.
        assert page.locator(LANGUAGE).input_value() == "Python"
        assert page.locator(FOCUS).input_value() == "bugs"
        assert page.locator(CODE).input_value() == ""
        form_before = box(page, ".mcp-prompt-form")
        render_before = box(page, ".mcp-render")

        page.locator(CODE).click()
        page.keyboard.type("total = sum(xs) / len(xs)")
        assert shown_suggestions(page) == []  # the code has no suggestions: nothing opens
        page.keyboard.press("Enter")

        # Enter goes on to the next field; its suggestions open on focus, all of them.
        wait_for_focus(page, LANGUAGE)
        wait_for_suggestions(page, LANGUAGES)
        assert box(page, ".mcp-prompt-form") == form_before  # an overlay: nothing under it moved
        assert box(page, ".mcp-render") == render_before
        page.screenshot(path=str(ARTIFACTS / "keyboard-suggestions-on-focus.png"))

        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        assert active_suggestion(page) == "JavaScript"
        page.keyboard.press("ArrowUp")
        assert active_suggestion(page) == "Python"
        page.keyboard.press("ArrowUp")
        assert active_suggestion(page) == "SQL"  # round from the top to the bottom
        page.keyboard.press("ArrowDown")  # round from the bottom to the top
        assert active_suggestion(page) == "Python"
        page.keyboard.press("ArrowDown")
        assert active_suggestion(page) == "JavaScript"
        page.keyboard.press("Enter")  # takes the suggestion, and stays in the field
        wait_for_value(page, LANGUAGE, "JavaScript")
        assert shown_suggestions(page) == []
        wait_for_focus(page, LANGUAGE)

        page.keyboard.press("Enter")  # nothing chosen in a list: on to the next field
        wait_for_focus(page, FOCUS)
        wait_for_suggestions(page, FOCUSES)
        page.keyboard.press("Control+A")
        page.keyboard.type("s")
        wait_for_suggestions(page, ["style", "security"])  # what the server suggests for "s"
        assert active_suggestion(page) == "style"  # typing highlights the first match
        page.keyboard.press("ArrowDown")
        assert active_suggestion(page) == "security"
        page.keyboard.press("ArrowUp")
        page.keyboard.press("Enter")
        wait_for_value(page, FOCUS, "style")
        page.keyboard.press("Escape")  # no list open: the focus goes back to the notebook, to the form's cell
        page.wait_for_function(
            "document.activeElement === document.querySelector('.mcp-prompt-form').closest('.jp-Cell')",
            timeout=STEP,
        )
        assert box(page, ".mcp-render") == render_before

        page.keyboard.press("Tab")  # one Tab from the form's cell: back in the form, field after field
        wait_for_focus(page, CODE)
        page.keyboard.press("Tab")
        wait_for_focus(page, LANGUAGE)
        page.keyboard.press("Tab")
        wait_for_focus(page, FOCUS)
        page.keyboard.press("Enter")  # in the last field: renders
        page.wait_for_function(
            "document.querySelector('.mcp-form-output') && "
            "document.querySelector('.mcp-form-output').innerText.includes('total = sum(xs) / len(xs)')",
            timeout=STEP,
        )
        output = page.inner_text(".mcp-form-output")
        assert "JavaScript" in output and "style" in output
        page.screenshot(path=str(ARTIFACTS / "keyboard-rendered.png"), full_page=True)
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "keyboard-failure.png"), full_page=True)
        raise
