"""Fixtures of the browser tests: a JupyterLab server and a headless Chromium page.

The stack comes from `.ci/browser-setup.sh` (Debian's chromium, JupyterLab,
Notebook 7 and Playwright in the venv; never `playwright install`). Without it
the tests skip and say what is missing. Lab runs from a temporary folder with
its own Jupyter/IPython directories, on 127.0.0.1 at a free port, and is
stopped by its own process id. The same server serves the Notebook 7 UI when
the `notebook` package is there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_harness import ARTIFACTS, NOTEBOOK7_MODULES, Lab, chromium_page, find_chromium, missing_stack, running_lab


@pytest.fixture(scope="session")
def chromium_path() -> str:
    reason = missing_stack()
    if reason is not None:
        pytest.skip(reason)
    path = find_chromium()
    assert path is not None
    return path


@pytest.fixture(scope="session")
def lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab serving a folder with the fixture notebooks and the examples they use (and nothing else)."""
    with running_lab(tmp_path_factory.mktemp("lab")) as running:
        yield running


@pytest.fixture(scope="session")
def notebook7(chromium_path: str, request: pytest.FixtureRequest) -> Lab:
    """The Lab server, seen as the server of the Notebook 7 UI; skips (before starting it) without Notebook 7."""
    reason = missing_stack(NOTEBOOK7_MODULES)
    if reason is not None:
        pytest.skip(reason)
    lab: Lab = request.getfixturevalue("lab")
    return lab


@pytest.fixture
def page(lab: Lab, chromium_path: str) -> Iterator[Any]:
    """A fresh Chromium page in a 1280×1000 window; tests save their screenshots under test-artifacts/browser/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_page(chromium_path) as page:
        yield page
