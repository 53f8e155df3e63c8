"""The language server jupyter-lsp offers JupyterLab: the editor bridge, for Markdown and plain text.

jupyter-lsp (the server half of jupyterlab-lsp) finds it through the
`jupyter_lsp_spec_v1` entry point this package declares, so installing
mcp-notebook next to jupyter-lsp is all it takes: `GET <base_url>lsp/status`
lists `mcp-notebook`, and JupyterLab starts the bridge the first time a
Markdown cell, a `.md` or a `.txt` file asks for a language server.

The bridge learns which Jupyter server it runs under from the server's own
info file (`jpserver-<pid>.json`, owner-only, in the runtime directory), whose
path it gets in its environment: it reads the URL and the token there, so no
secret is written into the spec (jupyter-lsp logs specs at debug level). It
then serves the prompts of `<base_url>mcp`, of the user's configured MCP
servers, and of the kernels that serve theirs. A project MCP configuration
in the root starts nothing until the user trusts it (JupyterLab shows the
bridge's question as a dialog).

Off when the `mcp_notebook` server extension is disabled, or with
`c.MCPNotebook.language_server = False`. Called by jupyter-lsp in a worker
thread while the server starts: it only reads configuration, never imports
the bridge.
"""

from __future__ import annotations

import sys
from typing import Any

from traitlets import Bool
from traitlets.config.loader import DeferredConfig

__all__ = ["CLIENT_ENV", "COMPLETION_DEADLINE_ENV", "INFO_FILE_ENV", "LANGUAGES", "SERVER_KEY", "language_server_spec"]

SERVER_KEY = "mcp-notebook"
# The language ids JupyterLab gives Markdown cells ("markdown"), Markdown files (their CodeMirror modes) and
# plain text (raw cells are "text"). Code cells are the kernel's language: never one of these.
LANGUAGES = ("markdown", "ipythongfm", "gfm", "plaintext", "text")
MIME_TYPES = ("text/markdown", "text/x-markdown", "text/x-gfm", "text/x-ipythongfm", "text/plain")
# Read by lsp_bridge.jupyter_host: where the Jupyter server's info file is, and how long a completion may wait.
INFO_FILE_ENV = "MCP_NOTEBOOK_JUPYTER_SERVER_INFO"
COMPLETION_DEADLINE_ENV = "MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE"
COMPLETION_DEADLINE = "0.2"  # seconds: the rule of Tab on %mcp lines
# Read by lsp_bridge.jupyter_host too: the editor is JupyterLab, whose completer takes items of its own shape.
CLIENT_ENV = "MCP_NOTEBOOK_LSP_CLIENT"
_EXTENSION = "mcp_notebook"
_SPEC_VERSION = 2  # jupyter_lsp.schema.SPEC_VERSION


def _enabled(serverapp: Any) -> bool:
    """False when the server extension is disabled, or `MCPNotebook.language_server` is False."""
    extensions = getattr(getattr(serverapp, "extension_manager", None), "extensions", None)
    if isinstance(extensions, dict):
        package = extensions.get(_EXTENSION)
        if package is None or not getattr(package, "enabled", True):
            return False
    config = getattr(serverapp, "config", None)
    section = config.get("MCPNotebook") if config is not None else None
    if section is None or "language_server" not in section:
        return True
    value = section["language_server"]
    if isinstance(value, DeferredConfig):  # from the command line: still text until a trait reads it
        value = value.get_value(Bool())
    return bool(value)


def language_server_spec(manager: Any) -> dict[str, dict[str, Any]]:
    """The spec jupyter-lsp starts (`manager` is its LanguageServerManager, child of the ServerApp)."""
    serverapp = getattr(manager, "parent", None)
    if not _enabled(serverapp):
        return {}
    env = {"PYTHONUNBUFFERED": "1", COMPLETION_DEADLINE_ENV: COMPLETION_DEADLINE, CLIENT_ENV: "jupyterlab"}
    # -P: the working folder (the Jupyter root, whatever it holds) never comes first on the import path, so an
    # `lsp_bridge.py` or `mcp_notebook/` there cannot stand in for the bridge.
    argv = [sys.executable, "-P", "-m", "lsp_bridge", "--file-types", ",".join(LANGUAGES)]
    info_file = getattr(serverapp, "info_file", None)
    if isinstance(info_file, str) and info_file:
        env[INFO_FILE_ENV] = info_file
    runtime_dir = getattr(serverapp, "runtime_dir", None)
    if isinstance(runtime_dir, str) and runtime_dir:
        argv += ["--runtime-dir", runtime_dir]  # the kernels this server started leave their files there
    return {
        SERVER_KEY: {
            "argv": argv,
            "languages": list(LANGUAGES),
            "mime_types": list(MIME_TYPES),
            "version": _SPEC_VERSION,
            "display_name": "mcp-notebook (MCP prompts as / commands)",
            "env": env,
            # The bridge reads documents as the editor sends them: nothing needs writing to disk.
            "requires_documents_on_disk": False,
            "install": {"pip": "pip install 'mcp-notebook[jupyterlab]'"},
        }
    }
