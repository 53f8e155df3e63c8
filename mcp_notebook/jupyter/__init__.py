"""The Jupyter Server extension: MCP prompts at `<base_url>mcp` on a Jupyter server, behind its login.

`app.MCPNotebook` is the extension (traitlets configuration, start and stop),
`host.NotebookHost` the MCP server it hosts (the folder source and the one
protocol core), `handler.MCPHandler` the Jupyter API handler in front of it,
and `bridge` runs the ASGI application inside tornado. Only the Jupyter
server imports this package: `import mcp_notebook` and `%load_ext` never do.
"""

from __future__ import annotations

__all__: list[str] = []
