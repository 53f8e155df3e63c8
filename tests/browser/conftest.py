"""A JupyterLab server and a headless Chromium page for the browser tests.

The stack comes from `.ci/browser-setup.sh` (Debian's chromium, JupyterLab and
Playwright in the venv; never `playwright install`). Without it the tests skip
and say what is missing. Lab runs from a temporary folder with its own
Jupyter/IPython directories, on 127.0.0.1 at a free port, and is stopped by
its own process id.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = ROOT / "examples"
SERVED_EXAMPLES = ("plot_prompt.ipynb",)  # the example notebooks the fixture notebooks serve
ARTIFACTS = ROOT / "test-artifacts" / "browser"
SETUP_MARKER = ROOT / "test-artifacts" / "browser-setup.txt"
LAB_START_DEADLINE = 90.0


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _missing() -> str | None:
    """Why the browser stack is not usable here, or None when it is."""
    missing = []
    if _chromium() is None:
        missing.append("chromium (apt-get install chromium)")
    for module in ("jupyterlab", "playwright"):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"{module} (pip install {module})")
    if not missing:
        return None
    why = f" The setup script said: {SETUP_MARKER.read_text().strip()}" if SETUP_MARKER.exists() else ""
    return f"browser stack not installed: {', '.join(missing)}; run .ci/browser-setup.sh.{why}"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    reason = _missing()
    if reason is not None:
        pytest.skip(reason)
    path = _chromium()
    assert path is not None
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Lab:
    url: str
    root: Path
    log: Path


def _wait_for_lab(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + LAB_START_DEADLINE
    tick = threading.Event()
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        with (
            contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError),
            urllib.request.urlopen(f"{url}/api/status", timeout=5) as answer,
        ):
            json.load(answer)
            return
        tick.wait(0.2)
    raise RuntimeError(f"JupyterLab did not answer within {LAB_START_DEADLINE:g} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def lab(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab serving a folder with the fixture notebooks and the examples they use (and nothing else)."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    shutil.copytree(FIXTURES, root)
    for example in SERVED_EXAMPLES:
        shutil.copy(EXAMPLES / example, root / example)
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("IPYTHONDIR", "ipython"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
    ):
        (base / sub).mkdir()
        env[var] = str(base / sub)
    # No "Would you like to get notified about Jupyter news?" toast over the page.
    news = base / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # The kernel starts `mcp-notebook` and `python` by name: the venv's must come first.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    port = _free_port()
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
        f"--ServerApp.root_dir={root}",
        "--allow-root",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    try:
        _wait_for_lab(url, process, log)
        yield Lab(url=url, root=root, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


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
