"""Keys typed in a form or the picker never reach the notebook's shortcuts, in JupyterLab.

With the focus on each kind of part of a form (a text field, a multi-line
field, the `¶` toggle, a number field, a checkbox, a drop-down, the Render and
Copy buttons) and of the picker (its search box, a list of prompts), the test
types every single-key command of the notebook (`a b c d m r y x z v o`, the
same with Shift, Ctrl+A then `r`, and `d d`): the notebook's cells, their types,
sources and outputs stay as they were, and the focus stays in the form. Tab goes
from field to field, one Tab from the form's cell reaches the form, and Escape
gives the focus back to the notebook without changing it.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, run_all_cells, shown_suggestions, wait_for_focus, wait_for_suggestions
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "keys_in_lab.ipynb"
FORM_CELL = 3  # `%mcp form examples:code_review`
REVIEW = f".jp-Notebook .jp-Cell:nth-child({FORM_CELL + 1}) .mcp-prompt-form"
TYPED = ".mcp-prompt-form:has(.mcp-field-tone)"
PICKER = ".mcp-prompt-picker"

# The notebook's single-key commands in command mode (insert, copy, cut, paste, delete, change the type,
# hide outputs), each with Shift too (Shift+M merges cells, Shift+V pastes above), then select all and act.
KEYS = [
    *"abcdmryxzvo",
    *(f"Shift+{key.upper()}" for key in "abcdmryxzvo"),
    "Control+a",
    "r",
    "Control+a",
    "d",
    "d",
]

SNAPSHOT = """() => {
    const notebook = window.jupyterapp.shell.currentWidget.content;
    return notebook.widgets.map((cell) => ({
        type: cell.model.type,
        source: cell.model.sharedModel.getSource(),
        outputs: cell.model.type === 'code'
            ? cell.model.outputs.toJSON().map((o) => o.output_type + ':' + Object.keys(o.data || {}).sort().join(','))
            : [],
        hidden: Boolean(cell.outputHidden),
    }));
}"""

INSIDE = "(selector) => Boolean(document.activeElement && document.activeElement.closest(selector))"


def notebook_state(page: Any) -> list[dict[str, Any]]:
    state: list[dict[str, Any]] = page.evaluate(SNAPSHOT)
    return state


def type_every_command(page: Any, part: str, inside: str, before: list[dict[str, Any]]) -> None:
    """Focus `part` and type every notebook command; the notebook must not change, the focus must stay."""
    page.locator(part).first.focus()
    assert page.evaluate("(part) => document.activeElement === document.querySelector(part)", part), part
    for key in KEYS:
        page.keyboard.press(key)
        assert page.evaluate(INSIDE, inside), f"{key} typed on {part} took the focus out of the form"
    assert notebook_state(page) == before, f"a key typed on {part} changed the notebook"


def test_no_key_typed_in_a_form_or_the_picker_changes_the_notebook(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/{NOTEBOOK}?reset", NOTEBOOK)
        page.wait_for_selector(f"{REVIEW} .mcp-field-focus input[data-mcp-combobox]", timeout=STEP)
        page.wait_for_selector(f"{TYPED} .mcp-field-tone select", timeout=STEP)
        page.wait_for_selector(f"{PICKER} .mcp-picker-list select", timeout=STEP)
        page.wait_for_function("document.querySelector('.jp-Notebook').innerText.includes('an output that must stay')")
        page.wait_for_function(
            "document.querySelectorAll('.jp-Notebook .jp-Cell:last-child .jp-OutputArea-output').length === 1"
        )
        before = notebook_state(page)
        assert [cell["type"] for cell in before] == ["markdown", *["code"] * 7]

        # The kinds of parts of a form and of the picker, each typed on in turn.
        parts = [
            (f"{REVIEW} .mcp-field-language input", REVIEW, "text-field"),
            (f"{REVIEW} .mcp-field-language button.widget-toggle-button", REVIEW, "multiline-toggle"),
            (f"{REVIEW} .mcp-render", REVIEW, "render-button"),
            (f"{REVIEW} .mcp-copy-code", REVIEW, "copy-button"),
            (f"{TYPED} .mcp-field-days input", TYPED, "number-field"),
            (f"{TYPED} .mcp-field-detailed input", TYPED, "checkbox"),
            (f"{TYPED} .mcp-field-tone select", TYPED, "drop-down"),
            (f"{PICKER} .mcp-picker-list select", PICKER, "picker-list"),  # before a search empties it
            (f"{PICKER} .mcp-picker-search input", PICKER, "picker-search"),
        ]
        for part, inside, name in parts:
            type_every_command(page, part, inside, before)
            page.screenshot(path=str(ARTIFACTS / f"keys-{name}.png"))

        # A multi-line field: opened by its toggle, typed in like any other.
        page.locator(f"{REVIEW} .mcp-field-code button.widget-toggle-button").click()
        page.wait_for_selector(f"{REVIEW} .mcp-field-code textarea:visible", timeout=STEP)
        type_every_command(page, f"{REVIEW} .mcp-field-code textarea", REVIEW, before)
        page.screenshot(path=str(ARTIFACTS / "keys-multiline-field.png"))
        page.locator(f"{REVIEW} .mcp-field-code button.widget-toggle-button").click()
        page.wait_for_selector(f"{REVIEW} .mcp-field-code input:visible", timeout=STEP)

        # Escape gives the focus back to the notebook: the form's cell, active, in command mode; nothing changed.
        page.locator(f"{REVIEW} .mcp-field-focus input").focus()
        wait_for_suggestions(page, ["bugs", "style", "performance", "security", "tests"])
        page.keyboard.press("Escape")  # the suggestions open on focus close first
        assert shown_suggestions(page) == []
        assert page.evaluate(INSIDE, REVIEW)
        page.keyboard.press("Escape")
        page.wait_for_function(
            "(index) => document.activeElement === window.jupyterapp.shell.currentWidget.content.widgets[index].node",
            arg=FORM_CELL,
            timeout=STEP,
        )
        mode = page.evaluate(
            "() => { const n = window.jupyterapp.shell.currentWidget.content; return [n.mode, n.activeCellIndex]; }"
        )
        assert mode == ["command", FORM_CELL]
        assert notebook_state(page) == before
        page.screenshot(path=str(ARTIFACTS / "keys-escaped-to-the-notebook.png"))

        # One Tab from the notebook reaches the form's first field; Tab goes on field to field, never to a toggle.
        page.keyboard.press("Tab")
        wait_for_focus(page, f"{REVIEW} .mcp-field-code input")
        page.keyboard.press("Tab")
        wait_for_focus(page, f"{REVIEW} .mcp-field-language input")
        page.keyboard.press("Tab")
        wait_for_focus(page, f"{REVIEW} .mcp-field-focus input")
        page.keyboard.press("Tab")
        wait_for_focus(page, f"{REVIEW} .mcp-render")
        assert notebook_state(page) == before
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "keys-failure.png"), full_page=True)
        raise
