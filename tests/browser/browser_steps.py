"""What a user does in the browser, the same in JupyterLab and in Jupyter Notebook 7.

Both front ends are the same JupyterLab application underneath (`window.jupyterapp`
once the server exposes it, its notebook panel as the current widget), so one
set of steps drives either: open a notebook, run all its cells, fill in a form.
Each step waits on the page with a deadline; nothing sleeps.
"""

from __future__ import annotations

from typing import Any

from lab_harness import ARTIFACTS

__all__ = [
    "STEP",
    "active_suggestion",
    "check_describe_chart_form",
    "run_all_cells",
    "set_theme",
    "shown_suggestions",
    "wait_for_focus",
    "wait_for_outputs",
    "wait_for_suggestions",
    "wait_for_value",
]

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


def shown_suggestions(page: Any) -> list[str]:
    """The suggestions in the drop-down that is open now (none when it is closed)."""
    texts: list[str] = page.evaluate(
        """() => Array.from(document.querySelectorAll('.mcp-combobox-list'))
            .filter((list) => list.style.display !== 'none')
            .flatMap((list) => Array.from(list.querySelectorAll('.mcp-combobox-option'), (o) => o.textContent))"""
    )
    return texts


def wait_for_suggestions(page: Any, expected: list[str]) -> None:
    """Wait until the open drop-down shows exactly `expected`, in order."""
    page.wait_for_function(
        """(expected) => {
            const shown = Array.from(document.querySelectorAll('.mcp-combobox-list'))
                .filter((list) => list.style.display !== 'none')
                .flatMap((list) => Array.from(list.querySelectorAll('.mcp-combobox-option'), (o) => o.textContent));
            return JSON.stringify(shown) === JSON.stringify(expected);
        }""",
        arg=expected,
        timeout=STEP,
    )


def active_suggestion(page: Any) -> str | None:
    """The suggestion ↑/↓ moved to, as the input announces it (`aria-activedescendant`)."""
    text: str | None = page.evaluate(
        """() => {
            const input = document.activeElement;
            const id = input && input.getAttribute('aria-activedescendant');
            const option = id && document.getElementById(id);
            return option ? option.textContent : null;
        }"""
    )
    return text


def wait_for_focus(page: Any, selector: str) -> None:
    """Wait until the keyboard's focus is in the element `selector` finds."""
    page.wait_for_function(
        "(selector) => document.activeElement === document.querySelector(selector)", arg=selector, timeout=STEP
    )


def wait_for_value(page: Any, selector: str, value: str) -> None:
    page.wait_for_function(
        "([selector, value]) => document.querySelector(selector).value === value", arg=[selector, value], timeout=STEP
    )


def check_describe_chart_form(page: Any, shots: str) -> None:
    """Use the form of `examples:describe_chart` as a user would and check what the page shows.

    Finds the audience filled with its default, clears it, types the start of
    another one and sees those that match, clicks one, renders, and finds the
    rendered text and chart image in the form. Saves the screenshots
    `<shots>-suggestions.png` and `<shots>-rendered.png`.
    """
    page.wait_for_selector(".mcp-prompt-form", timeout=STEP)
    assert "Describe a chart" in page.inner_text(".mcp-prompt-form")

    audience = page.locator(".mcp-field-audience input")
    page.wait_for_selector(".mcp-field-audience input[data-mcp-combobox]", timeout=STEP)  # the script took it
    audience.click()
    assert audience.input_value() == "a general audience"  # the form starts with the argument's default
    audience.fill("")
    audience.press_sequentially("e", delay=50)  # what the user types instead
    wait_for_suggestions(page, ["engineers", "executives"])
    offered = page.locator(".mcp-field-audience datalist option")
    assert [offered.nth(i).get_attribute("value") for i in range(offered.count())] == ["engineers", "executives"]
    page.screenshot(path=str(ARTIFACTS / f"{shots}-suggestions.png"))

    page.locator(".mcp-combobox-list .mcp-combobox-option", has_text="executives").click()
    wait_for_value(page, ".mcp-field-audience input", "executives")

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


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab's theme ("JupyterLab Light", "JupyterLab Dark") and wait until the page shows it."""
    page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
    light = "true" if "Light" in theme else "false"
    page.wait_for_function(
        f"document.body.dataset.jpThemeLight === '{light}' && document.body.dataset.jpThemeName === {theme!r}",
        timeout=STEP,
    )


def wait_for_outputs(page: Any, count: int) -> None:
    """Wait until the notebook shows `count` rendered Markdown outputs (the conversations)."""
    page.wait_for_function(
        "(count) => document.querySelectorAll('.jp-OutputArea-output.jp-RenderedMarkdown').length >= count",
        arg=count,
        timeout=STEP,
    )
