"""Helpers of the browser tests: where things are, whether the browser stack is there, waiting for Lab.

The Lab server also serves the Jupyter Notebook 7 UI (`/notebooks/<path>`) when
the `notebook` package is installed: Notebook 7 is an extension of the same
jupyter server, so one server session covers both front ends.

A module of its own (not conftest) so test modules can import it by a name no
other test folder uses.
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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = ROOT / "examples"
# What the fixture notebooks serve: notebooks, and a folder of skills beside a notebook with a skill.
SERVED_EXAMPLES = ("plot_prompt.ipynb", "code_review.ipynb", "few_shot.ipynb", "skill_notebook.ipynb")
SERVED_FOLDERS = ("skills",)
# Test servers the fixture notebooks start by file name (a FastMCP server with typed prompt arguments).
SERVED_SERVERS = (ROOT / "tests" / "servers" / "typed_fastmcp_server.py",)
ARTIFACTS = ROOT / "test-artifacts" / "browser"
SETUP_MARKER = ROOT / "test-artifacts" / "browser-setup.txt"
LAB_START_DEADLINE = 90.0
# What each Python module of the stack is installed as (a Notebook 6 would not serve the Notebook 7 UI).
LAB_MODULES = {"jupyterlab": "jupyterlab", "playwright": "playwright"}
NOTEBOOK7_MODULES = {**LAB_MODULES, "notebook": "'notebook>=7,<8'"}


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def missing_stack(modules: Mapping[str, str] = LAB_MODULES) -> str | None:
    """Why the browser stack is not usable here, or None when it is.

    `modules` maps each Python module the tests need to what pip installs it as.
    """
    missing = []
    if find_chromium() is None:
        missing.append("chromium (apt-get install chromium)")
    for module, requirement in modules.items():
        try:
            imported = __import__(module)
        except ImportError:
            missing.append(f"{module} (pip install {requirement})")
            continue
        version = str(getattr(imported, "__version__", ""))
        if module == "notebook" and not version.startswith("7."):
            missing.append(f"notebook 7 (pip install {requirement}; found notebook {version})")
    if not missing:
        return None
    why = f" The setup script said: {SETUP_MARKER.read_text().strip()}" if SETUP_MARKER.exists() else ""
    return f"browser stack not installed: {', '.join(missing)}; run .ci/browser-setup.sh.{why}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Lab:
    url: str
    root: Path
    log: Path


def wait_for_lab(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
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


@contextlib.contextmanager
def running_lab(base: Path, more_env: Mapping[str, str] | None = None, *, check_xsrf: bool = False) -> Iterator[Lab]:
    """JupyterLab serving the fixture notebooks and what they use (and nothing else), stopped on exit.

    Lab runs from `base` with its own Jupyter/IPython folders, on 127.0.0.1 at a
    free port, with no token (loopback only) and its app exposed to the page.
    `more_env` is added to its environment (e.g. `JUPYTER_PATH`). `check_xsrf`: Jupyter checks XSRF as it
    does by default (without a token too), instead of not at all.
    """
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))  # run as a script (the screenshots), not only under pytest
    from client_harness import stop_process
    from kernel_harness import jupyter_folders

    root = base / "notebooks"
    shutil.copytree(FIXTURES, root)
    for example in SERVED_EXAMPLES:
        shutil.copy(EXAMPLES / example, root / example)
    for folder in SERVED_FOLDERS:
        shutil.copytree(EXAMPLES / folder, root / folder)
    for server in SERVED_SERVERS:
        shutil.copy(server, root / server.name)
    lab_folders = (("JUPYTERLAB_SETTINGS_DIR", "settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"))
    env = {**os.environ, **jupyter_folders(base, lab_folders), **(more_env or {})}
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
        *([] if check_xsrf else ["--ServerApp.disable_check_xsrf=True"]),
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


@contextlib.contextmanager
def chromium_page(chromium_path: str, width: int = 1280, height: int = 1000) -> Iterator[Any]:
    """A fresh headless Chromium page, allowed to use the clipboard, closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            context.grant_permissions(["clipboard-read", "clipboard-write"])
            yield context.new_page()
        finally:
            browser.close()


def install_wheel(prefix: Path) -> Path:
    """Build mcp-notebook's wheel and install it under `prefix` as pip does (no Node involved): returns the wheel.

    Node is not on the PATH meanwhile. Its data files land in `prefix`: the prebuilt JupyterLab extension in
    share/jupyter/labextensions/mcp-notebook, the server extension's switch in
    etc/jupyter/jupyter_server_config.d. The Python code itself is the venv's.
    """
    wheels = prefix.parent / f"{prefix.name}-wheel"
    # Only the venv's programs on the PATH: building and installing must not need Node (or npm) to be there.
    no_node = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels)]
    subprocess.run([*build, str(ROOT)], check=True, capture_output=True, timeout=600, env=no_node)
    [wheel] = wheels.glob("mcp_notebook-*.whl")
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", "--prefix"]
    subprocess.run([*install, str(prefix), str(wheel)], check=True, capture_output=True, timeout=600, env=no_node)
    return wheel
