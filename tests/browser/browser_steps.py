"""What a user does in the browser, the same in JupyterLab and in Jupyter Notebook 7.

Both front ends are the same JupyterLab application underneath (`window.jupyterapp`
once the server exposes it, its notebook panel as the current widget), so one
set of steps drives either: open a notebook, run all its cells, fill in a form.
Each step waits on the page with a deadline; nothing sleeps.
"""

from __future__ import annotations

from typing import Any

from lab_harness import ARTIFACTS

__all__ = ["STEP", "check_describe_chart_form", "run_all_cells"]

STEP = 60_000  # ms allowed for each step; a whole test takes seconds when things work


def run_all_cells(page: Any, address: str, notebook: str) -> None:
    """Open `address` (a page showing `notebook`) and run all the notebook's cells once its kernel is ready."""
    page.goto(address)
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


def check_describe_chart_form(page: Any, shots: str) -> None:
    """Use the form of `examples:describe_chart` as a user would and check what the page shows.

    Finds the audience filled with its default, types the start of another
    one instead, sees the server's suggestions, picks one,
    renders, and finds the rendered text and chart image in the form. Saves the
    screenshots `<shots>-suggestions.png` and `<shots>-rendered.png`.
    """
    page.wait_for_selector(".mcp-prompt-form", timeout=STEP)
    assert "Describe a chart" in page.inner_text(".mcp-prompt-form")

    audience = page.locator(".mcp-field-audience input")
    audience.click()
    assert audience.input_value() == "a general audience"  # the form starts with the argument's default
    audience.press("Control+a")
    audience.press("Backspace")
    audience.press_sequentially("e", delay=50)  # what the user types instead
    page.wait_for_selector(".mcp-field-audience .mcp-suggestions option", timeout=STEP)
    options = page.locator(".mcp-field-audience .mcp-suggestions option").all_inner_texts()
    assert options == ["engineers", "executives"]
    offered = page.locator(".mcp-field-audience datalist option")
    assert [offered.nth(i).get_attribute("value") for i in range(offered.count())] == options
    page.screenshot(path=str(ARTIFACTS / f"{shots}-suggestions.png"))

    page.locator(".mcp-field-audience .mcp-suggestions select").select_option("executives")
    page.wait_for_function("document.querySelector('.mcp-field-audience input').value === 'executives'", timeout=STEP)

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
    page.screenshot(path=str(ARTIFACTS / f"{shots}-rendered.png"), full_page=True)
