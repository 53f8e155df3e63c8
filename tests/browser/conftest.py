"""Fixtures of the browser tests: a JupyterLab server and a headless Chromium page.

The stack comes from `.ci/browser-setup.sh` (Debian's chromium, JupyterLab,
Notebook 7 and Playwright in the venv; never `playwright install`). Without it
the tests skip and say what is missing. Lab runs from a temporary folder with
its own Jupyter/IPython directories, on 127.0.0.1 at a free port, and is
stopped by its own process id. The same server serves the Notebook 7 UI when
the `notebook` package is there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from client_harness import stop_process
from kernel_harness import jupyter_folders
from lab_harness import (
    ARTIFACTS,
    EXAMPLES,
    FIXTURES,
    NOTEBOOK7_MODULES,
    SERVED_EXAMPLES,
    Lab,
    find_chromium,
    free_port,
    missing_stack,
    wait_for_lab,
)


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
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(FIXTURES, root)
    for example in SERVED_EXAMPLES:
        shutil.copy(EXAMPLES / example, root / example)
    lab_folders = (("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"))
    env = {**os.environ, **jupyter_folders(base, lab_folders)}
    # No "Would you like to get notified about Jupyter news?" toast over the page.
    news = base / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # The kernel starts `mcp-notebook` and `python` by name: the venv's must come first.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = base / "lab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.expose_app_in_browser=True",
        # The Notebook 7 UI is another application of the same server: it exposes its app on its own setting.
        "--JupyterNotebookApp.expose_app_in_browser=True",
        f"--ServerApp.root_dir={root}",
        "--allow-root",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        wait_for_lab(url, process, log)
        yield Lab(url=url, root=root, log=log)
    finally:
        stop_process(process, timeout=30)


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
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 1000})
        finally:
            browser.close()
