"""mcp-notebook: Jupyter as the home of LLM prompts.

Serve notebook cells and IPython magics as MCP prompts, and use any MCP
server's prompts from IPython (`%load_ext mcp_notebook`) or from Python
(`mcp_notebook.connect("docs").get("code_review", code=...)`).

Importing the package stays light: the IPython extension and `connect` load
their modules on first use.
"""

from __future__ import annotations

from .version import __version__

# Not `typing.TYPE_CHECKING`: `mcp-notebook --help` imports this package, and typing would make it slower.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .api import connect

__all__ = ["__version__", "connect", "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    # `mcp_notebook.connect` without importing the client machinery on `import mcp_notebook`.
    if name == "connect":
        from .api import connect

        return connect
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext mcp_notebook`: register `%mcp` and `%%prompt` (see `%mcp?`)."""
    from .ipython.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext mcp_notebook`: disconnect servers and remove everything loading added."""
    from .ipython.extension import unload

    unload(ipython)


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """The Jupyter Server extension (`jupyter server extension list`); imported only by the Jupyter server."""
    from .jupyter.app import MCPNotebook

    return [{"module": "mcp_notebook.jupyter.app", "app": MCPNotebook}]
