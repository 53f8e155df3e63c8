"""`%mcp form` in the Jupyter Notebook 7 UI, driven in headless Chromium as a user would.

Notebook 7 is served by the same server as the JupyterLab tests (it is an
extension of that jupyter server), at `/notebooks/<path>`: one server session
covers both front ends. The fixture notebook is its own, so its kernel is not
the one a Lab test already ran.
"""

from __future__ import annotations

from typing import Any

import pytest
from browser_steps import STEP, check_describe_chart_form, run_all_cells
from lab_harness import ARTIFACTS, Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_prompt_form_in_notebook7_suggests_while_typing_and_renders_text_and_image(notebook7: Lab, page: Any) -> None:
    try:
        run_all_cells(page, f"{notebook7.url}/notebooks/form_in_notebook7.ipynb", "form_in_notebook7.ipynb")
        # The page is Notebook 7's own single-document UI, not JupyterLab showing the same file.
        page.wait_for_function("window.jupyterapp.name === 'Jupyter Notebook'", timeout=STEP)
        check_describe_chart_form(page, shots="notebook7-form")
    except BaseException:
        page.screenshot(path=str(ARTIFACTS / "notebook7-form-failure.png"), full_page=True)
        raise
