"""A form for a FastMCP server's typed prompt arguments, in JupyterLab in headless Chromium.

FastMCP describes each non-string argument with a JSON schema in its
description and parses what it receives as JSON. The form shows a number
field, a checkbox and a drop-down for them, never the schema text, and what it
sends renders: the server's own text says which values it received, typed.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, run_all_cells
from lab_harness import ARTIFACTS, Lab

pytest.importorskip("fastmcp", reason="the typed server is a FastMCP server (pip install -e '.[test]')")

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def field(name: str) -> str:
    return f".mcp-prompt-form .mcp-field-{name}"


def test_typed_arguments_get_typed_widgets_and_reach_the_server_as_it_expects(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/typed_form_in_lab.ipynb?reset", "typed_form_in_lab.ipynb")
        page.wait_for_selector(field("tone") + " select", timeout=STEP)
        form = page.locator(".mcp-prompt-form")

        assert page.locator(field("days") + " input").get_attribute("type") == "number"
        assert page.locator(field("budget") + " input").get_attribute("type") == "number"
        assert page.locator(field("detailed") + " input").get_attribute("type") == "checkbox"
        tone = page.locator(field("tone") + " select option").all_inner_texts()
        assert tone == ["—", "formal", "casual"]
        assert page.locator(field("tags") + " input").get_attribute("placeholder") == "optional JSON list"
        text = form.inner_text()
        assert "JSON schema" not in text and "Encode non-string" not in text  # the note for machines is not shown
        assert "Where to go" in text and "whole number" in text
        page.screenshot(path=str(ARTIFACTS / "typed-form.png"))

        page.locator(field("topic") + " input").fill("Lisbon")
        page.locator(field("days") + " input").fill("5")
        page.locator(field("days") + " input").press("Tab")
        page.locator(field("detailed") + " input").check()
        page.locator(field("tone") + " select").select_option("formal")
        page.locator(field("tags") + " input").fill('["food", "tiles"]')
        page.locator(".mcp-render").click()

        page.wait_for_function(
            "document.querySelector('.mcp-form-output') && "
            "document.querySelector('.mcp-form-output').innerText.includes('Plan Lisbon')",
            timeout=STEP,
        )
        rendered = page.inner_text(".mcp-form-output")
        # The budget was left alone, so the server used its own default.
        assert "Plan Lisbon for 5 days on 100 euros, detailed=True, tone=formal, tags=['food', 'tiles']." in rendered

        page.locator(".mcp-copy-code").click()
        page.wait_for_selector(".mcp-copy-outcome", timeout=STEP)
        code = '%mcp get typed:plan_trip topic=Lisbon days=5 detailed=true tone=formal tags=\'["food", "tiles"]\''
        assert page.locator(".mcp-code textarea").input_value() == code
        assert page.inner_text(".mcp-copy-outcome") == "Copied to the clipboard."
        assert page.evaluate("navigator.clipboard.readText()") == code
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "typed-form-failure.png"), full_page=True)
        raise


def test_a_servers_validation_error_is_one_line_with_its_details_folded(page: Any, lab: Lab) -> None:
    try:
        run_all_cells(page, f"{lab.url}/lab/tree/typed_form_in_lab.ipynb?reset", "typed_form_in_lab.ipynb")
        page.wait_for_selector(field("topic") + " input", timeout=STEP)
        page.locator(field("topic") + " input").fill("ab")  # shorter than the server's minimum of three letters
        page.locator(".mcp-render").click()

        page.wait_for_selector(".mcp-form-status .mcp-error", timeout=STEP)
        status = page.locator(".mcp-form-status")
        details = status.locator("details")
        assert details.count() == 1
        assert not details.evaluate("d => d.open")  # folded
        summary_line = status.locator(".mcp-error > div").first.inner_text()
        assert summary_line.startswith("Rendering failed: typed: Could not convert argument 'topic' with value 'ab'")
        assert "\n" not in summary_line and len(summary_line) < 240
        assert "FieldInfo" not in summary_line and "errors.pydantic.dev" not in summary_line
        assert "errors.pydantic.dev" not in status.inner_text()  # the details stay folded away
        assert "The server did not accept this value" in page.inner_text(field("topic"))
        page.screenshot(path=str(ARTIFACTS / "typed-form-error.png"))

        details.locator("summary").click()
        page.wait_for_function("document.querySelector('.mcp-form-status details').open", timeout=STEP)
        assert "errors.pydantic.dev" in status.inner_text()  # nothing is lost
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "typed-form-error-failure.png"), full_page=True)
        raise
