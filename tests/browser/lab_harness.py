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
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = ROOT / "examples"
SERVED_EXAMPLES = ("plot_prompt.ipynb", "code_review.ipynb")  # the example notebooks the fixture notebooks serve
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
