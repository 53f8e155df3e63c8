"""A prompt form whose server goes away and comes back, in JupyterLab: the message has its own line, then goes.

In headless Chromium, the form of `code_review` is served over HTTP by
`mcp-notebook serve --http`, which the test stops while the form is open.
Asking for suggestions then fails: the form says so in its message line under
the fields, at full width, and no field moves (the description under `focus`
keeps its width, the input its place). The server comes back on the same port,
a render succeeds, and the message is gone.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_steps import STEP, run_all_cells
from client_harness import running_url_process
from lab_harness import ARTIFACTS, Lab, free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CODE, FOCUS = ".mcp-field-code input", ".mcp-field-focus input"
NOTICE = ".mcp-form-notice"


def box(page: Any, selector: str) -> dict[str, float]:
    found: dict[str, float] = page.locator(selector).bounding_box()
    return found


def write_notebook(path: Path, url: str, token: str) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext mcp_notebook"),
        nbformat.v4.new_code_cell(f'%mcp connect web {url} --header "Authorization: Bearer {token}"'),
        nbformat.v4.new_code_cell("%mcp form web:code_review"),
    ]
    nbformat.write(notebook, path)


def serve(lab: Lab, port: int, token_file: Path) -> Any:
    command = [str(Path(sys.executable).parent / "mcp-notebook"), "serve", "code_review.ipynb", "--http"]
    return running_url_process([*command, "--port", str(port), "--token-file", str(token_file)], cwd=lab.root)


def test_a_server_down_message_has_its_own_line_and_goes_once_the_server_answers(
    page: Any, lab: Lab, tmp_path: Path
) -> None:
    token = secrets.token_urlsafe(24)
    token_file = tmp_path / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    port = free_port()
    try:
        with serve(lab, port, token_file) as url:
            write_notebook(lab.root / "form_server_down.ipynb", url, token)
            run_all_cells(page, f"{lab.url}/lab/tree/form_server_down.ipynb?reset", "form_server_down.ipynb")
            page.wait_for_selector(f"{FOCUS}[data-mcp-combobox]", timeout=STEP)
            page.locator(CODE).click()
            page.keyboard.type("print(1)")
            page.locator(FOCUS).click()  # measured as it will be: with the keyboard's focus
            page.keyboard.press("Escape")
            field_before = box(page, ".mcp-field-focus")
            input_before = box(page, FOCUS)
            help_before = box(page, ".mcp-field-focus .mcp-field-help")
        # The server is gone now; the form asks it for suggestions.
        page.keyboard.press("Control+A")
        page.keyboard.type("se")
        page.wait_for_function(
            f"document.querySelector('{NOTICE}').innerText.includes('No suggestions for focus')", timeout=STEP
        )
        notice = page.inner_text(NOTICE)
        assert notice.startswith("No suggestions for focus: web: ")
        assert box(page, ".mcp-field-focus") == field_before  # the message is not squeezed in beside the field
        assert box(page, FOCUS) == input_before
        assert box(page, ".mcp-field-focus .mcp-field-help") == help_before
        assert "What to look at first" in page.inner_text(".mcp-field-focus")
        assert box(page, NOTICE)["width"] > help_before["width"]  # a line of the form's own, at full width
        page.keyboard.press("Escape")
        page.screenshot(path=str(ARTIFACTS / "form-server-down.png"))

        with serve(lab, port, token_file):
            page.locator(".mcp-render").click()
            page.wait_for_function(
                "document.querySelector('.mcp-form-output') && "
                "document.querySelector('.mcp-form-output').innerText.includes('print(1)')",
                timeout=STEP,
            )
            page.wait_for_function(f"document.querySelector('{NOTICE}').innerText.trim() === ''", timeout=STEP)
            assert page.locator(NOTICE).is_hidden()
            page.screenshot(path=str(ARTIFACTS / "form-server-back.png"))
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "form-server-down-failure.png"), full_page=True)
        raise
