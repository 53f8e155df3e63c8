"""The prompts panel of mcp-notebook's JupyterLab extension and the cell toolbar's "Publish as prompt".

Lab starts as in test_prompts_extension.py: fresh, default settings, the extension from the wheel, no
jupyterlab-lsp. The panel lists every prompt the user can reach, with search and a form per prompt
(values completed by the server, required marks, errors that say what to do) that renders into a new
cell or onto the clipboard; for the open notebook it shows the cells served after the last save and
the notebook's format warnings. The toolbar button tags a cell under a name the server's naming rules accept.

Screenshots go to test-artifacts/browser/ (`lab-panel-*.png`); docs/images/ holds copies of the good ones.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from browser_steps import STEP, run_all_cells
from lab_harness import ARTIFACTS, Lab, chromium_page
from test_prompts_extension import open_cells, prompts_lab, shoot

__all__ = ["prompts_lab"]  # the module's Lab: the extension from the wheel, no jupyterlab-lsp

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PUBLISH = "publish_me.ipynb"
PANEL = "#mcp-notebook-prompts"


@pytest.fixture
def page(prompts_lab: Lab, chromium_path: str) -> Iterator[Any]:
    """A fresh Chromium page (1280×1000) on this module's Lab only."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(chromium_path) as page:
        yield page


def open_panel(page: Any) -> Any:
    page.locator(".jp-SideBar [data-id='mcp-notebook-prompts']").click()
    panel = page.locator(PANEL)
    panel.wait_for(timeout=STEP)
    return panel


def test_the_toolbar_publishes_a_cell_and_the_panel_shows_it_served_after_the_save(page: Any, prompts_lab: Lab) -> None:
    try:
        open_cells(page, prompts_lab, PUBLISH)
        panel = open_panel(page)
        panel.get_by_text("No cell is published").wait_for(timeout=STEP)
        shoot(page, "lab-panel-nothing-published.png", f"{PANEL} .jp-mcp-notebook")
        page.locator(".jp-Notebook .jp-Cell").first.click()
        button = page.locator(".jp-Cell.jp-mod-active .jp-cell-toolbar [data-command='mcp-notebook:publish-cell']")
        button.wait_for(timeout=STEP)
        page.locator(".jp-Cell.jp-mod-active .jp-RenderedMarkdown h1").wait_for(timeout=STEP)
        button.hover()
        shoot(page, "lab-toolbar-button.png", ".jp-Cell.jp-mod-active")
        button.click()
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=STEP)
        name = dialog.locator("input")
        assert name.input_value() == "Greeting"  # the cell's first heading, as a first guess
        name.fill("greet everyone")
        dialog.locator("button.jp-mod-accept").click()
        # The server's naming rules say no, and why, and suggest a name.
        page.wait_for_function(
            "() => document.querySelector('.jp-Dialog') && document.querySelector('.jp-Dialog input').value"
            " === 'greet_everyone'",
            timeout=STEP,
        )
        assert (
            '"greet everyone" cannot be published: A prompt name is 1 to 64' in page.locator(".jp-Dialog").inner_text()
        )
        assert "(no spaces)" in page.locator(".jp-Dialog").inner_text()
        shoot(page, "lab-publish-dialog.png", ".jp-Dialog-content")
        page.locator(".jp-Dialog button.jp-mod-accept").click()
        page.locator(".jp-Dialog").wait_for(state="detached", timeout=STEP)
        # Tagged, not saved yet: the panel says what the save will serve.
        pending = panel.locator(".jp-mcp-pending[data-pending='greet_everyone']")
        pending.wait_for(timeout=STEP)
        assert pending.inner_text().split() == ["/jupyter:greet_everyone", "served", "once", "you", "save"]
        assert panel.locator(".jp-mcp-published-item[data-prompt='greet_everyone']").count() == 0
        shoot(page, "lab-panel-pending.png", f"{PANEL} .jp-mcp-notebook")
        page.keyboard.press("Control+s")
        served = panel.locator(".jp-mcp-published-item[data-prompt='greet_everyone']")
        served.wait_for(timeout=STEP)
        assert served.inner_text().split() == ["/jupyter:greet_everyone", "cell", "1"]
        assert pending.count() == 0
        saved = json.loads((prompts_lab.root / PUBLISH).read_text())
        assert saved["cells"][0]["metadata"]["mcp"] == {"prompt": "greet_everyone"}
        # The server serves it: the prompt lists have it (the panel asked again after the save).
        panel.locator(".jp-mcp-prompt[data-prompt='jupyter:greet_everyone']").wait_for(timeout=STEP)
        shoot(page, "lab-panel-published.png", f"{PANEL} .jp-mcp-notebook", ".jp-Notebook .jp-Cell")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-publish-failure.png"), full_page=True)
        raise


def test_the_panel_lists_prompts_with_search_and_its_form_renders_into_a_new_cell_or_the_clipboard(
    page: Any, prompts_lab: Lab
) -> None:
    try:
        open_cells(page, prompts_lab, "code_review.ipynb")
        panel = open_panel(page)
        panel.locator(".jp-mcp-published-item[data-prompt='code_review']").wait_for(timeout=STEP)
        panel.locator(".jp-mcp-search").fill("chart")
        page.wait_for_function(
            "() => document.querySelectorAll('#mcp-notebook-prompts .jp-mcp-prompt').length === 1",
            timeout=STEP,
        )
        assert panel.locator(".jp-mcp-prompt").get_attribute("data-prompt") == "jupyter:describe_chart"
        panel.locator(".jp-mcp-search").fill("no such prompt")
        panel.get_by_text('No prompt matches "no such prompt".').wait_for(timeout=STEP)
        panel.locator(".jp-mcp-search").fill("code_review")
        row = panel.locator(".jp-mcp-prompt[data-prompt='jupyter:code_review']")
        row.locator(".jp-mcp-prompt-head").click()
        form = row.locator(".jp-mcp-form")
        # The required argument is marked; rendering without it says what to do, beside the field, and asks nothing.
        code = form.locator(".jp-mcp-field", has=page.locator("input[name='code']"))
        assert code.locator(".jp-mcp-required").inner_text() == "*"
        assert form.locator("input[name='code']").get_attribute("placeholder") == "required"
        assert form.locator("input[name='focus']").get_attribute("placeholder").startswith("optional")
        cells = page.locator(".jp-Notebook .jp-Cell").count()
        form.locator(".jp-mcp-to-cell").click()
        assert code.locator(".jp-mcp-field-error").inner_text() == "Required: fill this in."
        assert form.locator(".jp-mcp-status").inner_text() == "Fill in the fields marked *, then try again."
        assert page.evaluate("() => document.activeElement.name") == "code"
        shoot(page, "lab-panel-required.png", PANEL)
        assert page.locator(".jp-Notebook .jp-Cell").count() == cells

        form.locator("input[name='code']").fill("print(2)")
        assert code.locator(".jp-mcp-field-error").inner_text() == ""
        assert form.locator(".jp-mcp-status").inner_text() == ""  # filled in: nothing left to say
        # New lists (here: asked for again) draw the panel again; the open form keeps what was typed, and the focus.
        page.evaluate(
            """() => {
                document.querySelectorAll('#mcp-notebook-prompts .jp-mcp-server').forEach((s) => s.dataset.old = '1');
                document.querySelector('#mcp-notebook-prompts .jp-mcp-refresh').click();
            }"""
        )
        page.wait_for_function(
            "() => !document.querySelector('#mcp-notebook-prompts .jp-mcp-server[data-old]')", timeout=STEP
        )
        assert form.locator("input[name='code']").input_value() == "print(2)"
        assert page.evaluate("() => document.activeElement.name") == "code"
        language = form.locator("input[name='language']")
        language.focus()  # the server's values for the field, as soon as it is entered, in a list under it
        values = form.locator("input[name='language'] + .jp-mcp-values")
        values.locator("li", has_text="JavaScript").wait_for(timeout=STEP)
        language.press_sequentially("G")
        page.wait_for_function(
            "(s) => Array.from(document.querySelectorAll(s), (e) => e.textContent).join() === 'Go'",
            arg=f"{PANEL} input[name='language'] + .jp-mcp-values li",
            timeout=STEP,
        )
        shoot(
            page,
            "lab-panel-form.png",
            f"{PANEL} .jp-mcp-panel-header",
            f"{PANEL} .jp-mcp-notebook",
            f"{PANEL} .jp-mcp-form",
        )
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")  # picks the value, does not render
        assert language.input_value() == "Go"
        assert values.is_hidden()
        form.locator(".jp-mcp-to-cell").click()
        page.wait_for_function(
            """(n) => {
                const notebook = window.jupyterapp.shell.currentWidget.content;
                const source = notebook.activeCell.model.sharedModel.getSource();
                return notebook.widgets.length === n + 1 && notebook.activeCell.model.type === 'markdown'
                    && source.includes('careful reviewer of Go code') && source.includes('print(2)');
            }""",
            arg=cells,
            timeout=STEP,
        )
        assert form.locator(".jp-mcp-status").inner_text() == "Inserted into code_review.ipynb."

        form.locator("input[name='language']").fill("Rust")
        form.locator(".jp-mcp-copy").click()
        form.locator(".jp-mcp-status", has_text="Copied to the clipboard.").wait_for(timeout=STEP)
        copied = page.evaluate("navigator.clipboard.readText()")
        assert "careful reviewer of Rust code" in copied and "print(2)" in copied
        assert page.locator(".jp-Notebook .jp-Cell").count() == cells + 1
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-panel-failure.png"), full_page=True)
        raise


def prompt_rows(section: Any) -> list[str]:
    rows: list[str] = section.locator(".jp-mcp-prompt").evaluate_all("(rows) => rows.map((r) => r.dataset.prompt)")
    return rows


def test_the_panel_lists_kernels_and_untrusted_servers_magics_only_when_asked_and_a_notebook_s_warnings(
    page: Any, prompts_lab: Lab
) -> None:
    root = prompts_lab.root
    marker = root.parent / "STARTED"
    command = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"project_tools": command}}), encoding="utf-8")
    kernelspec = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    odd = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": kernelspec,
        "cells": [
            {"id": "ask", "cell_type": "markdown", "metadata": {"tags": ["prompt:ask_twice"]}, "source": "Ask {{q}}"},
            {"id": "odd", "cell_type": "markdown", "metadata": {"mcp": "yes"}, "source": "Odd metadata."},
        ],
    }
    (root / "odd_cells.ipynb").write_text(json.dumps(odd), encoding="utf-8")
    serving = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": kernelspec,
        "cells": [
            {
                "id": f"c{i}",
                "cell_type": "code",
                "metadata": {},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
            for i, source in enumerate(
                ["%load_ext mcp_notebook", "%%prompt explain\nExplain the columns of {{table}}.", "%mcp serve --magics"]
            )
        ],
    }
    (root / "kernel_magics.ipynb").write_text(json.dumps(serving), encoding="utf-8")
    try:
        page.goto(f"{prompts_lab.url}/lab?reset")
        open_panel(page).get_by_text("Open a notebook to see which of its cells are served as prompts.").wait_for(
            timeout=STEP
        )
        run_all_cells(page, f"{prompts_lab.url}/lab/tree/kernel_magics.ipynb?reset", "kernel_magics.ipynb")
        panel = open_panel(page)
        # The kernel serving its prompts (%mcp serve) appears while the panel is open; its magics stay out.
        kernel = panel.locator(".jp-mcp-server[data-kind='kernel']")
        kernel.locator(".jp-mcp-prompt").first.wait_for(timeout=STEP)
        assert [row.split(":", 1)[1] for row in prompt_rows(kernel)] == ["explain"]
        assert kernel.locator(".jp-mcp-kind").inner_text() == "kernel"
        # The project's server is listed, not started, with what to do.
        untrusted = panel.locator(".jp-mcp-server[data-server='project_tools']")
        untrusted.wait_for(timeout=STEP)
        assert untrusted.get_attribute("data-state") == "not-trusted"
        assert untrusted.locator(".jp-mcp-state").inner_text() == "not trusted"
        assert untrusted.locator(".jp-mcp-command").inner_text() == f"mcp-notebook trust {root / '.mcp.json'}"
        assert not marker.exists()
        shoot(page, "lab-panel-servers.png", f"{PANEL} .jp-mcp-list")

        toggle = panel.locator(".jp-mcp-magics input")
        toggle.check()
        kernel.locator(".jp-mcp-prompt[data-magic]").first.wait_for(timeout=STEP)
        with_magics = prompt_rows(kernel)
        shoot(
            page, "lab-panel-magics.png", f"{PANEL} .jp-mcp-panel-header", f"{PANEL} .jp-mcp-server[data-kind='kernel']"
        )
        assert len(with_magics) > 1 and any(row.endswith(":explain") for row in with_magics)
        toggle.uncheck()
        page.wait_for_function(f"() => !document.querySelector('{PANEL} .jp-mcp-prompt[data-magic]')", timeout=STEP)
        assert [row.split(":", 1)[1] for row in prompt_rows(kernel)] == ["explain"]

        # A notebook's format warnings, with the cell they are about.
        open_cells(page, prompts_lab, "odd_cells.ipynb")
        panel = open_panel(page)
        panel.locator(".jp-mcp-published-item[data-prompt='ask_twice']").wait_for(timeout=STEP)
        warning = panel.locator(".jp-mcp-warnings .jp-mcp-warning")
        warning.wait_for(timeout=STEP)
        assert "cell 2" in warning.inner_text() and "metadata.mcp must be an object" in warning.inner_text()
        warning.click()  # goes to the cell
        page.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.content.activeCellIndex === 1", timeout=STEP
        )
        shoot(page, "lab-panel-warnings.png", f"{PANEL} .jp-mcp-notebook")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "lab-panel-servers-failure.png"), full_page=True)
        raise
    finally:
        (root / ".mcp.json").unlink()
