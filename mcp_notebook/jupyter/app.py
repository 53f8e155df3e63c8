"""The Jupyter Server extension: the notebooks under the server's root as MCP prompts at `<base_url>mcp`.

Enabled by the `jupyter_server_config.d/mcp_notebook.json` file installed with
the package; `jupyter server extension disable mcp_notebook` turns it off.
Configured as `c.MCPNotebook.<option>` in any Jupyter config file or on the
command line (`--MCPNotebook.root=prompts`).
"""

from __future__ import annotations

import os
import posixpath
import secrets
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from jupyter_server.services.contents.filemanager import FileContentsManager
from jupyter_server.utils import url_path_join
from traitlets import Bool, Float, Integer, TraitType, Unicode, default

from ..config import ServerConfig
from ..service import ServiceSettings
from ..settings import JUPYTER, Option, on, option, problem_in_trait
from ..version import __version__
from .handler import MCPHandler
from .host import NotebookHost
from .lab_api import LabState, lab_api_handlers
from .lab_api_catalog import LabCatalog

__all__ = ["MCPNotebook", "main", "mcp_url_of"]

ENDPOINT = "mcp"  # the endpoint's path below the server's base URL


def mcp_url_of(connection_url: str) -> str:
    """The MCP endpoint of a Jupyter server reached at `connection_url` (scheme, host, port, base URL)."""
    return url_path_join(connection_url, ENDPOINT)


def _trait(declared: Option) -> TraitType[Any, Any]:
    """The traitlet of a declared option: its type, default and help; checked when serving starts."""
    kinds: dict[str, type[TraitType[Any, Any]]] = {"int": Integer, "float": Float, "bool": Bool, "str": Unicode}
    about = declared.help[0].upper() + declared.help[1:]
    if declared.default is None and declared.unset:
        about += f". Default: {declared.unset}"
    trait = kinds[declared.kind.name](declared.default, allow_none=declared.default is None, help=about)
    return trait.tag(config=True)


class MCPNotebook(ExtensionApp):
    """Serve the prompts written in this server's notebooks to MCP clients (Claude Code, VS Code, Cursor, …)."""

    name = "mcp_notebook"
    description = __doc__
    version = __version__
    load_other_extensions = True
    _host: NotebookHost | None = None
    _lab: LabState | None = None
    _xsrf: str | None = None  # what this server's own prompt lists send as XSRF when it has no token

    # Every `c.MCPNotebook.<option>` is derived from the declaration in `mcp_notebook/settings.py`.
    root: str
    page_size: int
    server_name: str
    watch: bool
    poll: float | None
    cache: bool
    cache_dir: str | None
    for _option in on(JUPYTER):
        vars()[_option.trait] = _trait(_option)
    del _option

    @default("open_browser")
    def _default_open_browser(self) -> bool:
        return False  # `jupyter mcp-notebook` serves MCP clients, not a browser

    def _served_folder(self) -> Path:
        """The folder to serve, or ValueError saying why there is none.

        Checked here rather than by a traitlets validator: a rejected value would
        leave the default in place, serving the whole root instead of nothing.
        """
        for declared in on(JUPYTER):
            if (problem := problem_in_trait(declared.name, getattr(self, declared.trait))) is not None:
                raise ValueError(problem)
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

    def _service_settings(self) -> ServiceSettings:
        """What the host serves: the folder, and every declared option from its trait."""
        folder = self._served_folder()
        values = {name: getattr(self, option(name).trait) for name in ServiceSettings.names() if name != "paths"}
        return ServiceSettings(paths=(str(folder),), **values)

    def initialize_handlers(self) -> None:
        host: NotebookHost | None = None
        problem: str | None = None
        try:
            host = NotebookHost(self._service_settings())
        except ValueError as error:
            problem = str(error)
            self.log.error("MCP prompts are not served: %s", problem)
        self._host = host
        self.handlers.append((f"/{ENDPOINT}", MCPHandler, {"host": host, "problem": problem}))
        # JupyterLab's API: the prompts of this server, the user's MCP servers and the kernels.
        self._lab = LabState(host, problem, self._server_root())
        self.handlers.extend(lab_api_handlers(self._lab))

    def _server_root(self) -> Path:
        assert self.serverapp is not None
        root = getattr(self.serverapp.contents_manager, "root_dir", None) or self.serverapp.root_dir
        return Path(os.path.abspath(Path(root).expanduser()))

    def _own_endpoint(self) -> ServerConfig | None:
        """This server's MCP endpoint as an MCP client reaches it, with a credential the server accepts."""
        if self._host is None or self.serverapp is None:
            return None
        token = getattr(self.serverapp.identity_provider, "token", "") or os.environ.get("JUPYTERHUB_API_TOKEN", "")
        if token:
            headers = {"Authorization": f"token {token}"}
        else:
            # Without a token Jupyter still checks XSRF on a POST: send what a browser sends, the `_xsrf` cookie
            # and the same value in the X-XSRFToken header (one value for the server's lifetime, so the
            # configuration stays the same and the connection is kept).
            if self._xsrf is None:
                self._xsrf = secrets.token_hex(16)
            cookie = self.serverapp.web_app.settings.get("xsrf_cookie_name", "_xsrf")
            headers = {"Cookie": f"{cookie}={self._xsrf}", "X-XSRFToken": self._xsrf}
        url = mcp_url_of(self.serverapp.connection_url)
        return ServerConfig(name="jupyter", url=url, headers=headers, source=f"this Jupyter server ({url})")

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        if self._host is not None:
            self._host.start(self._on_ready)
        if self._lab is not None:
            lab = self._lab
            catalog = LabCatalog(root=lab.server_root, host=self._own_endpoint, host_problem=lab.host_problem)
            await catalog.start()
            lab.catalog = catalog

    def _on_ready(self, host: NotebookHost) -> None:
        assert self.serverapp is not None
        # Under JupyterHub the server's own address is internal; the hub says where users reach it, when it knows.
        url = mcp_url_of(os.environ.get("JUPYTERHUB_PUBLIC_URL") or self.serverapp.connection_url)
        from ..sources.start_report import StartSummary

        summary = host.service.summary or StartSummary(host.summary())
        self.log.info("%s; MCP prompts served at %s", summary.head, url)
        if summary.skills_line is not None:
            self.log.info("%s", summary.skills_line)
        for warning in summary.warnings:
            self.log.warning("%s", warning)
        self.log.info("MCP client configuration: mcp-notebook config --jupyter %s", url)

    async def stop_extension(self) -> None:
        if self._lab is not None and self._lab.catalog is not None:
            await self._lab.catalog.aclose()
        if self._host is not None:
            await self._host.stop()


def main() -> None:
    """`jupyter mcp-notebook`: a Jupyter server started for its MCP endpoint (`--help-all` lists every option)."""
    MCPNotebook.launch_instance()  # type: ignore[no-untyped-call]
