"""The Jupyter Server extension: the notebooks under the server's root as MCP prompts at `<base_url>mcp`.

Enabled by the `jupyter_server_config.d/mcp_notebook.json` file installed with
the package; `jupyter server extension disable mcp_notebook` turns it off.
Configured as `c.MCPNotebook.<option>` in any Jupyter config file or on the
command line (`--MCPNotebook.root=prompts`).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from jupyter_server.services.contents.filemanager import FileContentsManager
from jupyter_server.utils import url_path_join
from traitlets import Bool, Float, Integer, Unicode, default

from .. import __version__
from .handler import MCPHandler
from .host import NotebookHost

__all__ = ["MCPNotebook", "main", "mcp_url_of"]

ENDPOINT = "mcp"  # the endpoint's path below the server's base URL


def mcp_url_of(connection_url: str) -> str:
    """The MCP endpoint of a Jupyter server reached at `connection_url` (scheme, host, port, base URL)."""
    return url_path_join(connection_url, ENDPOINT)


class MCPNotebook(ExtensionApp):
    """Serve the prompts written in this server's notebooks to MCP clients (Claude Code, VS Code, Cursor, …)."""

    name = "mcp_notebook"
    description = __doc__
    version = __version__
    load_other_extensions = True
    _host: NotebookHost | None = None

    root = Unicode(
        "",
        help="""Folder whose notebooks are served as prompts, relative to the server's root directory
        (ContentsManager.root_dir), searched recursively; hidden folders are skipped.
        Default: the whole root. Example: --MCPNotebook.root=prompts""",
    ).tag(config=True)

    page_size = Integer(500, help="Prompts (and resources) per prompts/list page.").tag(config=True)

    server_name = Unicode("mcp-notebook", help="The server name MCP clients show for these prompts.").tag(config=True)

    watch = Bool(
        True, help="Reload a notebook when it is saved and tell connected clients (notifications/list_changed)."
    ).tag(config=True)

    poll = Float(
        0.0,
        help="""Seconds between looks for saved notebooks, instead of asking the kernel (inotify).
        0: only where the kernel cannot tell (network file systems such as NFS, CIFS, FUSE), every 2 s.""",
    ).tag(config=True)

    language_server = Bool(
        True,
        help="""Offer JupyterLab (through jupyter-lsp and jupyterlab-lsp) the prompts as / commands in Markdown
        cells and files. False: jupyter-lsp does not list the mcp-notebook language server.""",
    ).tag(config=True)

    @default("open_browser")
    def _default_open_browser(self) -> bool:
        return False  # `jupyter mcp-notebook` serves MCP clients, not a browser

    def _served_folder(self) -> Path:
        """The folder to serve, or ValueError saying why there is none.

        Checked here rather than by a traitlets validator: a rejected value would
        leave the default in place, serving the whole root instead of nothing.
        """
        if self.page_size < 1:
            raise ValueError(f"MCPNotebook.page_size must be at least 1, not {self.page_size}")
        if self.poll < 0:
            raise ValueError(f"MCPNotebook.poll must be 0 (only where needed) or more seconds, not {self.poll}")
        relative = self.root.replace(os.sep, "/").strip("/")
        if posixpath.isabs(self.root) or ".." in relative.split("/"):
            raise ValueError(f"MCPNotebook.root must be a folder inside the server's root directory, not {self.root!r}")
        assert self.serverapp is not None
        manager = self.serverapp.contents_manager
        if not isinstance(manager, FileContentsManager):
            raise ValueError(
                f"the contents manager {type(manager).__module__}.{type(manager).__name__} does not keep notebooks "
                "in files; MCP prompts need a file-backed root (the default FileContentsManager, or a subclass)"
            )
        # Not resolved: a symlink on the way (git-sync's `current`) is followed when it is swapped.
        folder = Path(os.path.abspath(Path(manager.root_dir).expanduser())) / relative
        if not folder.is_dir():
            raise ValueError(f"MCPNotebook.root names no folder: {folder} does not exist")
        return folder

    def initialize_handlers(self) -> None:
        host: NotebookHost | None = None
        problem: str | None = None
        try:
            host = NotebookHost(
                self._served_folder(),
                page_size=self.page_size,
                name=self.server_name,
                watch=self.watch,
                poll=self.poll or None,
            )
        except ValueError as error:
            problem = str(error)
            self.log.error("MCP prompts are not served: %s", problem)
        self._host = host
        self.handlers.append((f"/{ENDPOINT}", MCPHandler, {"host": host, "problem": problem}))

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        if self._host is not None:
            self._host.start(self._on_ready)

    def _on_ready(self, host: NotebookHost) -> None:
        assert self.serverapp is not None
        # Under JupyterHub the server's own address is internal; the hub says where users reach it, when it knows.
        url = mcp_url_of(os.environ.get("JUPYTERHUB_PUBLIC_URL") or self.serverapp.connection_url)
        self.log.info("%s; MCP prompts served at %s", host.summary(), url)
        self.log.info("MCP client configuration: mcp-notebook config --jupyter %s", url)

    async def stop_extension(self) -> None:
        if self._host is not None:
            await self._host.stop()


def main() -> None:
    """`jupyter mcp-notebook`: a Jupyter server started for its MCP endpoint (`--help-all` lists every option)."""
    MCPNotebook.launch_instance()  # type: ignore[no-untyped-call]
