"""The bridge as JupyterLab starts it (through jupyter-lsp): the Jupyter server it runs under, and quick answers.

jupyter-lsp starts the bridge with two variables in its environment (set by
`mcp_notebook.jupyter.lsp_spec`):

* `MCP_NOTEBOOK_JUPYTER_SERVER_INFO`: the path of the Jupyter server's info
  file (`jpserver-<pid>.json`). Its URL and token name the server's own MCP
  endpoint, `<base_url>mcp`, which joins the configured servers as `jupyter`
  (ranked with them, before a kernel's magics).
* `MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE`: seconds an argument-value completion
  may wait for a server (0.2, as Tab on `%mcp` lines). A slower answer is not
  lost: it keeps coming in the background and answers the next request for
  the same value, while this one gets an empty, incomplete list (asked again
  as the user types).
* `MCP_NOTEBOOK_LSP_CLIENT=jupyterlab`: the editor is JupyterLab, whose
  completer needs completion items of its own shape (completion.py).

Without them (an editor started the bridge) nothing here changes anything.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from mcp_notebook.catalog.pool import PromptCatalog, QuickCompletions
from mcp_notebook.config import ServerConfig

__all__ = [
    "CLIENT_ENV",
    "COMPLETION_DEADLINE_ENV",
    "HOST_SERVER_NAME",
    "INFO_FILE_ENV",
    "completion_deadline",
    "host_server_config",
    "started_by_jupyterlab",
    "with_completion_deadline",
    "with_host_server",
]

log = logging.getLogger(__name__)

INFO_FILE_ENV = "MCP_NOTEBOOK_JUPYTER_SERVER_INFO"
COMPLETION_DEADLINE_ENV = "MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE"
CLIENT_ENV = "MCP_NOTEBOOK_LSP_CLIENT"
HOST_SERVER_NAME = "jupyter"
ENDPOINT = "mcp"


def host_server_config(environ: Mapping[str, str] | None = None) -> ServerConfig | None:
    """The MCP endpoint of the Jupyter server named by `$MCP_NOTEBOOK_JUPYTER_SERVER_INFO`, or None.

    A missing or unreadable info file is logged and ignored: the user's own
    servers and the kernels are still offered.
    """
    path = (os.environ if environ is None else environ).get(INFO_FILE_ENV)
    if not path:
        return None
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
        url = info["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url {url!r} is not an http(s) URL")
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("the Jupyter server's info file %s cannot be read (%s): its notebooks are not offered", path, error)
        return None
    token = info.get("token")
    headers = {"Authorization": f"token {token}"} if isinstance(token, str) and token else None
    return ServerConfig(
        name=HOST_SERVER_NAME, url=url.rstrip("/") + "/" + ENDPOINT, headers=headers, source=f"the Jupyter server {url}"
    )


def with_host_server(
    configs: Mapping[str, ServerConfig], environ: Mapping[str, str] | None = None
) -> dict[str, ServerConfig]:
    """`configs` and, under a Jupyter server, its endpoint as `jupyter` (`jupyter_` when a configured one has it)."""
    found = dict(configs)
    host = host_server_config(environ)
    if host is not None:
        name = HOST_SERVER_NAME
        while name in found:
            name += "_"
        found[name] = ServerConfig(name=name, url=host.url, headers=host.headers, source=host.source)
    return found


def started_by_jupyterlab(environ: Mapping[str, str] | None = None) -> bool:
    """True when `$MCP_NOTEBOOK_LSP_CLIENT` says the editor is JupyterLab (jupyter-lsp's spec sets it)."""
    return (os.environ if environ is None else environ).get(CLIENT_ENV, "").strip().lower() == "jupyterlab"


def completion_deadline(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds from `$MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE`, or None (unset or not a positive number)."""
    text = (os.environ if environ is None else environ).get(COMPLETION_DEADLINE_ENV, "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < 3600:
        log.warning("%s=%r is not a number of seconds; completions wait as usual", COMPLETION_DEADLINE_ENV, text)
        return None
    return seconds


def with_completion_deadline(catalog: PromptCatalog, environ: Mapping[str, str] | None = None) -> PromptCatalog:
    """`catalog` behind `QuickCompletions` when `$MCP_NOTEBOOK_LSP_COMPLETION_DEADLINE` says so; else itself."""
    deadline = completion_deadline(environ)
    return catalog if deadline is None else QuickCompletions(catalog, deadline)
